import { describe, expect, it } from 'vitest';
import { pyramidBudgets, pyramidKv } from '../../policies/pyramidkv.js';
import { pooledBlockScores } from '../../policies/snap-select.js';
import { snapKv } from '../../policies/snapkv.js';
import { replayPolicy } from './harness.js';

// prompt 32 tokens = blocks 0..7 (4-token blocks), block 8 written at step 0; window 8 tokens = blocks 6, 7.
// The prefill vote (blocks 0..7): pooled = m + 0.6/4 * (left + right - 2m):
//   0: 0.14, 1: 0.075, 2: 0.21, 3: 0.0525, 4: 0.0425, 5: 0.0575
const m = [0.2, 0, 0.3, 0, 0.05, 0.05, 0.1, 0.1, 0.2];
const base = { prompt: 32, steps: 2, massOf: () => m, options: { window_tokens: 8 } };

describe('snapkv', () => {
  it('pools the vote over tokens (kernel 5) at block level', () => {
    const out = pooledBlockScores(Float64Array.from(m), 8, 5, 4, new Float64Array(8));
    expect(Array.from(out.subarray(0, 6))).toEqual([0.14, 0.075, 0.21, 0.0525, 0.0425, 0.0575].map((v) => expect.closeTo(v, 9)));
  });

  it('keeps the window + top (cap - window) pooled blocks once, then appends generated tokens', () => {
    // budget 6, decode adds 1 block -> cap 5 = window 2 + top 3: 2, 0 and 1 (zero mass, but between two
    // heavy blocks: pooling keeps it over blocks 4, 5 whose raw mass is higher)
    const r = replayPolicy(snapKv, 6, { ...base, layers: 1 });
    expect(r.acts('evict', -1)).toEqual(['0:3', '0:4', '0:5']);
    expect(r.log.filter((a) => a.what === 'evict' && a.step >= 0)).toEqual([]);
    expect(r.tiers(0).map((t) => t >= 0)).toEqual([true, true, true, false, false, false, true, true, true]);
  });
});

describe('pyramidkv', () => {
  it('budgets fall linearly with depth (beta 20), sum to the total, at least the window', () => {
    // k_last = 0.5, k_0 = 19.5: 19.5, 13.17, 6.83, 0.5 -> largest remainders [20, 13, 7, 0] -> window min 2 from layer 0
    expect(pyramidBudgets(4, 10, 20, 2)).toEqual([18, 13, 7, 2]);
    expect(pyramidBudgets(4, 10, 20, 0)).toEqual([20, 13, 7, 0]);
  });

  it('keeps more blocks in lower layers', () => {
    // budget 5, reserve 1 -> mean prompt budget 4 over 2 layers: [7.8, 0.2] -> [8, 0] -> window min -> [6, 2]
    const r = replayPolicy(pyramidKv, 5, { ...base, layers: 2 });
    expect(r.acts('evict', -1, 0)).toEqual(['0:3', '0:4']);
    expect(r.acts('evict', -1, 1)).toEqual(['1:0', '1:1', '1:2', '1:3', '1:4', '1:5']);
    expect(r.cache.live(0)).toBe(7);
    expect(r.cache.live(1)).toBe(3);
  });
});
