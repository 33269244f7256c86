/**
 * HbmSlots under churn: slabs of one, two and three slots, slabs emptied and taken again by another
 * slot size, and demotions that count their copies and free their slots in one pass; every slot is
 * where the executor's slab allocator puts it, and every demotion's copies and freed slots are those of
 * counting first over the blocks and freeing after.
 */
import { describe, expect, it } from 'vitest';
import { SlabAllocator } from '../../hil/executor/slab-allocator.js';
import { HbmSlots } from '../../sim/hbm-slots.js';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const SLAB = 12 << 10;

describe('HBM slots under churn', () => {
  it('place slots as the slab allocator does with one to three slots a slab and slabs changing size', () => {
    for (const seed of [11, 12, 13, 14, 15]) {
      const rnd = lcg(seed);
      const a = new SlabAllocator(0, SLAB);
      const b = new HbmSlots(1, 1, SLAB);
      const live: number[] = [];
      let emptied = 0;
      for (let k = 0; k < 4000; k++) {
        // phases that mostly free let whole slabs empty and come back with another slot size
        const freeing = Math.floor(k / 250) % 2 === 1 ? 0.8 : 0.3;
        if (live.length && rnd() < freeing) {
          const off = live.splice(Math.floor(rnd() * live.length), 1)[0];
          a.free(off);
          b.free(off);
          if (live.length === 0) emptied++;
        } else {
          const size = [SLAB, SLAB / 2, 4096, 5000][Math.floor(rnd() * 4)];
          const x = a.alloc(size).offset;
          const y = b.alloc(size);
          expect(y).toBe(x);
          live.push(x);
        }
      }
      // every slab was emptied, and taken again by whichever size came next, several times
      expect(emptied).toBeGreaterThan(2);
    }
  });

  it('count and free a demotion in one pass as counting first and freeing after would', () => {
    for (const seed of [21, 22, 23]) {
      const rnd = lcg(seed);
      const M = 64;
      const bytes = 4096;
      const fast = new HbmSlots(1, M, 64 << 10);
      const ref = new HbmSlots(1, M, 64 << 10);
      const resident = new Set<number>();
      for (let k = 0; k < 400; k++) {
        // a random set of blocks, in block order or shuffled, promoted or demoted as one move
        const n = 1 + Math.floor(rnd() * 12);
        const start = Math.floor(rnd() * (M - n));
        const blocks: number[] = [];
        for (let j = 0; j < n; j++) if (rnd() < 0.8) blocks.push(start + j);
        if (rnd() < 0.3) blocks.reverse();
        const bits = rnd() < 0.7 ? 16 : -1;
        const ins = blocks.filter((x) => !resident.has(x));
        const outs = blocks.filter((x) => resident.has(x));
        if (ins.length > 0) {
          expect(fast.promote(0, ins, bytes, bits)).toBe(ref.promote(0, ins, bytes, bits));
          for (const x of ins) resident.add(x);
        }
        if (outs.length > 0) {
          // the reference: the copies counted over every block, then the slots released
          let copies = 0;
          let prevBlock = -2;
          let prevSlot = -2;
          for (const x of outs) {
            const s = ref.slot[x];
            if (!(bits === 16 && x === prevBlock + 1 && s === prevSlot + bytes)) copies++;
            prevBlock = x;
            prevSlot = s;
          }
          for (const x of outs) ref.release(0, x);
          expect(fast.demote(0, outs, bytes, bits)).toBe(copies);
          for (const x of outs) resident.delete(x);
        }
        expect([...fast.slot]).toEqual([...ref.slot]);
        // the same free slots: the next allocation of each lands in the same place
        const probeA = fast.alloc(bytes);
        const probeB = ref.alloc(bytes);
        expect(probeA).toBe(probeB);
        fast.free(probeA);
        ref.free(probeB);
      }
    }
  });
});
