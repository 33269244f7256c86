/**
 * KVCache.move against a from-scratch recount: random creates, moves (within and across three tiers,
 * at every precision, many refused by small capacities) and drops, and after each change every
 * counter move() keeps up to date (per tier, per precision, bytes, runs, precision changes, used, peak,
 * changes per layer, the HBM and live marks) equals what the blocks' tiers and bits give. The run and
 * precision-change counts are updated from the block's neighbours in one step, so the sequences put
 * moved blocks next to dropped, quantized, not-yet-created and first or last blocks.
 */
import { describe, expect, it } from 'vitest';
import { BITS, KVCache } from '../../sim/kv-cache.js';
import { tinyModel } from '../helpers/tiny.js';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const T = 3;

/** every counter of the cache, recounted from its blocks' tiers and bits */
function recount(c: KVCache, layer: number) {
  const runs = new Array<number>(T).fill(0);
  const count = new Array<number>(T).fill(0);
  const bytes = new Array<number>(T).fill(0);
  const quant = new Array<number>(T).fill(0);
  const bits = new Map<number, number>();
  const live: number[] = [];
  for (let b = 0; b < c.created[layer]; b++) {
    const t = c.tierOf(layer, b);
    if (t < 0) continue;
    const k = c.bitsOf(layer, b);
    count[t]++;
    bytes[t] += c.bytesOf(k);
    if (k < 16) quant[t] += c.bytesOf(k);
    bits.set(k, (bits.get(k) ?? 0) + 1);
    if (!(b > 0 && c.tierOf(layer, b - 1) === t && c.bitsOf(layer, b - 1) === 16)) runs[t]++;
    live.push(k);
  }
  // 8-block windows of the live blocks, one every 4, holding more than one precision
  let windows = 0;
  let mixed = 0;
  for (let s = 0; live.length >= 2 && (s === 0 || s + 4 < live.length); s += 4) {
    windows++;
    if (new Set(live.slice(s, s + 8)).size > 1) mixed++;
  }
  return { runs, count, bytes, quant, bits, windowShare: windows > 0 ? mixed / windows : 0 };
}

function expectCounters(c: KVCache, usedRef: number[], peakRef: number[], edits: number[]): void {
  for (let l = 0; l < c.layers; l++) {
    const r = recount(c, l);
    for (let t = 0; t < T; t++) {
      expect(c.runsIn(l, t)).toBe(r.runs[t]);
      expect(c.countIn(l, t)).toBe(r.count[t]);
      expect(c.bytesIn(l, t)).toBe(r.bytes[t]);
      expect(c.quantizedBytesIn(l, t)).toBe(r.quant[t]);
    }
    for (const k of BITS) expect(c.countBits(l, k)).toBe(r.bits.get(k) ?? 0);
    expect(c.mixedWindowShare(l)).toBe(r.windowShare);
    expect(c.live(l)).toBe(r.count.reduce((a, b) => a + b, 0));
    expect(c.changesOf(l)).toBe(edits[l]);
    for (let b = 0; b < c.maxBlocks; b++) {
      const t = c.tierOf(l, b);
      expect(c.hbmMask[l * c.maxBlocks + b]).toBe(t === 0 ? 1 : 0);
      expect(c.liveMask[l * c.maxBlocks + b]).toBe(t >= 0 ? 1 : 0);
    }
  }
  expect([...c.used]).toEqual(usedRef);
  expect([...c.peak]).toEqual(peakRef);
  c.audit();
}

