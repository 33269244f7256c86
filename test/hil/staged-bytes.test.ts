// The simulator's link bytes, step by step, equal what the lowered HIL plan copies where a policy changes
// blocks after staging them: SmartKV's reallocation (every 16 tokens) requantizes DRAM blocks its layer
// staged for the attention, so the executor reads them anew, and so does the replay driver.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordAndLower } from '../../hil/executor/hil-run.js';
import { simulate } from '../../sim/run.js';
import { generateTrace } from '../../traces/generator.js';

describe('link bytes of blocks changed after their stage, against the lowered plan', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kvtier-staged-bytes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // Llama-3-8B, 4k prompt, 17 decode steps: SmartKV reallocates at step 15
  const trace = join(dir, 'broad-4k.kvt');
  generateTrace(trace, { model: 'llama-3-8b', layers: 32, prompt_tokens: 4096, steps: 17, seed: 167, preset: 'broad' });

  it('SmartKV at 40%: every step, every link', () => {
    const cfg = { trace, policy: 'smartkv', hardware: 'h100-pcie5', hbm_budget: '40%', group_size: 128 };
    const { lowered, keys } = recordAndLower(cfg, { backend: 'cuda' });
    const sim = simulate(cfg);
    const rows = sim.steps as unknown as Record<string, number>[];
    let refetched = 0;
    lowered.steps.forEach((s, i) => {
      for (const k of keys) expect(rows[i][`bytes.${k}`] ?? 0, `step ${i} ${k}`).toBe(s.bytes[k] ?? 0);
      refetched += s.memSpans.filter((m) => m[2].startsWith('fetch ')).length;
    });
    // the reallocation step reads some staged blocks anew (the case this checks)
    expect(refetched).toBeGreaterThan(0);
    expect(lowered.steps[15].bytes['pcie:dram->hbm']).toBeGreaterThan(lowered.steps[14].bytes['pcie:dram->hbm']);
  });
});
