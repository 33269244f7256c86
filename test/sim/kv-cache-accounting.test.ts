/**
 * KVCache accounting: counters per tier and precision kept in step with every change, all-or-nothing
 * bulk creation, the peak per tier, pins, and errors that name what is wrong and what is valid.
 * Tiny model: a block (4 tokens) is 64 B at 16 bits, 36 at 8, 20 at 4, 12 at 2.
 */
import { describe, expect, it } from 'vitest';
import { bitsIndex, DROPPED, KVCache, NONE } from '../../sim/kv-cache.js';
import { tinyModel } from '../helpers/tiny.js';

const make = (hbm = 1000, dram = 1000, layers = 2, maxBlocks = 6) =>
  new KVCache(tinyModel, 4, layers, maxBlocks, [
    { name: 'hbm', capacityBytes: hbm },
    { name: 'dram', capacityBytes: dram },
  ]);

describe('bitsIndex', () => {
  it('maps 16 / 8 / 4 / 2 / 3 bits to 0..4 and refuses anything else, listing the valid precisions', () => {
    expect([16, 8, 4, 2, 3].map(bitsIndex)).toEqual([0, 1, 2, 3, 4]);
    for (const bad of [0, 1, 5, 12, 15, 17, 32, -1, 2.5, Number.NaN]) {
      expect(() => bitsIndex(bad)).toThrow(`unsupported precision ${bad} bits (valid: 16, 8, 4, 3, 2)`);
    }
  });

  it('counts 3-bit blocks in their own bucket: per-bits counters, bytes in a tier, audit', () => {
    const c = make(1000, 1000, 1, 6);
    expect(c.createMany(0, 3, 0, 16)).toBe(true);
    expect(c.move(0, 0, 0, 3)).toBe(true);
    expect(c.move(0, 1, 0, 3)).toBe(true);
    expect(c.move(0, 2, 1, 3)).toBe(true);
    expect([16, 8, 4, 3, 2].map((b) => c.countBits(0, b))).toEqual([0, 0, 0, 3, 0]);
    expect(c.bytesIn(0, 0)).toBe(2 * c.bytesOf(3));
    expect(c.quantizedBytesIn(0, 0)).toBe(2 * c.bytesOf(3));
    expect(c.bytesIn(0, 1)).toBe(c.bytesOf(3));
    c.audit();
  });
});

describe('mixed 8-block windows along a layer', () => {
  const big = (maxBlocks: number) => new KVCache(tinyModel, 4, 2, maxBlocks, [{ name: 'hbm', capacityBytes: 1e9 }, { name: 'dram', capacityBytes: 1e9 }]);

  it('counts windows of 8 live blocks, one every 4, holding more than one precision, by hand', () => {
    const c = big(40);
    expect(c.mixedWindowShare(0)).toBe(0); // no blocks
    c.createMany(0, 1, 0, 16);
    expect(c.mixedWindowShare(0)).toBe(0); // one block
    c.createMany(0, 15, 0, 2);
    // 16 blocks: windows at 0, 4, 8 (12 + 4 is not below 16): [0,8) [4,12) [8,16); block 0 differs: 1 of 3
    expect(c.mixedWindowShare(0)).toBeCloseTo(1 / 3, 15);
    c.move(0, 9, 0, 8);
    // block 9 at 8 bits mixes [4,12) and [8,16): all 3
    expect(c.mixedWindowShare(0)).toBe(1);
    c.move(0, 0, 0, 2);
    expect(c.mixedWindowShare(0)).toBeCloseTo(2 / 3, 15);
    c.createMany(0, 1, 0, 2);
    // 17 blocks: windows at 0, 4, 8, 12 ([12,17)): block 9 mixes [4,12) and [8,16): 2 of 4
    expect(c.mixedWindowShare(0)).toBe(0.5);
    c.move(0, 9, 1, 8);
    // another tier, same bits: the same windows
    expect(c.mixedWindowShare(0)).toBe(0.5);
    c.drop(0, 9);
    // dropped blocks leave the table: 16 live blocks all at 2 bits
    expect(c.mixedWindowShare(0)).toBe(0);
    c.move(0, 16, 0, 16);
    // the last live block (block 16, the 16th live) differs: only [8,16) of the live sequence holds it
    expect(c.mixedWindowShare(0)).toBeCloseTo(1 / 3, 15);
    // the other layer is untouched; a short table is one window
    expect(c.mixedWindowShare(1)).toBe(0);
    c.createMany(1, 2, 0, 2);
    c.createMany(1, 1, 0, 4);
    expect(c.mixedWindowShare(1)).toBe(1);
    c.audit();
  });

  it('equals a count over the live blocks after every change, over random changes', () => {
    let x = 7;
    const rnd = (n: number) => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x % n;
    };
    const bitsOf = [16, 8, 4, 2, 3];
    const brute = (c: KVCache, l: number) => {
      const seq: number[] = [];
      for (let b = 0; b < c.created[l]; b++) if (c.tierOf(l, b) >= 0) seq.push(c.bitsOf(l, b));
      if (seq.length < 2) return 0;
      let w = 0;
      let m = 0;
      for (let s = 0; s === 0 || s + 4 < seq.length; s += 4) {
        w++;
        if (new Set(seq.slice(s, s + 8)).size > 1) m++;
      }
      return m / w;
    };
    for (let trial = 0; trial < 20; trial++) {
      const c = big(64);
      for (let op = 0; op < 120; op++) {
        const l = rnd(2);
        const k = rnd(10);
        if (k < 3 && c.created[l] < 64) c.createMany(l, 1 + rnd(Math.min(4, 64 - c.created[l])), rnd(2), bitsOf[rnd(5)]);
        else if (c.created[l] > 0) {
          const b = rnd(c.created[l]);
          if (c.tierOf(l, b) < 0) continue;
          if (k === 9) c.drop(l, b);
          else c.move(l, b, rnd(2), k < 6 ? bitsOf[rnd(5)] : c.bitsOf(l, b));
        }
        expect(c.mixedWindowShare(l)).toBe(brute(c, l));
        expect(c.mixedWindowShare(1 - l)).toBe(brute(c, 1 - l));
      }
      c.audit();
    }
  });
});

