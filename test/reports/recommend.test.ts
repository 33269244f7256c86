import { describe, expect, it } from 'vitest';
import { DEFAULT_TARGET, meetsTarget, recommend, targetMiss, type Candidate } from '../../reports/recommend.js';

const c = (policy: string, budget: number, tbt: number, recall: number, q?: number, panel = 'p'): Candidate => ({
  panel,
  policy,
  budget,
  tbt_p50_ms: tbt,
  recall_mean: recall,
  ...(q === undefined ? {} : { quant_error_mean: q }),
});

describe('targetMiss / meetsTarget', () => {
  it('is the larger of the recall loss and the quant error, each over its allowance', () => {
    // recall 0.98: loss 0.02 over 0.01 allowed = 2; quant 0.006 over 0.012 = 0.5
    expect(targetMiss(c('a', 0.1, 1, 0.98, 0.006), DEFAULT_TARGET)).toBeCloseTo(2, 12);
    // recall 0.995: 0.5; quant 0.024: 2
    expect(targetMiss(c('a', 0.1, 1, 0.995, 0.024), DEFAULT_TARGET)).toBeCloseTo(2, 12);
    expect(meetsTarget(c('a', 0.1, 1, 0.99, 0.012), DEFAULT_TARGET)).toBe(true);
    expect(meetsTarget(c('a', 0.1, 1, 0.9899, 0), DEFAULT_TARGET)).toBe(false);
    expect(meetsTarget(c('a', 0.1, 1, 1, 0.0121), DEFAULT_TARGET)).toBe(false);
  });

  it('checks only recall when a run has no quant error, and treats a zero allowance strictly', () => {
    expect(meetsTarget(c('a', 0.1, 1, 0.995), DEFAULT_TARGET)).toBe(true);
    expect(meetsTarget(c('a', 0.1, 1, 0.995, Number.NaN), DEFAULT_TARGET)).toBe(true);
    expect(targetMiss(c('a', 0.1, 1, 1, 0), { recallMin: 1, quantErrorMax: 0 })).toBe(0);
    expect(targetMiss(c('a', 0.1, 1, 0.999, 0), { recallMin: 1, quantErrorMax: 0 })).toBe(Infinity);
  });
});

describe('recommend', () => {
  // budget 0.1: h2o is fastest but drops 45% of the mass; lru meets the target; synapsevm has high quant error
  const rows = [
    c('h2o', 0.1, 5.37, 0.55, 0),
    c('lru', 0.1, 15.9, 1, 0),
    c('synapsevm', 0.1, 274, 1, 0.238),
    c('quest', 0.1, 5.57, 0.63, 0),
    // budget 0.2: nobody meets it; quest is closest (loss 0.02 -> miss 2), h2o misses by 10
    c('h2o', 0.2, 5.38, 0.9, 0),
    c('quest', 0.2, 5.6, 0.98, 0),
    c('synapsevm', 0.2, 150, 1, 0.146),
  ];

  it('picks the fastest policy that meets the target, and names the faster one it passed over', () => {
    const [r10, r20] = recommend(rows);
    expect(r10!.budget).toBe(0.1);
    expect(r10!.pick!.policy).toBe('lru');
    expect(r10!.fastest!.policy).toBe('h2o');
    expect(r10!.closest).toBeUndefined();
    expect([r10!.candidates, r10!.meeting]).toEqual([4, 1]);
    // synapsevm: 0.146 / 0.012 = 12.2 > quest's 2
    expect(r20!.pick).toBeUndefined();
    expect(r20!.closest!.policy).toBe('quest');
    expect(r20!.fastest!.policy).toBe('h2o');
    expect(r20!.meeting).toBe(0);
  });

  it('does not repeat the pick as the fastest; a looser target changes the pick', () => {
    const [r10] = recommend(rows, { recallMin: 0.5, quantErrorMax: 0.3 });
    expect(r10!.pick!.policy).toBe('h2o');
    expect(r10!.fastest).toBeUndefined();
    expect(r10!.meeting).toBe(4);
  });

  it('orders by panel then budget, breaks time ties by recall then name, and ignores input order', () => {
    const tied = [c('b', 0.4, 7, 1, 0, 'z'), c('a', 0.4, 7, 1, 0, 'z'), c('c', 0.4, 7, 0.999, 0, 'z'), c('x', 0.2, 9, 1, 0, 'a')];
    const out = recommend(tied);
    expect(out.map((r) => [r.panel, r.budget, r.pick!.policy])).toEqual([
      ['a', 0.2, 'x'],
      ['z', 0.4, 'a'],
    ]);
    expect(recommend([...tied].reverse())).toEqual(out);
  });

  it('skips runs without finite numbers and rejects a bad target with the field named', () => {
    expect(recommend([c('a', 0.1, Number.NaN, 1)])).toEqual([]);
    expect(() => recommend(rows, { recallMin: 1.5, quantErrorMax: 0.01 })).toThrow(/recallMin must be a number in \[0, 1\], got 1.5/);
    expect(() => recommend(rows, { recallMin: 0.9, quantErrorMax: -1 })).toThrow(/quantErrorMax must be a number >= 0/);
  });
});
