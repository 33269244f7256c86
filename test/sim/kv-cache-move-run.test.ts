/**
 * KVCache.moveRun against moveAt called block by block with the same stopping rule (a block that is
 * not a live, unpinned block of the layer at the run's place, or does not fit): random lists over
 * caches with blocks in three tiers at several precisions, dropped and pinned blocks, neighbours in
 * and out of the list, repeats, and capacities small enough to stop runs. After each run both caches
 * must agree on where the run stopped, every block's tier and bits, and every counter (per tier, per
 * precision, bytes, runs, precision changes, used and peak bytes, changes per layer), and pass audit().
 */
import { describe, expect, it } from 'vitest';
import { BITS, KVCache } from '../../sim/kv-cache.js';
import { tinyModel } from '../helpers/tiny.js';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const PRECISIONS = [16, 8, 4, 3, 2];
const MAX = 48;

function make(hbm: number, dram: number): KVCache {
  return new KVCache(tinyModel, 4, 2, MAX, [
    { name: 'hbm', capacityBytes: hbm },
    { name: 'dram', capacityBytes: dram },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
}

/** moveAt for each block in order while it is such a block and fits: the reference */
function byMoveAt(c: KVCache, layer: number, blocks: number[], from: number, ft: number, fb: number, tier: number, bits: number): number {
  const k = BITS.indexOf(bits as never);
  for (let j = from; j < blocks.length; j++) {
    const b = blocks[j];
    if (!(Number.isInteger(b) && b >= 0 && b < c.created[layer])) return j;
    const i = layer * c.maxBlocks + b;
    if (c.tier[i] !== ft || c.bits[i] !== fb || c.pinned[i] === 1) return j;
    if (!c.moveAt(i, layer, b, tier, bits, k)) return j;
  }
  return blocks.length;
}

function state(c: KVCache) {
  const out: unknown[] = [[...c.tier], [...c.bits], [...c.used], [...c.peak], [...c.hbmMask]];
  for (let l = 0; l < c.layers; l++) {
    for (let t = 0; t < 3; t++) out.push(c.runsIn(l, t), c.countIn(l, t), c.bytesIn(l, t), c.quantizedBytesIn(l, t));
    for (const k of BITS) out.push(c.countBits(l, k));
    out.push(c.mixedWindowShare(l), c.live(l), c.changesOf(l));
  }
  return out;
}

describe('KVCache.moveRun', () => {
  for (const [hbm, dram] of [
    [1e9, 1e9],
    [64 * 20, 64 * 12],
    [64 * 8, 64 * 30],
  ]) {
    it(`same as moveAt block by block: HBM ${hbm} B, DRAM ${dram} B`, () => {
      for (let seed = 1; seed <= 20; seed++) {
        const rnd = lcg(seed);
        const a = make(hbm, dram);
        const b = make(hbm, dram);
        // blocks in every tier and precision that fits, some dropped, some pinned
        for (let l = 0; l < 2; l++) {
          for (let x = 0; x < MAX - 4; x++) {
            const t = Math.floor(rnd() * 3);
            const bits = PRECISIONS[Math.floor(rnd() * 5)];
            for (const c of [a, b]) if (!c.create(l, t, bits)) c.create(l, 2, bits);
            if (rnd() < 0.05) for (const c of [a, b]) c.drop(l, x);
            else if (rnd() < 0.05) for (const c of [a, b]) c.setPinned(l, x, true);
          }
        }
        let stopped = 0;
        for (let r = 0; r < 60; r++) {
          const l = Math.floor(rnd() * 2);
          const n = 1 + Math.floor(rnd() * 20);
          // ascending runs (with neighbours moved one after another), random orders, repeats, blocks out of range
          const start = Math.floor(rnd() * MAX);
          const list = Array.from({ length: n }, (_, j) => (rnd() < 0.5 ? start + j : rnd() < 0.9 ? Math.floor(rnd() * MAX) : rnd() < 0.5 ? -1 : 2.5));
          const first = list[0];
          const i = l * MAX + (Number.isInteger(first) && first >= 0 && first < MAX ? first : 0);
          // the run's place: the first block's, or another
          const ft = rnd() < 0.8 ? a.tier[i] : Math.floor(rnd() * 3);
          const fb = rnd() < 0.8 ? a.bits[i] : PRECISIONS[Math.floor(rnd() * 5)];
          if (!(ft >= 0) || !PRECISIONS.includes(fb)) continue;
          let tier = Math.floor(rnd() * 3);
          let bits = PRECISIONS[Math.floor(rnd() * 5)];
          if (tier === ft && bits === fb) {
            tier = (tier + 1) % 3;
            bits = 16;
          }
          const k = BITS.indexOf(bits as never);
          const e = a.moveRun(l, list, 0, n, ft, fb, tier, bits, k);
          const eRef = byMoveAt(b, l, list, 0, ft, fb, tier, bits);
          expect(e, `seed ${seed} round ${r}`).toBe(eRef);
          expect(state(a)).toEqual(state(b));
          a.audit();
          if (e < n) stopped++;
        }
        expect(stopped).toBeGreaterThan(0);
      }
    });
  }
});
