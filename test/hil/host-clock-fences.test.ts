// The simulator's host clock charges a record for every event the HIL executor records or waits on in
// a step (timing marks, fences, stream waits, the step's barrier): with only records costing the host
// (1 ms each, file requests next to free) a step is host-bound and lasts as many milliseconds as it has records, which must equal
// the lowered plan's marks, fence records and waits, step by step (after the first, which also places
// the prompt). Plans lowered as a cuda run lowers them (recordAndLower).
import { describe, expect, it } from 'vitest';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { simulate } from '../../sim/run.js';
import { recordAndLower } from '../../hil/executor/hil-run.js';
import { generateTrace } from '../../traces/generator.js';
import { blocksFor } from '../../traces/format.js';
import { openTrace } from '../../traces/trace-reader.js';
import { TraceWriter } from '../../traces/trace-writer.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CAPTURED_TRACE = 'traces/captured/brown-long-8k.kvt';
const CAPTURED_MODEL = 'traces/captured/kvtier-brown-gpt.model.json';
/** decode steps replayed: the compared ones (1 to 5) and the first */
const STEPS = 6;

/**
 * The first STEPS decode steps of the captured trace, written to dir, with the budgets of the whole
 * trace: a share of the whole trace's final-context KV becomes the share of this one's that is as
 * many bytes.
 */
function capturedHead(dir: string): { config: Record<string, unknown>; budget: (share: string) => number } {
  const r = openTrace(CAPTURED_TRACE);
  const path = join(dir, 'captured-head.kvt');
  try {
    const h = r.header;
    const w = new TraceWriter(path, { ...h, steps: STEPS });
    for (const s of r) {
      if (s.step >= STEPS) break;
      w.writeStep(s);
    }
    w.close();
    const whole = blocksFor(h.prompt_tokens + h.steps, h.block_size);
    const head = blocksFor(h.prompt_tokens + STEPS, h.block_size);
    return { config: { trace: path, model: CAPTURED_MODEL, group_size: 64 }, budget: (share) => ((parseFloat(share) / 100) * whole) / head };
  } finally {
    r.close();
  }
}

describe('host clock records against the lowered plan', () => {
  it('as many as the HIL marks, records and waits, step by step', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvtier-fences-'));
    try {
      const hw = loadHardware('h100-pcie5');
      Object.assign(hw.gpu, { issue_record_us: 1000, issue_copy_us: 0, issue_kernel_us: 0, issue_attention_us: 0 });
      // file requests next to free: the host's joins of storage reads add no time of their own
      for (const l of hw.links) if (l.name !== 'pcie') for (const d of [l.a_to_b, l.b_to_a]) Object.assign(d, { alpha_us: 0, GBps: 1e9 });
      for (const t of hw.tiers.slice(2)) Object.assign(t, { read_latency_us: 0, write_latency_us: 0, read_GBps: 1e9, write_GBps: 1e9 });
      const file = join(dir, 'hw.json');
      writeFileSync(file, JSON.stringify(hw));
      const gen = join(dir, 'g.kvt');
      generateTrace(gen, { preset: 'broad', prompt_tokens: 4096, steps: 6, seed: 'fences' });
      const captured = capturedHead(dir);
      const cases: [Record<string, unknown>, string, string | number][] = [
        [captured.config, 'lru-offload', captured.budget('10%')],
        [captured.config, 'lru-offload', captured.budget('30%')],
        [captured.config, 'kivi', captured.budget('10%')],
        [captured.config, 'quest', captured.budget('20%')],
        [captured.config, 'h2o', captured.budget('10%')],
        [{ trace: gen }, 'kivi', '10%'],
        [{ trace: gen }, 'smartkv', '10%'],
        [{ trace: gen }, 'uniform-int8', '10%'],
        [{ trace: gen }, 'infinigen', '20%'],
        [{ trace: gen }, 'synapsevm', '20%'],
      ];
      for (const [base, policy, budget] of cases) {
        const config = { ...base, policy, hardware: file, hbm_budget: budget } as Parameters<typeof simulate>[0];
        const sim = simulate(config).steps.slice(1, 6).map((s) => Math.round(s.latency_ms));
        const { lowered } = recordAndLower(config, { backend: 'cuda' });
        const hil = lowered.steps.slice(1, 6).map((s) => s.ops.filter((o) => o.o === 'mark' || o.o === 'record' || o.o === 'wait').length);
        expect([policy, budget, String(base.trace).split('/').pop(), sim]).toEqual([policy, budget, String(base.trace).split('/').pop(), hil]);
        // (fence records and waits beside the marks)
        if (policy !== 'h2o') expect(lowered.steps[1].ops.some((o) => o.o === 'wait')).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
