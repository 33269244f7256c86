import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { InOrder } from '../../policies/dpnc-in-order.js';

describe('InOrder: blocks visited in order of (key, block) until the visit stops', () => {
  it('visits what a full sort gives, stopping where told, and leaves a permutation (random lists, many ties)', () => {
    const rng = seedrandom('in-order');
    const M = 300;
    const order = new InOrder(M);
    for (let round = 0; round < 400; round++) {
      const count = Math.floor(rng() * 120);
      // distinct blocks, keys with frequent ties (and -0 next to 0)
      const blocks = Array.from({ length: M }, (_, b) => b)
        .sort(() => rng() - 0.5)
        .slice(0, count);
      const key = new Float64Array(M);
      for (const b of blocks) key[b] = rng() < 0.1 ? -0 : Math.floor(rng() * 6) / 2;
      const ids = Int32Array.from(blocks);
      const first = Math.floor(rng() * 12);
      const stopAfter = Math.floor(rng() * (count + 2));
      const seen: number[] = [];
      order.visit(
        ids,
        count,
        key,
        first,
        (list, b) => {
          list.push(b);
          return list.length < stopAfter;
        },
        seen,
      );
      const sorted = [...blocks].sort((a, c) => key[a] - key[c] || a - c);
      expect(seen).toEqual(sorted.slice(0, Math.min(count, Math.max(1, stopAfter))));
      expect([...ids].sort((a, c) => a - c)).toEqual([...blocks].sort((a, c) => a - c));
    }
  });

  it('by hand: keys 3, 1, 1, 2 on blocks 7, 5, 2, 9 visit 2, 5, 9, 7', () => {
    const key = new Float64Array(10);
    [key[7], key[5], key[2], key[9]] = [3, 1, 1, 2];
    for (const first of [1, 2, 8, 20]) {
      const seen: number[] = [];
      new InOrder(10).visit(Int32Array.from([7, 5, 2, 9]), 4, key, first, (list, b) => list.push(b) > 0, seen);
      expect(seen).toEqual([2, 5, 9, 7]);
    }
  });
});
