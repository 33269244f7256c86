/**
 * SynapseVM's list of HBM blocks and mask of blocks below HBM: always exactly the cache's tier-0
 * blocks, ascending, and its live blocks below tier 0, after a sync and after every reported move.
 */
import { describe, expect, it } from 'vitest';
import { HbmBlocks } from '../../policies/synapse-hbm-blocks.js';
import { KVCache } from '../../sim/kv-cache.js';
import { tinyModel } from '../helpers/tiny.js';

const tiers = [
  { name: 'hbm', capacityBytes: 1e9 },
  { name: 'dram', capacityBytes: 1e9 },
  { name: 'nvme', capacityBytes: 1e9 },
];
const listed = (h: HbmBlocks, l: number) => [...h.list(l).subarray(l * h.maxBlocks, l * h.maxBlocks + h.countOf(l))];
const inHbm = (c: KVCache, l: number) => Array.from({ length: c.created[l] }, (_, b) => b).filter((b) => c.tierOf(l, b) === 0);
const masked = (h: HbmBlocks, l: number) => [...h.belowOf(l)].flatMap((m, b) => (m ? [b] : []));
const below = (c: KVCache, l: number) => Array.from({ length: c.created[l] }, (_, b) => b).filter((b) => c.tierOf(l, b) > 0);

/** a move the policy makes and reports */
function move(c: KVCache, h: HbmBlocks, l: number, b: number, to: number): void {
  const from = c.tierOf(l, b);
  expect(c.move(l, b, to, 16)).toBe(true);
  h.moved(l, b, from, to);
}

