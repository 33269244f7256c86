import { describe, expect, it } from 'vitest';
import type { Actions, PolicyDefinition, PolicyView } from '../../policies/policy.js';
import { defaultErrorTable } from '../../sim/quality/error-table.js';
import { needleOf } from '../../sim/quality/needle.js';
import { simulate } from '../../sim/run.js';
import { replayPolicy } from '../policies/harness.js';

// prompt 16 tokens (blocks 0..3); needle at depth 0.5 -> token floor(0.5 * 15) = 7 -> block 1;
// retrieval layer 1, active at steps 1..2
const needleHeader = (h: any) => ({ ...h, provenance: { source: 'test', params: { needle: { depth: 0.5, from_step: 1, steps: 2, layers: [1], mass: 0.6 } } } });

const scripted = (fn: (v: PolicyView, a: Actions) => void): PolicyDefinition => ({
  name: 'scripted',
  description: '',
  source: '',
  options: [],
  create: () => ({ name: 'scripted', decide: fn, observe: () => undefined }),
});

describe('quality measures', () => {
  it('finds the needle block from the provenance', () => {
    expect(needleOf(needleHeader({ prompt_tokens: 16, block_size: 4, layers: 2 }))).toEqual({ block: 1, layers: [1], fromStep: 1, steps: 2 });
    expect(needleOf({ prompt_tokens: 16, block_size: 4, layers: 2, provenance: {} } as never)).toBeNull();
  });

  it('needle degraded at step 1 (4 bits), unavailable from step 2 (evicted); quant error is mass-weighted', () => {
    const pol = scripted((v, a) => {
      if (v.step === 1 && v.layer === 1) a.demote(1, 1, 'hbm', 4);
      if (v.step === 2 && v.layer === 1) a.evict(1, 1);
    });
    const r = replayPolicy(pol, 10, { prompt: 16, steps: 4, layers: 2, header: needleHeader });
    // uniform masses 1/5 over 5 blocks: step 1 layer 1 has one 4-bit block
    const e4 = defaultErrorTable().relError(4, 128, false);
    expect(r.qualities[0].quant_error).toBe(0);
    expect(r.qualities[1].quant_error).toBeCloseTo(e4 / 5 / 2, 9); // mean over 2 layers
    expect(r.qualities[1].quant_error_max).toBeCloseTo(e4 / 5, 9);
    // after the eviction the attended mass is 4/5, of which 0 is quantized
    expect(r.qualities[2].quant_error).toBe(0);
    expect(r.qualities.map((q) => [q.needle_unavailable, q.needle_degraded, q.needle_bits_min])).toEqual([
      [0, 0, 16],
      [0, 1, 4],
      [1, 0, 0],
      [1, 0, 0],
    ]);
    const s = r.quality.summary();
    expect(s.needle).toMatchObject({
      block: 1,
      unavailable_steps: 2,
      degraded_steps: 1,
      first_unavailable_step: 2,
      first_degraded_step: 1,
      unavailable_active_steps: 1,
      degraded_active_steps: 1,
      retained: false,
      available: false,
    });
  });

  it('a run reports quant error and needle retention in summary and step rows', () => {
    const r = simulate({ trace: 'traces/bundled/llama-3-8b-2k-needle.kvt', policy: 'kivi', hardware: 'h100-pcie5', hbm_budget: '20%' });
    expect(r.summary.quant_error!.mean).toBeGreaterThan(0);
    expect(r.summary.needle!.block).toBe(63);
    expect(r.summary.needle!.available).toBe(true);
    expect(r.summary.needle!.retained).toBe(false); // KIVI keeps it, at 2 bits
    expect(r.steps[0].quant_error).toBeGreaterThan(0);
    expect(r.steps[0].needle_bits_min).toBe(2);
  });
});