describe('KVCache accounting', () => {
  it('a new cache: nothing created, every block NONE, tiers by name', () => {
    const c = make();
    expect(NONE).toBe(-1);
    expect(DROPPED).toBe(-2);
    expect(c.tierOf(1, 5)).toBe(NONE);
    expect([...c.created]).toEqual([0, 0]);
    expect(c.tierIndex('hbm')).toBe(0);
    expect(c.tierIndex('dram')).toBe(1);
    expect(() => c.tierIndex('nvme')).toThrow('unknown tier "nvme" (tiers: hbm, dram)');
    expect(() => new KVCache(tinyModel, 4, 1, 1, Array.from({ length: 101 }, (_, i) => ({ name: `t${i}`, capacityBytes: 1 })))).toThrow('too many tiers');
    expect(new KVCache(tinyModel, 4, 1, 1, Array.from({ length: 100 }, (_, i) => ({ name: `t${i}`, capacityBytes: 1 }))).tierNames.length).toBe(100);
  });

  it('counters per tier, precision and layer follow creates, moves and drops (hand-computed)', () => {
    const c = make();
    expect(c.create(0, 0, 16)).toBe(true);
    expect(c.create(0, 0, 8)).toBe(true);
    expect(c.create(0, 1, 4)).toBe(true);
    expect(c.create(1, 0, 2)).toBe(true);
    expect([...c.created]).toEqual([3, 1]);
    expect([c.tierOf(0, 0), c.tierOf(0, 1), c.tierOf(0, 2), c.tierOf(1, 0)]).toEqual([0, 0, 1, 0]);
    expect([c.bitsOf(0, 0), c.bitsOf(0, 1), c.bitsOf(0, 2), c.bitsOf(1, 0)]).toEqual([16, 8, 4, 2]);
    expect([...c.used]).toEqual([64 + 36 + 12, 20]);
    expect([c.countIn(0, 0), c.countIn(0, 1), c.countIn(1, 0), c.countIn(1, 1)]).toEqual([2, 1, 1, 0]);
    expect([c.live(0), c.live(1)]).toEqual([3, 1]);
    expect([16, 8, 4, 2].map((b) => c.countBits(0, b))).toEqual([1, 1, 1, 0]);
    expect([16, 8, 4, 2].map((b) => c.countBits(1, b))).toEqual([0, 0, 0, 1]);
    expect([c.bytesIn(0, 0), c.bytesIn(0, 1), c.bytesIn(1, 0)]).toEqual([100, 20, 12]);
    expect([c.quantizedBytesIn(0, 0), c.quantizedBytesIn(0, 1), c.quantizedBytesIn(1, 0)]).toEqual([36, 20, 12]);
    expect([...c.liveMask.subarray(0, 6)]).toEqual([1, 1, 1, 0, 0, 0]);
    // move block 0 of layer 0 to dram at 4 bits; drop block 1
    expect(c.move(0, 0, 1, 4)).toBe(true);
    c.drop(0, 1);
    expect(c.tierOf(0, 1)).toBe(DROPPED);
    expect(c.liveMask[1]).toBe(0);
    expect([...c.used]).toEqual([12, 40]);
    expect([c.countIn(0, 0), c.countIn(0, 1)]).toEqual([0, 2]);
    expect(c.live(0)).toBe(2);
    expect([16, 8, 4, 2].map((b) => c.countBits(0, b))).toEqual([0, 0, 2, 0]);
    expect([c.bytesIn(0, 1), c.quantizedBytesIn(0, 1), c.bytesIn(0, 0)]).toEqual([40, 40, 0]);
    // the peak is the most a tier ever held
    expect([...c.peak]).toEqual([112, 40]);
    c.audit();
  });

  it('createMany is all or nothing, and leaves the same counters as one create() per block', () => {
    const a = make(64 * 3, 1000);
    const b = make(64 * 3, 1000);
    expect(a.createMany(0, 4, 0, 16)).toBe(false);
    expect(a.created[0]).toBe(0);
    expect(a.used[0]).toBe(0);
    expect(a.peak[0]).toBe(0);
    expect(a.createMany(0, 0, 0, 16)).toBe(true);
    expect(a.created[0]).toBe(0);
    expect(a.createMany(0, 3, 0, 16)).toBe(true);
    for (let i = 0; i < 3; i++) expect(b.create(0, 0, 16)).toBe(true);
    expect(b.create(0, 0, 16)).toBe(false);
    for (const c of [a, b]) {
      expect(c.created[0]).toBe(3);
      expect(c.used[0]).toBe(192);
      expect(c.peak[0]).toBe(192);
      expect(c.countIn(0, 0)).toBe(3);
      expect(c.live(0)).toBe(3);
      expect(c.countBits(0, 16)).toBe(3);
      expect(c.bytesIn(0, 0)).toBe(192);
      expect([...c.liveMask.subarray(0, 6)]).toEqual([1, 1, 1, 0, 0, 0]);
      expect([0, 1, 2, 3].map((k) => c.tierOf(0, k))).toEqual([0, 0, 0, NONE]);
      c.audit();
    }
    // the peak stays when a later bulk creation ends below it
    b.drop(0, 0);
    b.drop(0, 1);
    expect(b.createMany(0, 1, 0, 16)).toBe(true);
    expect([b.used[0], b.peak[0]]).toEqual([128, 192]);
    // bulk creation in another layer and tier at 8 bits lands in that layer's counters only
    expect(b.createMany(1, 2, 1, 8)).toBe(true);
    expect([b.bytesIn(1, 1), b.quantizedBytesIn(1, 1), b.bytesIn(1, 0), b.bytesIn(0, 1), b.countIn(1, 1), b.countBits(1, 8)]).toEqual([72, 72, 0, 0, 2, 2]);
    b.audit();
    // bulk creation in a lower tier at 8 bits continues the block numbers
    expect(a.createMany(0, 2, 1, 8)).toBe(true);
    expect([a.tierOf(0, 3), a.bitsOf(0, 4), a.used[1], a.countBits(0, 8), a.created[0]]).toEqual([1, 8, 72, 2, 5]);
    expect(() => a.createMany(0, 2, 1, 8)).toThrow("layer 0: block 6 beyond the trace's 6 blocks");
    expect(() => b.createMany(1, 5, 1, 16)).toThrow("layer 1: block 6 beyond the trace's 6 blocks");
    a.audit();
  });

  it('create past the last block throws, naming the layer and the limit', () => {
    const c = make(1000, 1000, 1, 2);
    expect(c.create(0, 0, 16)).toBe(true);
    expect(c.create(0, 0, 16)).toBe(true);
    expect(() => c.create(0, 0, 16)).toThrow("layer 0: block 2 beyond the trace's 2 blocks");
  });

  it('a refused create changes nothing', () => {
    const c = make(100, 0);
    expect(c.create(0, 0, 16)).toBe(true);
    expect(c.create(0, 0, 16)).toBe(false);
    expect(c.create(0, 1, 2)).toBe(false);
    expect(c.created[0]).toBe(1);
    expect([...c.used]).toEqual([64, 0]);
    // 36 B still fit (64 + 36 = 100)
    expect(c.create(0, 0, 8)).toBe(true);
    expect(c.used[0]).toBe(100);
    c.audit();
  });

  it('pins: counted per layer, cleared by a drop; moves and drops of missing or dropped blocks throw', () => {
    const c = make();
    c.createMany(0, 3, 0, 16);
    c.setPinned(0, 1, true);
    c.setPinned(0, 1, true);
    c.setPinned(0, 2, true);
    expect(c.pinnedIn(0)).toBe(2);
    expect(c.isPinned(0, 1)).toBe(true);
    expect(c.isPinned(0, 0)).toBe(false);
    c.setPinned(0, 2, false);
    expect(c.pinnedIn(0)).toBe(1);
    c.drop(0, 1);
    expect(c.pinnedIn(0)).toBe(0);
    expect(c.isPinned(0, 1)).toBe(false);
    expect(() => c.drop(0, 1)).toThrow('layer 0: block 1 was dropped');
    expect(() => c.move(0, 1, 1, 16)).toThrow('layer 0: block 1 was dropped');
    expect(() => c.move(0, 3, 1, 16)).toThrow('layer 0: block 3 does not exist (created: 3)');
    expect(() => c.setPinned(1, 0, true)).toThrow('layer 1: block 0 does not exist (created: 0)');
    expect(() => c.drop(0, -1)).toThrow('layer 0: block -1 does not exist (created: 3)');
    c.audit();
  });

  it('audit finds a counter that disagrees with the blocks', () => {
    const corrupt: [string, (c: KVCache) => void, string][] = [
      ['used', (c) => (c.used[1] += 1), 'audit: tier dram used 65 != 64'],
      ['tier count', (c) => (c.tierCount[0] += 1), 'audit: layer 0 tier 0 count'],
      ['bits count', (c) => (c.bitsCount[1] += 1), 'audit: layer 0 bits count'],
      ['pinned', (c) => (c.pinned[0] = 1), 'audit: layer 0 pinned count'],
      ['live count', (c) => ((c as unknown as { liveCount: Int32Array }).liveCount[0] += 1), 'audit: layer 0 live count'],
      ['a block placed without its counters', (c) => (c.tier[0] = 1), 'audit: layer 0 tier 0 count'],
      ['over capacity', (c) => (c.capacity[0] = 99), 'audit: tier hbm over capacity'],
    ];
    for (const [, breakIt, message] of corrupt) {
      const c = make();
      c.createMany(0, 2, 0, 16);
      expect(c.move(0, 1, 1, 16)).toBe(true);
      c.create(0, 0, 8);
      c.audit();
      breakIt(c);
      expect(() => c.audit()).toThrow(message);
    }
  });
});

