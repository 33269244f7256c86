import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { selectAt, selectBottomK, selectBottomKKeyed, selectBottomKSet, sortAscending } from '../../policies/quickselect.js';

/** the k smallest (key, id) pairs by a full sort: the reference */
function bottomKBySort(ids: number[], key: (id: number) => number, k: number): number[] {
  return [...ids].sort((a, b) => key(a) - key(b) || a - b).slice(0, k).sort((a, b) => a - b);
}

describe('bottom-k selection', () => {
  it('picks the same set as a full sort, ties broken by id, over generated inputs', () => {
    const rng = seedrandom('quickselect');
    for (let trial = 0; trial < 400; trial++) {
      const n = 1 + Math.floor(rng() * 300);
      // few distinct keys on some trials: many ties
      const distinct = rng() < 0.5 ? 1 + Math.floor(rng() * 4) : 1000;
      const keyOf = new Map<number, number>();
      const ids: number[] = [];
      for (let i = 0; i < n; i++) {
        const id = i * 3 + Math.floor(rng() * 3);
        ids.push(id);
        keyOf.set(id, Math.floor(rng() * distinct) / 7);
      }
      // shuffled order in
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(rng() * (i + 1));
        [ids[i], ids[j]] = [ids[j]!, ids[i]!];
      }
      const k = Math.floor(rng() * (n + 2));
      const key = (id: number) => keyOf.get(id)!;
      const want = bottomKBySort(ids, key, k);
      const a = Int32Array.from(ids);
      const got = selectBottomK(a, n, k, key);
      expect(got).toBe(Math.min(k, n));
      expect([...a.subarray(0, got)].sort((x, y) => x - y)).toEqual(want);
      // a permutation of the input
      expect([...a].sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));
      // keyed form: the keys move with the ids
      const b = Int32Array.from(ids);
      const keys = Float64Array.from(ids, key);
      selectBottomKKeyed(b, keys, n, k);
      expect([...b.subarray(0, got)].sort((x, y) => x - y)).toEqual(want);
      for (let i = 0; i < n; i++) expect(keys[i]).toBe(key(b[i]!));
    }
  });

  it('only looks at the first count ids', () => {
    const ids = Int32Array.from([5, 1, 4, 0, 9]);
    selectBottomK(ids, 3, 1, (id) => id);
    expect(ids[0]).toBe(1);
    expect([...ids.subarray(3)]).toEqual([0, 9]);
  });

  it('the keyed form and the set form pick the k smallest (key, id) pairs (long ranges, many ties)', () => {
    const rng = seedrandom('quickselect-int32');
    for (let trial = 0; trial < 60; trial++) {
      const n = 1 + Math.floor(rng() * 3000);
      const distinct = rng() < 0.3 ? 1 + Math.floor(rng() * 5) : 1e6;
      const ids = Int32Array.from({ length: n }, (_, i) => i);
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(rng() * (i + 1));
        [ids[i], ids[j]] = [ids[j]!, ids[i]!];
      }
      const keyOf = Float64Array.from({ length: n }, () => Math.floor(rng() * distinct) / 7);
      const k = Math.floor(rng() * (n + 2));
      const want = bottomKBySort([...ids], (id) => keyOf[id]!, k);
      const a = ids.slice();
      const ak = Float64Array.from(a, (id) => keyOf[id]!);
      expect(selectBottomKKeyed(a, ak, n, k)).toBe(Math.min(k, n));
      expect([...a.subarray(0, Math.min(k, n))].sort((x, y) => x - y)).toEqual(want);
      const c = ids.slice();
      const ck = Float64Array.from(c, (id) => keyOf[id]!);
      const got = selectBottomKSet(c, ck, n, k);
      expect(got).toBe(Math.min(k, n));
      expect([...c.subarray(0, got)].sort((x, y) => x - y)).toEqual(want);
      expect([...c].sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));
      for (let i = 0; i < n; i++) expect(ck[i]).toBe(keyOf[c[i]!]);
    }
  });

  it('selectAt puts the pair of each rank of a range at its position, smaller pairs before it and larger after', () => {
    const rng = seedrandom('quickselect-at');
    for (let trial = 0; trial < 100; trial++) {
      const n = 2 + Math.floor(rng() * (trial < 70 ? 50 : 2500));
      const distinct = rng() < 0.4 ? 1 + Math.floor(rng() * 4) : 1e6;
      const ids = Int32Array.from({ length: n }, (_, i) => i);
      const keys = Float64Array.from({ length: n }, () => Math.floor(rng() * distinct) / 7);
      const left = Math.floor(rng() * n);
      const right = left + Math.floor(rng() * (n - left));
      const k = left + Math.floor(rng() * (right - left + 1));
      const outside = [...ids.subarray(0, left), ...ids.subarray(right + 1)];
      const ranged = [...ids.subarray(left, right + 1)].sort((a, b) => keys[a]! - keys[b]! || a - b);
      const key = (id: number) => keys[id]!;
      const kv = keys.slice();
      const before = (a: number, b: number) => kv[a]! < kv[b]! || (kv[a] === kv[b] && a < b);
      selectAt(ids, Float64Array.from(ids, key), k, left, right);
      expect(ids[k]).toBe(ranged[k - left]);
      for (let i = left; i < k; i++) expect(before(ids[i]!, ids[k]!)).toBe(true);
      for (let i = k + 1; i <= right; i++) expect(before(ids[k]!, ids[i]!)).toBe(true);
      expect([...ids.subarray(0, left), ...ids.subarray(right + 1)]).toEqual(outside);
    }
    expect(() => selectAt(new Int32Array(3), new Float64Array(3), 3, 0, 2)).toThrow(/outside/);
  });
});

describe('sortAscending', () => {
  it('sorts a[from, to) as Array.prototype.sort does, on both sides of its 32-entry switch, and leaves the rest', () => {
    let x = 7;
    const rnd = (n: number) => {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      return x % n;
    };
    for (const len of [0, 1, 2, 5, 31, 32, 33, 64, 200]) {
      const a = Int32Array.from({ length: len + 6 }, () => rnd(50) - 10);
      const before = Array.from(a);
      sortAscending(a, 3, 3 + len);
      expect(Array.from(a.subarray(3, 3 + len))).toEqual(before.slice(3, 3 + len).sort((p, q) => p - q));
      expect([...a.subarray(0, 3), ...a.subarray(3 + len)]).toEqual([...before.slice(0, 3), ...before.slice(3 + len)]);
    }
  });
});
