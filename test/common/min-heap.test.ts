import { describe, expect, it } from 'vitest';
import { MinHeap } from '../../common/min-heap.js';

const lcg = (seed: number) => () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);

function drain<T>(h: MinHeap<T>): [number, number, number, T][] {
  const out: [number, number, number, T][] = [];
  while (h.size > 0) {
    const e: [number, number, number, T] = [h.topA(), h.topB(), h.topC(), h.top()];
    expect(h.pop()).toBe(e[3]);
    out.push(e);
  }
  return out;
}

describe('MinHeap', () => {
  it('pops by a, then b, then c (hand-made entries)', () => {
    const h = new MinHeap<string>(1);
    h.push(2, 0, 0, 'd');
    h.push(1, 5, 0, 'c');
    h.push(1, 2, 9, 'b');
    h.push(1, 2, 3, 'a');
    h.push(-Infinity, 7, 0, 'first');
    expect(h.size).toBe(5);
    expect(drain(h).map((e) => e[3])).toEqual(['first', 'a', 'b', 'c', 'd']);
    expect(h.pop()).toBeUndefined();
  });

  it('orders random entries (with repeated a and b, unique c) like a sort, across growth and interleaved pops', () => {
    const rnd = lcg(11);
    const h = new MinHeap<number>(2);
    const model: [number, number, number, number][] = [];
    const cmp = (x: number[], y: number[]) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    let c = 0;
    for (let i = 0; i < 5000; i++) {
      if (rnd() < 0.3 && model.length > 0) {
        model.sort(cmp);
        const want = model.shift()!;
        expect([h.topA(), h.topB(), h.topC(), h.top()]).toEqual(want);
        h.pop();
      } else {
        const e: [number, number, number, number] = [Math.floor(rnd() * 20), Math.floor(rnd() * 4) - 2, c++, i];
        model.push(e);
        h.push(e[0], e[1], e[2], e[3]);
      }
    }
    model.sort(cmp);
    expect(drain(h)).toEqual(model);
  });

  it('filter keeps only the kept entries and stays a valid heap', () => {
    const rnd = lcg(3);
    const h = new MinHeap<number>();
    const kept: number[][] = [];
    for (let i = 0; i < 3000; i++) {
      const e = [Math.floor(rnd() * 50), Math.floor(rnd() * 50), i, i];
      h.push(e[0], e[1], e[2], e[3]);
      if (i % 3 !== 0) kept.push(e);
    }
    h.filter((_a, _b, _c, item) => item % 3 !== 0);
    expect(h.size).toBe(kept.length);
    h.push(-1, 0, 0, -1);
    expect(drain(h)).toEqual([[-1, 0, 0, -1], ...kept.sort((x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2])]);
  });
});
