import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { fromPixel, paddedDomain, placePointLabels, spreadLabels, toPixel, withRightMargin } from '../../reports/chart-axes.js';

describe('domains', () => {
  it('pads linear and log domains (hand-computed)', () => {
    expect(paddedDomain([0.1, 0.4], 'linear', 0.1)).toEqual([0.07, 0.43].map((x) => expect.closeTo(x, 12)));
    const [lo, hi] = paddedDomain([1, 100], 'log', 0.05); // log span 2 -> 0.1 decade each side
    expect(lo).toBeCloseTo(10 ** -0.1, 12);
    expect(hi).toBeCloseTo(10 ** 2.1, 12);
  });

  it('leaves the right strip free: the old end lands at width - strip', () => {
    const d = withRightMargin([0, 1], 'linear', 300, 100);
    expect(d[1]).toBeCloseTo(1.5, 12);
    expect(toPixel(1, [d[0], d[1]], 'linear', 300)).toBeCloseTo(100, 9); // as a vertical axis: 100 px from the top
    const l = withRightMargin([1, 100], 'log', 200, 100);
    expect(l[1]).toBeCloseTo(10_000, 6);
  });

  it('toPixel and fromPixel are inverses', () => {
    for (const kind of ['linear', 'log'] as const) {
      for (const v of [2, 7.5, 40]) expect(fromPixel(toPixel(v, [1, 50], kind, 180), [1, 50], kind, 180)).toBeCloseTo(v, 9);
    }
  });
});

describe('spreadLabels', () => {
  it('keeps labels where they want to be when they do not collide', () => {
    expect(spreadLabels([10, 50, 100], 12, 190)).toEqual([10, 50, 100]);
  });

  it('moves colliding labels apart symmetrically-enough and inside the panel (hand-checked)', () => {
    // three at 100: pushed down to 100, 112, 124; two at the bottom edge pulled up
    expect(spreadLabels([100, 100, 100], 12, 190)).toEqual([100, 112, 124]);
    expect(spreadLabels([189, 185], 12, 190)).toEqual([190, 178]);
  });

  it('property: order kept, gaps respected, inside the panel when they fit', () => {
    const rng = seedrandom('spread');
    for (let t = 0; t < 200; t++) {
      const n = 1 + Math.floor(rng() * 10);
      const wanted = Array.from({ length: n }, () => Math.floor(rng() * 190));
      const got = spreadLabels(wanted, 12, 190);
      const order = wanted.map((_, i) => i).sort((a, b) => wanted[a]! - wanted[b]! || a - b);
      for (let k = 1; k < n; k++) expect(got[order[k]!]! - got[order[k - 1]!]!).toBeGreaterThanOrEqual(12 - 1e-9);
      for (const g of got) expect(g).toBeGreaterThanOrEqual(0);
      for (const g of got) expect(g).toBeLessThanOrEqual(190);
    }
  });
});

describe('placePointLabels', () => {
  it('puts a lone label right of its point, or left of it in the right half', () => {
    expect(placePointLabels([{ px: 20, py: 50, width: 30 }], 250, 170)).toEqual([{ x: 27, y: 50, align: 'left' }]);
    expect(placePointLabels([{ px: 240, py: 50, width: 30 }], 250, 170)).toEqual([{ x: 233, y: 50, align: 'right' }]);
  });

  it('moves a second label off the first when two points nearly coincide', () => {
    const [a, b] = placePointLabels(
      [
        { px: 20, py: 50, width: 40 },
        { px: 22, py: 52, width: 40 },
      ],
      250,
      170,
    );
    expect(a).toEqual({ x: 27, y: 50, align: 'left' });
    // first label: x 27..67, y 44.5..55.5. For the second point: right (y 46.5..57.5) overlaps it; left
    // (x -25..15) sticks out of the panel; above-right (y 35.5..46.5) still overlaps it by 2 px;
    // below-right (y 57.5..68.5) is free
    expect(b).toEqual({ x: 26, y: 63, align: 'left' });
  });
});

describe('placePointLabels with taken boxes', () => {
  it('keeps a label off a box that is already taken', () => {
    // right of the point would be x 27..57, y 44.5..55.5: taken; left leaves the panel; above-right is free
    const [a] = placePointLabels([{ px: 20, py: 50, width: 30 }], 250, 170, [[25, 45, 60, 56]]);
    expect(a).toEqual({ x: 24, y: 39, align: 'left' });
  });
});
