import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeRunDir } from '../../sim/run-dir.js';
import { simulate, type RunConfig } from '../../sim/run.js';
import { TraceWriter } from '../../traces/trace-writer.js';
import { generateTrace } from '../../traces/generator.js';
import { denseSteps, tinyHeader } from '../helpers/tiny.js';

const dir = mkdtempSync(join(tmpdir(), 'kvtier-e2e-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const HW = 'test/fixtures/tiny-hardware.json';
const MODEL = 'test/fixtures/tiny-model.json';

function tinyTrace(name: string): string {
  const path = join(dir, name);
  const h = tinyHeader(8, 2);
  const w = new TraceWriter(path, { ...h, model: 'tiny' });
  for (const s of denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n))) w.writeStep(s);
  w.close();
  return path;
}

describe('kvtier run end to end', () => {
  it('matches the hand-checked summary (StreamingLLM on the tiny machine)', () => {
    const trace = tinyTrace('golden.kvt');
    const r = simulate({ trace, policy: 'streaming-llm', model: MODEL, hardware: HW, hbm_budget: '256' });
    // Hand check. Blocks are 4 tokens x 8 values x 2 B = 64 B; 256 B of budget = 2 blocks per layer.
    // Prefill: 8 tokens = blocks 0, 1 in both layers. Step 0 (context 9) needs block 2: StreamingLLM
    // keeps the sink block 0 and drops block 1 (one eviction per layer). Attention then reads blocks
    // 0 and 2 = 128 B at 1 B/us = 128 us, the projections 1000 B = 1000 us: 1128 us per layer,
    // 2256 us per step, both steps. Recall: 2 of 3 equal masses = 2/3. Nothing moves over PCIe.
    const s = r.summary;
    expect(s.steps).toBe(2);
    expect(s.tbt_ms).toEqual({ p50: 2.256, p90: 2.256, p99: 2.256, mean: 2.256, max: 2.256 });
    expect(s.tokens_per_s).toBeCloseTo(2 / 0.004512, 6);
    expect(s.stall_ms).toBe(0);
    expect(s.transfer_ms).toBe(0);
    expect(s.masking_efficiency).toBe(1);
    expect(s.attention_recall.mean).toBeCloseTo(2 / 3, 6);
    expect(s.attention_recall.min).toBeCloseTo(2 / 3, 6);
    expect(s.bytes).toEqual({ 'pcie:hbm->dram': 0, 'pcie:dram->hbm': 0 });
    expect(s.actions).toEqual({ evict: 2 });
    expect(s.refused_actions).toEqual({});
    expect(s.hbm_budget_bytes).toBe(256);
    expect(s.hbm_budget_fraction).toBeCloseTo(256 / 384, 9);
    expect(s.peak_occupancy_bytes).toEqual({ hbm: 256, dram: 0 });
    expect(r.steps.map((x) => [x.step, x.context_tokens, x.latency_ms, x.recall])).toEqual([
      [0, 9, 2.256, expect.closeTo(2 / 3, 6)],
      [1, 10, 2.256, expect.closeTo(2 / 3, 6)],
    ]);
  });

  it('writes the run directory: resolved config, per-step table, summary, Chrome trace', () => {
    const trace = tinyTrace('files.kvt');
    const out = join(dir, 'run-files');
    writeRunDir(out, simulate({ trace, policy: 'h2o', model: MODEL, hardware: HW, hbm_budget: '256' }));
    expect(fs.readdirSync(out).sort()).toEqual(['config.json', 'steps.arrow', 'steps.csv', 'summary.json', 'trace.json']);
    const chrome = JSON.parse(fs.readFileSync(join(out, 'trace.json'), 'utf8'));
    const names = chrome.traceEvents.filter((e: { ph: string }) => e.ph === 'X').map((e: { name: string; ts: number }) => `${e.name}@${e.ts}`);
    expect(names.slice(0, 4)).toEqual(['attention@0', 'linear@128', 'attention@1128', 'linear@1256']);
    const csv = fs.readFileSync(join(out, 'steps.csv'), 'utf8').trim().split('\n');
    expect(csv).toHaveLength(3);
    expect(csv[0].split(',').slice(0, 3)).toEqual(['step', 'context_tokens', 'latency_ms']);
    const cfg = JSON.parse(fs.readFileSync(join(out, 'config.json'), 'utf8'));
    expect(cfg.policy_options).toEqual({ heavy_ratio: 0.5, sink_tokens: 4 });
    expect(cfg.hbm_budget_blocks_per_layer).toBe(2);
  });

  it('is deterministic: two runs write byte-identical directories', () => {
    const trace = join(dir, 'gen.kvt');
    generateTrace(trace, { prompt_tokens: 1024, steps: 24, seed: 7 });
    const cfg: RunConfig = { trace, policy: 'lru-offload', hardware: 'h100-pcie5', hbm_budget: '15%' };
    const a = join(dir, 'det-a');
    const b = join(dir, 'det-b');
    writeRunDir(a, simulate(cfg));
    writeRunDir(b, simulate(cfg));
    for (const f of fs.readdirSync(a)) expect(fs.readFileSync(join(b, f)).equals(fs.readFileSync(join(a, f)))).toBe(true);
    const s = JSON.parse(fs.readFileSync(join(a, 'summary.json'), 'utf8'));
    expect(s.bytes_total).toBeGreaterThan(0);
    expect(s.attention_recall.min).toBe(1); // offloading loses nothing
  });

  it('refuses bad input with an error naming the field or the valid choices, and writes nothing', () => {
    const trace = tinyTrace('bad.kvt');
    const base: RunConfig = { trace, policy: 'h2o', model: MODEL, hardware: HW, hbm_budget: '50%' };
    expect(() => simulate({ ...base, policy: 'nope' })).toThrow(/unknown policy "nope" \(valid: .*h2o/);
    expect(() => simulate({ ...base, model: 'gpt-9' })).toThrow(/model "gpt-9" is neither a preset nor a file.*llama-3-8b/);
    expect(() => simulate({ ...base, hardware: 'tpu' })).toThrow(/hardware "tpu" is neither a preset nor a file.*h100-pcie5/);
    expect(() => simulate({ ...base, hbm_budget: 'lots' })).toThrow(/--hbm-budget: cannot read "lots"/);
    expect(() => simulate({ ...base, hbm_budget: '2GiB' })).toThrow(/does not fit in tiny's HBM/);
    expect(() => simulate({ ...base, policy_options: { heavy_ratio: 2 } })).toThrow(/option heavy_ratio must be <= 1/);
    expect(() => simulate({ ...base, policy_options: { window: 3 } })).toThrow(/unknown option "window" \(options: heavy_ratio, sink_tokens\)/);
    expect(() => simulate({ ...base, model: 'llama-3-8b' })).toThrow(/the trace has 2 layers but model llama-3-8b has 32/);
    expect(() => simulate({ ...base, policy: 'lru-offload', policy_options: { offload_tier: 'hbm' } })).toThrow('policy lru-offload: option offload_tier must be one of dram (got "hbm")');
    // a truncated trace: the run fails and no run directory appears
    const cut = join(dir, 'cut.kvt');
    const bytes = fs.readFileSync(trace);
    fs.writeFileSync(cut, bytes.subarray(0, bytes.length - 20));
    const out = join(dir, 'never');
    expect(() => writeRunDir(out, simulate({ ...base, trace: cut }))).toThrow(/cut\.kvt/);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('never overwrites an existing run directory unless forced', () => {
    const trace = tinyTrace('keep.kvt');
    const out = join(dir, 'keep');
    fs.mkdirSync(out);
    fs.writeFileSync(join(out, 'mine.txt'), 'precious');
    const r = simulate({ trace, policy: 'h2o', model: MODEL, hardware: HW, hbm_budget: '256' });
    expect(() => writeRunDir(out, r)).toThrow(/already exists; pass --force/);
    expect(fs.readFileSync(join(out, 'mine.txt'), 'utf8')).toBe('precious');
    writeRunDir(out, r, true);
    expect(fs.existsSync(join(out, 'summary.json'))).toBe(true);
  });
});
