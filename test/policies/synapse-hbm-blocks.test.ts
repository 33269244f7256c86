/** SynapseVM's list of HBM blocks: always exactly the cache's tier-0 blocks, ascending, after a sync. */
import { describe, expect, it } from 'vitest';
import { HbmBlocks } from '../../policies/synapse-hbm-blocks.js';
import { KVCache } from '../../sim/kv-cache.js';
import { tinyModel } from '../helpers/tiny.js';

const tiers = [
  { name: 'hbm', capacityBytes: 1e9 },
  { name: 'dram', capacityBytes: 1e9 },
];
const listed = (h: HbmBlocks, l: number) => [...h.blocks.subarray(l * h.maxBlocks, l * h.maxBlocks + h.countOf(l))];
const inHbm = (c: KVCache, l: number) => Array.from({ length: c.created[l] }, (_, b) => b).filter((b) => c.tierOf(l, b) === 0);

describe('synapse HBM block list', () => {
  it('follows creations, moves seen and unseen, drops and promotions added between syncs', () => {
    const c = new KVCache(tinyModel, 4, 2, 64, tiers);
    const h = new HbmBlocks(2, 64);
    for (let b = 0; b < 6; b++) c.create(0, b % 3 === 2 ? 1 : 0, 16);
    h.sync(c, 0);
    expect(listed(h, 0)).toEqual([0, 1, 3, 4]);
    // the policy demotes 1 and promotes 5 (added in place); a demoted block stays listed until the sync
    c.move(0, 1, 1, 4);
    c.move(0, 5, 0, 16);
    h.add(0, 5);
    h.add(0, 5);
    expect(listed(h, 0)).toEqual([0, 1, 3, 4, 5]);
    h.sync(c, 0);
    expect(listed(h, 0)).toEqual([0, 3, 4, 5]);
    // unseen: block 2 moved into HBM by someone else, block 4 dropped, two blocks created
    c.move(0, 2, 0, 16);
    c.drop(0, 4);
    c.create(0, 0, 16);
    c.create(0, 1, 16);
    h.sync(c, 0);
    expect(listed(h, 0)).toEqual([0, 2, 3, 5, 6]);
    // a block created since the sync and added is listed once (by the sync), next to one moved unseen
    c.create(0, 1, 16);
    c.move(0, 8, 0, 16);
    h.add(0, 8);
    c.move(0, 7, 0, 16);
    h.sync(c, 0);
    expect(listed(h, 0)).toEqual([0, 2, 3, 5, 6, 7, 8]);
    expect(listed(h, 1)).toEqual([]);
  });

  it('matches the cache after every sync over random moves, some of them unseen', () => {
    let seed = 5;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const c = new KVCache(tinyModel, 4, 1, 400, tiers);
    const h = new HbmBlocks(1, 400);
    for (let round = 0; round < 100; round++) {
      for (let k = 0; k < 3; k++) c.create(0, rnd() < 0.5 ? 0 : 1, 16);
      for (let k = 0; k < 4; k++) {
        const b = Math.floor(rnd() * c.created[0]);
        if (c.tierOf(0, b) < 0) continue;
        const to = rnd() < 0.5 ? 0 : 1;
        c.move(0, b, to, 16);
        if (to === 0 && rnd() < 0.7) h.add(0, b);
      }
      const d = Math.floor(rnd() * c.created[0]);
      if (rnd() < 0.05 && c.tierOf(0, d) >= 0) c.drop(0, d);
      h.sync(c, 0);
      expect(listed(h, 0)).toEqual(inHbm(c, 0));
    }
  });
});
