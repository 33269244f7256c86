import { describe, expect, it } from 'vitest';
import { defaultErrorTable } from '../../sim/quality/error-table.js';
import { allocateBits, smartKv } from '../../policies/smartkv.js';
import { uniformInt8 } from '../../policies/uniform-int8.js';
import { replayPolicy } from './harness.js';

const T = defaultErrorTable();
const e = (b: number) => T.relError(b, 128, false);
// prompt 16 = blocks 0..3, block 4 at step 0; importance after the prefill observation (decay 0.5):
// 0.5 x [0.4, 0.3, 0.15, 0.1] -> order 0, 1, 2, 3
const m = [0.4, 0.3, 0.15, 0.1, 0.05];

describe('smartkv', () => {
  it('allocates {8, 4, 3, 2} greedily by importance within the average', () => {
    expect([...allocateBits([0, 1, 2, 3], 4).values()]).toEqual([8, 4, 2, 2]);
    expect([...allocateBits([0, 1, 2, 3], 3.75).values()]).toEqual([8, 3, 2, 2]);
    expect([...allocateBits([5, 6], 2).values()]).toEqual([2, 2]);
  });

  it('quantizes by EMA importance, stores 3-bit blocks in 4-bit slots, reports 3 bits to the quality measures', () => {
    const r = replayPolicy(smartKv, 10, { prompt: 16, steps: 1, layers: 1, massOf: () => m, options: { avg_bits: 3.75, decay: 0.5 } });
    expect(r.acts('demote:hbm:8', -1)).toEqual(['0:0']);
    expect(r.acts('demote:hbm:4', -1)).toEqual(['0:1']);
    expect(r.acts('demote:hbm:2', -1)).toEqual(['0:2', '0:3']);
    expect(r.bits(0)).toEqual([8, 4, 2, 2, 16]);
    expect(r.qualities[0].quant_error).toBeCloseTo(0.4 * e(8) + 0.3 * e(3) + 0.25 * e(2), 6);
    expect(r.results[0].recall[0]).toBeCloseTo(1, 9);
  });

  it('reallocates every 16 tokens, only ever lowering precision', () => {
    // 20 steps: contexts 17..36; reallocations at prefill (16) and at context 32 (step 15)
    const r = replayPolicy(smartKv, 10, { prompt: 16, steps: 20, layers: 1, massOf: (_s, _l, n) => Array(n).fill(1 / n), options: { avg_bits: 4, decay: 0.5 } });
    const steps = [...new Set(r.log.filter((a) => a.what.startsWith('demote')).map((a) => a.step))];
    expect(steps).toEqual([-1, 15]);
    expect(r.log.filter((a) => a.what === 'promote')).toEqual([]);
  });

  it('uniform-int8 puts every block at 8 bits', () => {
    const r = replayPolicy(uniformInt8, 10, { prompt: 16, steps: 1, layers: 1, massOf: () => m });
    expect(r.bits(0)).toEqual([8, 8, 8, 8, 16]);
    expect(r.qualities[0].quant_error).toBeCloseTo(0.95 * e(8), 6);
  });
});
