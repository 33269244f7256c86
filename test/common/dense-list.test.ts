import { describe, expect, it } from 'vitest';
import { DenseList } from '../../common/dense-list.js';

/** A tiny seeded generator (LCG) so the property test is reproducible. */
const lcg = (seed: number) => () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);

describe('DenseList', () => {
  it('keeps insertion order; touch moves to the newest end; shift pops the oldest', () => {
    const l = new DenseList(4);
    for (const id of [3, 1, 2]) l.push(id);
    l.touch(3);
    l.touch(7); // absent: appended (and the list grows past its initial size)
    expect(l.toArray()).toEqual([1, 2, 3, 7]);
    expect(l.size).toBe(4);
    expect(l.shift()).toBe(1);
    expect(l.remove(3)).toBe(true);
    expect(l.remove(3)).toBe(false);
    expect(l.remove(1_000_000)).toBe(false);
    expect(l.toArray()).toEqual([2, 7]);
    expect(l.has(2) && l.has(7) && !l.has(1) && !l.has(99)).toBe(true);
    expect(l.shift()).toBe(2);
    expect(l.shift()).toBe(7);
    expect(l.shift()).toBe(-1);
    expect(l.size).toBe(0);
  });

  it('oldest() skips filtered ids without changing the list', () => {
    const l = new DenseList(0);
    for (const id of [5, 6, 7]) l.push(id);
    expect(l.oldest()).toBe(5);
    expect(l.oldest((id) => id < 7)).toBe(7);
    expect(l.oldest(() => true)).toBe(-1);
    expect(l.toArray()).toEqual([5, 6, 7]);
  });

  it('touching the newest id is a no-op', () => {
    const l = new DenseList();
    l.push(1);
    l.push(2);
    l.touch(2);
    expect(l.toArray()).toEqual([1, 2]);
    expect(l.size).toBe(2);
  });

  it('matches an array model under random push/touch/remove/shift (ids past the initial size)', () => {
    const rnd = lcg(7);
    const l = new DenseList(8);
    const model: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const id = Math.floor(rnd() * 200);
      const r = rnd();
      if (r < 0.35) {
        l.touch(id);
        const at = model.indexOf(id);
        if (at >= 0) model.splice(at, 1);
        model.push(id);
      } else if (r < 0.55) {
        if (!model.includes(id)) {
          l.push(id);
          model.push(id);
        }
      } else if (r < 0.8) {
        const at = model.indexOf(id);
        expect(l.remove(id)).toBe(at >= 0);
        if (at >= 0) model.splice(at, 1);
      } else {
        expect(l.shift()).toBe(model.length > 0 ? model.shift() : -1);
      }
      expect(l.size).toBe(model.length);
    }
    expect(l.toArray()).toEqual(model);
  });
});
