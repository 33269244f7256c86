/**
 * Adversarial traces for SynapseVM's guards: the anchor block never gets attention and the outlier
 * blocks get none either — a saliency-only policy would demote them first. The anchor must stay in
 * HBM at FP16 and the outliers must never be quantized, at every step, whatever the budget.
 */
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { synapseVm } from '../../policies/synapsevm.js';
import { h2o } from '../../policies/h2o.js';
import { replayPolicy } from './harness.js';

const OUTLIERS = [7, 23];

function adversarial(seed: string) {
  const rng = seedrandom(seed);
  return (_s: number, _l: number, n: number) => {
    const w = Array.from({ length: n }, (_, b) => (b === 0 || OUTLIERS.includes(b) ? 0 : rng() ** 4));
    const t = w.reduce((a, b) => a + b, 0);
    return w.map((x) => x / t);
  };
}

describe('anchor guard and outlier protection under adversarial traces', () => {
  for (const [seed, budget] of [['a', 3], ['b', 6], ['c', 12]] as const) {
    it(`synapsevm, seed ${seed}, budget ${budget}`, () => {
      // prompt 160 tokens = 40 blocks; norms 100 on the outliers, 1 elsewhere: mean + 3 sigma = 70.7
      const r = replayPolicy(synapseVm, budget, {
        prompt: 160,
        steps: 24,
        layers: 2,
        massOf: adversarial(seed),
        normOf: (_l, b) => (OUTLIERS.includes(b) ? 100 : 1),
        options: { l2_factor: 1 },
      });
      for (const l of [0, 1]) {
        expect(r.cache.tierOf(l, 0)).toBe(0);
        expect(r.cache.bitsOf(l, 0)).toBe(16);
        for (const b of OUTLIERS) expect(r.cache.bitsOf(l, b)).toBe(16);
      }
      // no action ever moved the anchor, and every move of an outlier kept 16 bits
      const moves = r.log.filter((a) => a.what.startsWith('demote') || a.what === 'evict');
      expect(moves.filter((a) => a.args[1] === 0 && a.ok)).toEqual([]);
      expect(moves.filter((a) => OUTLIERS.includes(a.args[1]) && a.ok && !a.what.endsWith(':16'))).toEqual([]);
      // and the outliers were moved down (they had no attention), so protection was exercised
      expect(moves.filter((a) => OUTLIERS.includes(a.args[1]) && a.ok).length).toBeGreaterThan(0);
      expect(r.results.every((x) => x.recall[0] > 0.999999)).toBe(true);
    });
  }

  it('h2o never evicts the sink block either', () => {
    const r = replayPolicy(h2o, 4, { prompt: 160, steps: 24, layers: 2, massOf: adversarial('d') });
    expect([r.cache.tierOf(0, 0), r.cache.tierOf(1, 0)]).toEqual([0, 0]);
  });
});
