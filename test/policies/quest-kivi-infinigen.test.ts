import { describe, expect, it } from 'vitest';
import { defaultErrorTable } from '../../sim/quality/error-table.js';
import { infiniGen } from '../../policies/infinigen.js';
import { kivi } from '../../policies/kivi.js';
import { quest } from '../../policies/quest.js';
import { replayPolicy } from './harness.js';

describe('quest', () => {
  // one layer, prompt 16 = blocks 0..3, block 4 at step 0; budget 3 pages = newest + top 2 by estimate
  const m0 = [0.4, 0.1, 0.3, 0.1, 0.1];
  const m1 = [0.4, 0.3, 0.05, 0.05, 0.2];
  const r = replayPolicy(quest, 3, { prompt: 16, steps: 3, layers: 1, massOf: (s) => (s === 0 ? m0 : m1), options: { dense_layers: 0 } });

  it('selects the top pages by estimate, skips the rest, evicts nothing', () => {
    expect(r.acts('demote:dram:16', -1)).toEqual(['0:1']);
    expect(r.acts('demote:dram:16', 0)).toEqual(['0:3']);
    expect(r.acts('skip', 0)).toEqual(['0:1', '0:3']);
    // step 1: block 1's estimate is stale (0.1, skipped since): selection unchanged
    expect(r.acts('skip', 1)).toEqual(['0:1', '0:3']);
    // step 2: block 2 fell to 0.05 -> block 3 (0.1, id order before... 1 and 3 tie: 1 dropped first) comes back
    expect(r.acts('skip', 2)).toEqual(['0:1', '0:2']);
    expect(r.acts('demote:dram:16', 2)).toEqual(['0:2']);
    expect(r.acts('promote', 2)).toEqual(['0:3']);
    expect(r.log.filter((a) => a.what === 'evict')).toEqual([]);
    expect(r.tiers(0)).toEqual([0, 1, 1, 0, 0]);
    expect(r.results.map((x) => x.recall[0])).toEqual([0.8, 0.65, 0.65].map((v) => expect.closeTo(v, 6)));
  });

  it('keeps the first layers dense', () => {
    const d = replayPolicy(quest, 3, { prompt: 16, steps: 3, layers: 3, massOf: (s) => (s === 0 ? m0 : m1) });
    expect(d.log.filter((a) => a.what === 'skip' && a.layer < 2)).toEqual([]);
    expect(d.log.filter((a) => a.what === 'skip' && a.layer === 2).length).toBeGreaterThan(0);
    expect(d.results.every((x) => x.recall[0] === 1 && x.recall[1] === 1)).toBe(true);
  });
});

describe('kivi', () => {
  // prompt 16 = blocks 0..3, residual 8 tokens = 2 blocks; contexts 17..20 over 4 steps
  it('quantizes blocks to 2 bits once they leave the FP16 residual; nothing evicted', () => {
    const r = replayPolicy(kivi, 10, { prompt: 16, steps: 4, layers: 1, options: { residual_tokens: 8 } });
    expect(r.acts('demote:hbm:2', -1)).toEqual(['0:0', '0:1']);
    expect(r.acts('demote:hbm:2', 0)).toEqual([]);
    expect(r.acts('demote:hbm:2', 3)).toEqual(['0:2']);
    expect(r.bits(0)).toEqual([2, 2, 2, 16, 16]);
    expect(r.tiers(0)).toEqual([0, 0, 0, 0, 0]);
    expect(r.results.every((x) => x.recall[0] === 1)).toBe(true);
    // uniform masses 1/5: step 3 has three 2-bit blocks at G = 32
    expect(r.qualities[3].quant_error).toBeCloseTo((3 / 5) * defaultErrorTable().relError(2, 32, false), 9);
    expect(r.qualities[0].quant_error).toBeCloseTo((2 / 5) * defaultErrorTable().relError(2, 32, false), 9);
  });

  it('offloads the oldest blocks beyond the HBM budget and keeps quantizing them there', () => {
    // budget 2 FP16 blocks = 128 B; a 2-bit block is 12 B (8 B + one 4 B scale group)
    const r = replayPolicy(kivi, 2, { prompt: 16, steps: 4, layers: 1, options: { residual_tokens: 8 } });
    expect(r.acts('demote:dram:2', -1)).toEqual(['0:0', '0:1']);
    expect(r.acts('demote:dram:16', 0)).toEqual(['0:2']);
    expect(r.acts('demote:dram:2', 3)).toEqual(['0:2']);
    expect(r.tiers(0)).toEqual([1, 1, 1, 0, 0]);
    expect(r.bits(0)).toEqual([2, 2, 2, 16, 16]);
  });
});

describe('infinigen', () => {
  // prompt 16 = blocks 0..3, block 4 at step 0; budget 4: 2 resident (anchor + newest), 2 prefetch slots
  const m0 = [0.3, 0.25, 0.1, 0.2, 0.15];
  const m1 = [0.3, 0.01, 0.3, 0.19, 0.2];
  const r = replayPolicy(infiniGen, 4, { prompt: 16, steps: 3, layers: 1, massOf: (s) => (s === 0 ? m0 : m1) });

  it('keeps anchor + recent resident and prefetches the predicted blocks (>= e^-4 max, at most 2)', () => {
    expect(r.acts('demote:dram:16', -1)).toEqual(['0:1', '0:2']);
    expect(r.acts('demote:dram:16', 0)).toEqual(['0:3']);
    expect(r.acts('prefetch', 0)).toEqual(['0:1', '0:3']);
    expect(r.acts('skip', 0)).toEqual(['0:2']);
    // step 1: predictions from the last attention seen: 1 (0.25), 3 (0.2) over 2 (0.1, stale)
    expect(r.acts('prefetch', 1)).toEqual(['0:1', '0:3']);
    expect(r.acts('skip', 1)).toEqual(['0:2']);
    // step 2: block 1 fell to 0.01: 3 (0.19) and 2 (0.1) are fetched
    expect(r.acts('prefetch', 2)).toEqual(['0:2', '0:3']);
    expect(r.acts('skip', 2)).toEqual(['0:1']);
    expect(r.results.map((x) => x.recall[0])).toEqual([0.9, 0.7, 0.99].map((v) => expect.closeTo(v, 6)));
  });

  it('predicts layer l+1 one layer ahead', () => {
    const two = replayPolicy(infiniGen, 4, { prompt: 16, steps: 3, layers: 2, massOf: (s) => (s === 0 ? m0 : m1) });
    // after the very first layer (nothing predicted it yet), every prefetch is for the next layer
    const pf = two.log.filter((a) => a.what === 'prefetch' && a.step >= 0 && !(a.step === 0 && a.layer === 0));
    expect(pf.length).toBeGreaterThan(0);
    expect(pf.every((a) => a.args[0] === (a.layer + 1) % 2)).toBe(true);
    expect(two.results.map((x) => x.recall[1])).toEqual([0.9, 0.7, 0.99].map((v) => expect.closeTo(v, 6)));
  });
});
