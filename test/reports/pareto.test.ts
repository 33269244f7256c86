import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { dominates, paretoFront, type XY } from '../../reports/pareto.js';

describe('paretoFront (lower x, higher y)', () => {
  it('keeps the non-dominated points, ordered by x (hand-checked)', () => {
    const pts: XY[] = [
      { x: 5.37, y: 0.48 }, // 0 streaming: same x as h2o, lower recall -> dominated
      { x: 5.37, y: 0.54 }, // 1 h2o
      { x: 5.57, y: 0.63 }, // 2 quest
      { x: 15.9, y: 1 }, // 3 lru
      { x: 274, y: 1 }, // 4 synapsevm: slower, same recall -> dominated
      { x: 6, y: 0.6 }, // 5 dominated by quest
    ];
    expect(paretoFront(pts)).toEqual([1, 2, 3]);
  });

  it('keeps exact duplicates on the front, and skips non-finite points', () => {
    expect(paretoFront([{ x: 1, y: 1 }, { x: 1, y: 1 }, { x: 2, y: 0.5 }])).toEqual([0, 1]);
    expect(paretoFront([{ x: Number.NaN, y: 1 }, { x: 3, y: 0.2 }])).toEqual([1]);
    expect(paretoFront([])).toEqual([]);
  });

  it('matches the definition on random point sets: front = points no other point dominates', () => {
    const rng = seedrandom('pareto');
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + Math.floor(rng() * 12);
      // coarse values so that ties on x, on y and on both occur
      const pts = Array.from({ length: n }, () => ({ x: Math.floor(rng() * 5), y: Math.floor(rng() * 5) }));
      const want = pts.map((_, i) => i).filter((i) => !pts.some((q, j) => j !== i && dominates(q, pts[i]!)));
      expect([...paretoFront(pts)].sort((a, b) => a - b)).toEqual(want);
    }
  });
});