describe('synapse HBM block list', () => {
  it('counts every change of a layer in the cache (creations, moves, requantizations, drops)', () => {
    const c = new KVCache(tinyModel, 4, 2, 64, tiers);
    c.create(0, 0, 16);
    c.createMany(0, 3, 1, 16);
    expect(c.changesOf(0)).toBe(4);
    c.move(0, 1, 0, 16);
    c.move(0, 1, 0, 4);
    c.drop(0, 2);
    expect([c.changesOf(0), c.changesOf(1)]).toEqual([7, 0]);
    // a refused move changes nothing
    const small = new KVCache(tinyModel, 4, 1, 8, [tiers[0], { name: 'dram', capacityBytes: 0 }]);
    small.create(0, 0, 16);
    expect(small.move(0, 0, 1, 16)).toBe(false);
    expect(small.changesOf(0)).toBe(1);
  });

  it('follows creations and reported moves, and rebuilds after a change it was not told of', () => {
    const c = new KVCache(tinyModel, 4, 2, 64, tiers);
    const h = new HbmBlocks(2, 64);
    for (let b = 0; b < 6; b++) c.create(0, b % 3 === 2 ? 1 : 0, 16);
    h.sync(c, 0);
    expect([listed(h, 0), masked(h, 0), h.rebuilds[0]]).toEqual([[0, 1, 3, 4], [2, 5], 0]);
    // the policy demotes 1, promotes 5 and moves 2 between lower tiers: list and mask follow at once
    move(c, h, 0, 1, 1);
    move(c, h, 0, 5, 0);
    move(c, h, 0, 2, 2);
    expect([listed(h, 0), masked(h, 0)]).toEqual([[0, 3, 4, 5], [1, 2]]);
    // two blocks created (one below HBM): listed by the sync, no rebuild
    c.create(0, 0, 16);
    c.create(0, 2, 16);
    h.sync(c, 0);
    expect([listed(h, 0), masked(h, 0), h.rebuilds[0]]).toEqual([[0, 3, 4, 5, 6], [1, 2, 7], 0]);
    // unseen: block 2 moved into HBM by someone else and block 4 dropped (HBM keeps its count)
    c.move(0, 2, 0, 16);
    c.drop(0, 4);
    h.sync(c, 0);
    expect([listed(h, 0), masked(h, 0), h.rebuilds[0]]).toEqual([[0, 2, 3, 5, 6], [1, 7], 1]);
    // unseen: a block requantized below HBM (list and mask unchanged, rebuilt all the same)
    c.move(0, 1, 1, 4);
    h.sync(c, 0);
    expect([listed(h, 0), masked(h, 0), h.rebuilds[0]]).toEqual([[0, 2, 3, 5, 6], [1, 7], 2]);
    expect([listed(h, 1), masked(h, 1)]).toEqual([[], []]);
  });

  it('matches the cache after every sync and every reported move over random moves, some of them unseen', () => {
    let seed = 5;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const c = new KVCache(tinyModel, 4, 1, 400, tiers);
    const h = new HbmBlocks(1, 400);
    let unseen = 0;
    for (let round = 0; round < 100; round++) {
      for (let k = 0; k < 3; k++) c.create(0, Math.floor(rnd() * 3), 16);
      const d = Math.floor(rnd() * c.created[0]);
      const hidden = rnd() < 0.1;
      if (hidden && c.tierOf(0, d) >= 0) {
        if (rnd() < 0.5) c.drop(0, d);
        else c.move(0, d, (c.tierOf(0, d) + 1) % 3, 16);
        unseen++;
      }
      h.sync(c, 0);
      expect(listed(h, 0)).toEqual(inHbm(c, 0));
      expect(masked(h, 0)).toEqual(below(c, 0));
      for (let k = 0; k < 4; k++) {
        const b = Math.floor(rnd() * c.created[0]);
        if (c.tierOf(0, b) < 0) continue;
        move(c, h, 0, b, Math.floor(rnd() * 3));
        expect(listed(h, 0)).toEqual(inHbm(c, 0));
        expect(masked(h, 0)).toEqual(below(c, 0));
      }
    }
    expect(unseen).toBeGreaterThan(3);
    expect(h.rebuilds[0]).toBe(unseen);
  });

  it('mirrors every tier, lists the second tier, and writes a list read after many moves, matching the cache over random moves', () => {
    let seed = 9;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const M = 300;
    const c = new KVCache(tinyModel, 4, 2, M, tiers);
    const h = new HbmBlocks(2, M, 1);
    const out = new Int32Array(M);
    const second = (l: number) => {
      const n = h.listSecond(l, out);
      expect(h.secondOf(l)).toBe(n);
      return [...out.subarray(0, n)];
    };
    const inDram = (l: number) => Array.from({ length: c.created[l] }, (_, b) => b).filter((b) => c.tierOf(l, b) === 1);
    const mirrored = (l: number) => Array.from({ length: c.created[l] }, (_, b) => h.tiers[l * M + b]);
    const cached = (l: number) => Array.from({ length: c.created[l] }, (_, b) => c.tierOf(l, b));
    let unread = 0;
    for (let round = 0; round < 120; round++) {
      const l = round % 2;
      for (let k = 0; k < 2; k++) c.create(l, Math.floor(rnd() * 3), 16);
      if (rnd() < 0.05) {
        // unseen: a rebuild
        const d = Math.floor(rnd() * c.created[l]);
        if (c.tierOf(l, d) >= 0) c.move(l, d, (c.tierOf(l, d) + 1) % 3, 16);
      }
      h.sync(c, l);
      // (after a round whose moves left the list unread, it is written here from the mirror)
      expect(listed(h, l)).toEqual(inHbm(c, l));
      expect(mirrored(l)).toEqual(cached(l));
      expect(second(l)).toEqual(inDram(l));
      const read = rnd() < 0.5;
      if (!read) unread++;
      // many blocks out of HBM, now and then one in, blocks into and out of the second tier (its bits
      // set at once); the list read after every move, or not until after the layer's next sync
      for (let k = 0; k < 8; k++) {
        const b = Math.floor(rnd() * c.created[l]);
        const from = c.tierOf(l, b);
        if (from < 0) continue;
        const to = from === 0 || rnd() < 0.7 ? 1 + Math.floor(rnd() * 2) : 0;
        if (to === from) continue;
        move(c, h, l, b, to);
        expect(mirrored(l)).toEqual(cached(l));
        expect(masked(h, l)).toEqual(below(c, l));
        expect(second(l)).toEqual(inDram(l));
        expect(h.countOf(l)).toBe(inHbm(c, l).length);
        if (read) expect(listed(h, l)).toEqual(inHbm(c, l));
      }
      expect(second(l)).toEqual(inDram(l));
      expect(masked(h, l)).toEqual(below(c, l));
    }
    expect(unread).toBeGreaterThan(40);
  });
});
