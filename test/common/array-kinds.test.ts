// The array makers of common/array-kinds.ts: their contents (the elements kind itself is V8's and not visible here).
import { describe, expect, it } from 'vitest';
import { holeyObjectArray, intArray, objectArray } from '../../common/array-kinds.js';

describe('array-kinds', () => {
  it('objectArray is empty and takes objects and pops them in order', () => {
    const a = objectArray<{ v: number }>();
    expect(a).toEqual([]);
    a.push({ v: 1 }, { v: 2 });
    expect(a.pop()).toEqual({ v: 2 });
    expect(a).toEqual([{ v: 1 }]);
    // each call makes a new array
    expect(objectArray()).not.toBe(objectArray());
  });

  it('holeyObjectArray has n undefined entries (n = 0 included)', () => {
    for (const n of [0, 1, 5, 16]) {
      const a = holeyObjectArray<object>(n);
      expect(a.length).toBe(n);
      for (let i = 0; i < n; i++) expect(a[i]).toBeUndefined();
      a[n + 2] = {};
      expect(a.length).toBe(n + 3);
    }
  });

  it('intArray has n zeros and a store of its own', () => {
    for (const n of [0, 1, 3]) expect(intArray(n)).toEqual(new Array(n).fill(0));
    const a = intArray(1);
    a[0] = 7;
    expect(intArray(1)).toEqual([0]);
  });
});