describe('KVCache.move', () => {
  it('keeps every counter equal to a recount through random creates, moves and drops', () => {
    let refused = 0;
    let moved = 0;
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const rnd = lcg(seed);
      const layers = 2;
      const maxBlocks = 24;
      // 64 B a 16-bit block: room for a few blocks per tier, so that many moves are refused
      const capacity = [64 * (4 + (seed % 3)), 64 * 5, 64 * 10];
      const c = new KVCache(tinyModel, 4, layers, maxBlocks, capacity.map((capacityBytes, t) => ({ name: `t${t}`, capacityBytes })));
      const used = [0, 0, 0];
      const peak = [0, 0, 0];
      const edits = [0, 0];
      const bump = (t: number) => {
        if (used[t] > peak[t]) peak[t] = used[t];
      };
      for (let step = 0; step < 600; step++) {
        const l = Math.floor(rnd() * layers);
        const n = c.created[l];
        const x = rnd();
        if (n < maxBlocks && (n === 0 || x < 0.15)) {
          const t = Math.floor(rnd() * T);
          const bits = BITS[Math.floor(rnd() * BITS.length)];
          const bytes = c.bytesOf(bits);
          const ok = c.create(l, t, bits);
          expect(ok).toBe(used[t] + bytes <= capacity[t]);
          if (ok) {
            used[t] += bytes;
            bump(t);
            edits[l]++;
          }
        } else {
          const b = Math.floor(rnd() * n);
          const from = c.tierOf(l, b);
          if (from < 0) continue;
          if (x < 0.18) {
            c.drop(l, b);
            used[from] -= c.bytesOf(c.bitsOf(l, b));
            edits[l]++;
          } else {
            const to = Math.floor(rnd() * T);
            const bits = rnd() < 0.5 ? 16 : BITS[Math.floor(rnd() * BITS.length)];
            const oldBytes = c.bytesOf(c.bitsOf(l, b));
            const newBytes = c.bytesOf(bits);
            const extra = from === to ? newBytes - oldBytes : newBytes;
            const fits = !(extra > 0 && used[to] + extra > capacity[to]);
            expect(c.move(l, b, to, bits)).toBe(fits);
            if (fits) {
              used[from] -= oldBytes;
              used[to] += newBytes;
              bump(to);
              edits[l]++;
              moved++;
            } else refused++;
          }
        }
        expectCounters(c, used, peak, edits);
      }
    }
    // the sequences exercise both outcomes
    expect(moved).toBeGreaterThan(1200);
    expect(refused).toBeGreaterThan(400);
  });

  it("starts a run at a layer's block 0 whatever the previous layer's last block is", () => {
    const c = new KVCache(tinyModel, 4, 2, 3, [
      { name: 'hbm', capacityBytes: 1000 },
      { name: 'dram', capacityBytes: 1000 },
    ]);
    c.createMany(0, 3, 1, 16); // layer 0: D D D (its last block sits just before layer 1's block 0)
    c.createMany(1, 3, 0, 16); // layer 1: H H H
    expect(c.move(1, 0, 1, 16)).toBe(true); // D H H
    expect([c.runsIn(1, 0), c.runsIn(1, 1)]).toEqual([1, 1]);
    expect(c.move(1, 0, 1, 8)).toBe(true); // D(8) H H
    expect(c.mixedWindowShare(1)).toBe(1);
    expect(c.move(1, 0, 0, 16)).toBe(true); // H H H
    expect([c.runsIn(1, 0), c.runsIn(1, 1), c.mixedWindowShare(1)]).toEqual([1, 0, 0]);
    c.audit();
  });

  it('checks the block and the precision before anything changes', () => {
    const c = new KVCache(tinyModel, 4, 1, 4, [
      { name: 'hbm', capacityBytes: 1000 },
      { name: 'dram', capacityBytes: 1000 },
    ]);
    c.createMany(0, 3, 0, 16);
    c.drop(0, 1);
    expect(() => c.move(0, 1, 1, 16)).toThrow('layer 0: block 1 was dropped');
    expect(() => c.move(0, 3, 1, 16)).toThrow('layer 0: block 3 does not exist (created: 3)');
    expect(() => c.move(0, 0, 1, 5)).toThrow('unsupported precision 5 bits');
    expect(c.tierOf(0, 0)).toBe(0);
    expect(c.changesOf(0)).toBe(4);
    c.audit();
  });
});
