import { describe, expect, it } from 'vitest';
import { lastObserved, lastObservedAmong } from '../../policies/quest.js';
import { lastObservedWithin } from '../../policies/infinigen.js';
import type { GroupAttention, Observation } from '../../policies/policy.js';

/** an observation of one layer (base 0) with its attended mask */
function obsOf(attended: number[], ga: GroupAttention): Observation {
  const mask = Uint8Array.from(attended);
  return { ...ga, step: 3, layer: 0, nBlocks: attended.length, groups: [ga], attended: mask, attendedCount: attended.reduce((a, b) => a + b, 0) };
}

describe('quest: last observed mass', () => {
  it('over the listed blocks only: the same values as the pass over every block', () => {
    // blocks 0..5; attended 0, 2, 3, 5; the row lists 2 (0.5) and 4 (0.2, not attended); the rest carry 0.05
    const ga: GroupAttention = { idx: Uint32Array.from([2, 4]), mass: Float32Array.from([0.5, 0.2]), uniform: 0.05 };
    const obs = obsOf([1, 0, 1, 1, 0, 1], ga);
    const a = Float64Array.from([9, 9, 9, 9, 9, 9]);
    const b = a.slice();
    expect(lastObservedAmong(a, 0, obs, ga, Int32Array.from([5, 0, 3, 2]), 4)).toBe(true);
    lastObserved(b, 0, obs, ga);
    expect([...a]).toEqual([0.05, 9, 0.5, 0.05, 9, 0.05]);
    expect([...a]).toEqual([...b]);
  });

  it('every block attended (a dense layer): the share everywhere but the listed blocks, as block by block', () => {
    const ga: GroupAttention = { idx: Uint32Array.from([4, 1]), mass: Float32Array.from([0.5, 0.25]), uniform: 0.03 };
    const obs = obsOf([1, 1, 1, 1, 1], ga);
    const a = Float64Array.from([9, 9, 9, 9, 9, 9, 9]);
    lastObserved(a, 1, obs, ga);
    // (base 1: blocks 0..4 at 1..5; 0 and 6 untouched)
    expect([...a]).toEqual([9, 0.03, 0.25, 0.03, 0.03, 0.5, 9]);
    // one block not attended: the pass block by block, which leaves it
    const b = Float64Array.from([9, 9, 9, 9, 9, 9, 9]);
    lastObserved(b, 1, obsOf([1, 1, 0, 1, 1], ga), ga);
    expect([...b]).toEqual([9, 0.03, 0.25, 9, 0.03, 0.5, 9]);
  });

  it('declines when an attended block is not listed, or the row is dense', () => {
    const ga: GroupAttention = { idx: Uint32Array.from([2]), mass: Float32Array.from([0.5]), uniform: 0.1 };
    const obs = obsOf([1, 0, 1, 1], ga);
    const a = new Float64Array(4);
    expect(lastObservedAmong(a, 0, obs, ga, Int32Array.from([0, 2]), 2)).toBe(false);
    // only uniform shares of listed attended blocks were written (lastObserved writes the same)
    expect([...a]).toEqual([0.1, 0, 0.1, 0]);
    const dense: GroupAttention = { idx: null, mass: Float32Array.from([0.1, 0.2, 0.3, 0.4]), uniform: 0 };
    expect(lastObservedAmong(a, 0, obsOf([1, 1, 1, 1], dense), dense, Int32Array.from([0, 1, 2, 3]), 4)).toBe(false);
  });
});

describe('infinigen: last observed mass within the anchors, the window and the predicted list', () => {
  it('the same values as the pass over every block, or declines when an attended block lies elsewhere', () => {
    // blocks 0..7: anchor 0, window from 5, predicted [2, 6] (6 is in the window: not counted twice)
    const ga: GroupAttention = { idx: Uint32Array.from([2, 3]), mass: Float32Array.from([0.4, 0.3]), uniform: 0.02 };
    const obs = obsOf([1, 0, 1, 0, 0, 1, 1, 1], ga);
    const a = new Float64Array(8).fill(7);
    const b = a.slice();
    expect(lastObservedWithin(a, 0, obs, ga, 1, 5, Int32Array.from([2, 6]), 2)).toBe(true);
    lastObserved(b, 0, obs, ga);
    expect([...a]).toEqual([0.02, 7, Math.fround(0.4), 7, 7, 0.02, 0.02, 0.02]);
    expect([...a]).toEqual([...b]);
    // block 3 attended but neither an anchor, in the window nor predicted
    const obs2 = obsOf([1, 0, 0, 1, 0, 1, 0, 0], ga);
    expect(lastObservedWithin(new Float64Array(8), 0, obs2, ga, 1, 5, Int32Array.from([2]), 1)).toBe(false);
  });
});
