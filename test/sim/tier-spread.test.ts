/**
 * The spread of a layer's blocks in a tier (KVCache.spreadIn, sim/tier-spread.ts), kept up to date
 * through creations, moves, runs of moves and drops, equals the doublings counted afresh over the
 * blocks in block order (spreadDoublings), after every change, for dense and sparse tiers alike
 * (neighbours further than the scan limit count the pair again in full).
 */
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { spreadDoublings } from '../../sim/host-spread.js';
import { KVCache } from '../../sim/kv-cache.js';
import { tinyModel } from '../helpers/tiny.js';

const L = 2;
const M = 400;
const T = 3;

function fresh(c: KVCache, l: number, t: number): number {
  const blocks: number[] = [];
  for (let b = 0; b < c.created[l]; b++) if (c.tierOf(l, b) === t) blocks.push(b);
  return spreadDoublings(blocks);
}

/** pairs of consecutive blocks of the tier, in block order, that are adjacent blocks */
function freshAdjacent(c: KVCache, l: number, t: number): number {
  let n = 0;
  for (let b = 1; b < c.created[l]; b++) if (c.tierOf(l, b) === t && c.tierOf(l, b - 1) === t) n++;
  return n;
}

describe('the spread of a tier, kept up to date', () => {
  it('counts a tier again in full where a moved block\'s neighbours in it are far apart', () => {
    const c = new KVCache(tinyModel, 4, 1, 2000, [
      { name: 'hbm', capacityBytes: 1e12 },
      { name: 'dram', capacityBytes: 1e12 },
    ]);
    c.createMany(0, 1500, 0, 16);
    c.move(0, 0, 1, 16);
    c.move(0, 1400, 1, 16);
    expect(c.spreadIn(0, 1)).toBeCloseTo(Math.log2(1400 / 3), 12);
    // block 700 joins the tier 700 blocks from either neighbour (past the scan limit), then leaves it
    c.move(0, 700, 1, 16);
    expect(c.spreadIn(0, 1)).toBeCloseTo(2 * Math.log2(700 / 3), 12);
    c.move(0, 700, 0, 16);
    expect(c.spreadIn(0, 1)).toBeCloseTo(Math.log2(1400 / 3), 12);
    c.drop(0, 1400);
    expect(c.spreadIn(0, 1)).toBe(0);
  });

  for (const [name, density] of [['dense', 0.8], ['sparse', 0.03]] as const) {
    it(`equals a fresh count after every change (${name} lower tiers)`, () => {
      const rnd = seedrandom(`tier-spread-${name}`);
      const c = new KVCache(tinyModel, 4, L, M, [
        { name: 'hbm', capacityBytes: 1e12 },
        { name: 'dram', capacityBytes: 1e12 },
        { name: 'nvme', capacityBytes: 1e12 },
      ]);
      // ask before anything exists, so that every later change is tracked, then check every pair after each change
      for (let l = 0; l < L; l++) for (let t = 1; t < T; t++) expect(c.spreadIn(l, t)).toBe(0);
      const pick = () => (rnd() < density ? (rnd() < 0.5 ? 1 : 2) : 0);
      let adjacentSeen = 0;
      const check = () => {
        for (let l = 0; l < L; l++) {
          for (let t = 0; t < T; t++) {
            expect(c.spreadIn(l, t)).toBeCloseTo(fresh(c, l, t), 9);
            const adjacent = freshAdjacent(c, l, t);
            expect(c.adjacentIn(l, t)).toBe(adjacent);
            if (t > 0) adjacentSeen += adjacent;
          }
        }
      };
      let checks = 0;
      for (let step = 0; step < 600; step++) {
        const l = Math.floor(rnd() * L);
        const r = rnd();
        const n = c.created[l];
        if (n < M && (n < 20 || r < 0.15)) {
          if (rnd() < 0.5 || n + 8 > M) c.create(l, pick(), 16);
          else c.createMany(l, 1 + Math.floor(rnd() * 7), pick(), 16);
        } else if (r < 0.2) {
          const b = Math.floor(rnd() * n);
          if (c.tierOf(l, b) >= 0) c.drop(l, b);
        } else if (r < 0.6) {
          const b = Math.floor(rnd() * n);
          if (c.tierOf(l, b) >= 0) c.move(l, b, pick(), 16);
        } else {
          // a run of moves of blocks in one tier to another
          const from = pick();
          const to = pick();
          const blocks: number[] = [];
          for (let b = Math.floor(rnd() * n); b < n && blocks.length < 12; b += 1 + Math.floor(rnd() * 90)) if (c.tierOf(l, b) === from) blocks.push(b);
          c.moveRun(l, blocks, 0, blocks.length, from, 16, to, 16, 0);
        }
        if (step % 3 === 0) {
          check();
          checks++;
        }
      }
      check();
      expect(checks).toBeGreaterThan(150);
      // the lower tiers hold blocks with gaps beyond SPREAD_FROM_BLOCKS: the counts are not all 0
      expect(fresh(c, 0, 1) + fresh(c, 1, 2)).toBeGreaterThan(1);
      // and adjacent pairs in them along the way
      expect(adjacentSeen).toBeGreaterThan(10);
    });
  }
});
