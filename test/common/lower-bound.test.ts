// lowerBound against a linear scan, over generated ascending segments with duplicates and offsets.
import { describe, expect, it } from 'vitest';
import { lowerBound } from '../../common/lower-bound.js';

describe('lowerBound', () => {
  it('finds the first index at or above x, within the segment only', () => {
    const list = Float64Array.from([9, 1, 3, 3, 5, 8, -1]);
    // the segment [1, 3, 3, 5, 8] at base 1
    expect([0, 1, 2, 3, 4, 5, 8, 9].map((x) => lowerBound(list, 1, 5, x))).toEqual([0, 0, 1, 1, 3, 3, 4, 5]);
    expect(lowerBound(list, 1, 0, 4)).toBe(0);
  });

  it('matches a linear scan on generated lists', () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let t = 0; t < 200; t++) {
      const n = Math.floor(rnd() * 40);
      const base = Math.floor(rnd() * 5);
      const list = new Int32Array(base + n + 3).fill(-99);
      const seg = Array.from({ length: n }, () => Math.floor(rnd() * 20)).sort((a, b) => a - b);
      list.set(seg, base);
      for (let x = -1; x <= 21; x++) {
        let want = 0;
        while (want < n && seg[want] < x) want++;
        expect(lowerBound(list, base, n, x)).toBe(want);
      }
    }
  });
});