describe('KVCache runsIn', () => {
  it('counts runs of consecutive blocks per tier, a quantized block ending its run, through create, move and drop', () => {
    const c = make(1000, 1000, 1, 6);
    expect(c.createMany(0, 4, 0, 16)).toBe(true); // H H H H
    expect([c.runsIn(0, 0), c.runsIn(0, 1)]).toEqual([1, 0]);
    expect(c.move(0, 1, 1, 16)).toBe(true); // H D H H
    expect([c.runsIn(0, 0), c.runsIn(0, 1)]).toEqual([2, 1]);
    expect(c.move(0, 2, 1, 16)).toBe(true); // H D D H
    expect([c.runsIn(0, 0), c.runsIn(0, 1)]).toEqual([2, 1]);
    expect(c.move(0, 1, 1, 8)).toBe(true); // H D8 D H: the 8-bit block ends its run
    expect([c.runsIn(0, 0), c.runsIn(0, 1)]).toEqual([2, 2]);
    expect(c.create(0, 1, 16)).toBe(true); // H D8 D H D
    expect([c.runsIn(0, 0), c.runsIn(0, 1)]).toEqual([2, 3]);
    c.drop(0, 3); // H D8 D x D
    expect([c.runsIn(0, 0), c.runsIn(0, 1)]).toEqual([1, 3]);
    c.audit(); // recounts the runs
  });
});
