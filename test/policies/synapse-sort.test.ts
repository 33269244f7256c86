/** SynapseVM's sorts of block ids by (key, id): the order of a reference sort, over ties, ±0 and infinities. */
import { describe, expect, it } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import { sortByKey, sortPairs } from '../../policies/synapsevm.js';

describe('synapse sortByKey', () => {
  it('by hand: ascending keys, ties to the lower id', () => {
    const key = new Float64Array([0.5, -1, 0.5, 2, -1]);
    const ids = Int32Array.from([4, 3, 2, 1, 0]);
    sortByKey(ids, 5, key);
    expect([...ids]).toEqual([1, 4, 0, 2, 3]);
  });

  it('equals a reference sort for lists of every length up to 600 (insertion and quicksort parts)', () => {
    const special = [0, -0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1, -1];
    for (let seed = 1; seed <= 120; seed++) {
      const r = makeRng(seed).next;
      const M = 700;
      const n = seed <= 40 ? seed : Math.floor(r() * 600);
      const key = new Float64Array(M);
      // few distinct keys for some lists (many ties), any for others
      const distinct = r() < 0.5 ? 1 + Math.floor(r() * 5) : 0;
      for (let b = 0; b < M; b++) key[b] = r() < 0.05 ? special[Math.floor(r() * special.length)] : distinct ? Math.floor(r() * distinct) / 4 : r();
      const ids = new Int32Array(M);
      const pool = Array.from({ length: M }, (_, b) => b);
      for (let i = 0; i < n; i++) ids[i] = pool.splice(Math.floor(r() * pool.length), 1)[0];
      // the part after n stays as it is
      for (let i = n; i < M; i++) ids[i] = -1;
      const want = [...ids.subarray(0, n)].sort((a, b) => (key[a] < key[b] ? -1 : key[a] > key[b] ? 1 : a - b));
      sortByKey(ids, n, key);
      expect([...ids.subarray(0, n)]).toEqual(want);
      expect(ids.subarray(n).every((x) => x === -1)).toBe(true);
    }
  });
});

describe('synapse sortPairs', () => {
  it('by hand: the keys move with their ids', () => {
    const ids = Int32Array.from([4, 3, 2, 1, 0]);
    const keys = new Float64Array([-1, 2, 0.5, -1, 0.5]);
    sortPairs(ids, keys, 5);
    expect([...ids]).toEqual([1, 4, 0, 2, 3]);
    expect([...keys]).toEqual([-1, -1, 0.5, 0.5, 2]);
  });

  it('the order of sortByKey for lists of every length up to 600 (insertion and quicksort parts)', () => {
    const special = [0, -0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1, -1];
    for (let seed = 1; seed <= 120; seed++) {
      const r = makeRng(seed + 1000).next;
      const M = 700;
      const n = seed <= 40 ? seed : Math.floor(r() * 600);
      const key = new Float64Array(M);
      const distinct = r() < 0.5 ? 1 + Math.floor(r() * 5) : 0;
      for (let b = 0; b < M; b++) key[b] = r() < 0.05 ? special[Math.floor(r() * special.length)] : distinct ? Math.floor(r() * distinct) / 4 : r();
      const ids = new Int32Array(M).fill(-1);
      const pool = Array.from({ length: M }, (_, b) => b);
      for (let i = 0; i < n; i++) ids[i] = pool.splice(Math.floor(r() * pool.length), 1)[0];
      const want = ids.slice();
      sortByKey(want, n, key);
      const keys = new Float64Array(M).fill(7);
      for (let i = 0; i < n; i++) keys[i] = key[ids[i]];
      sortPairs(ids, keys, n);
      expect([...ids]).toEqual([...want]);
      for (let i = 0; i < n; i++) expect(Object.is(keys[i], key[ids[i]])).toBe(true);
      expect(keys.subarray(n).every((x) => x === 7)).toBe(true);
    }
  });
});
