// Random scripted policies against the HIL executor's staging rule: at every layer's attention the
// replay driver's fetch bytes per tier equal what the executor fetches, which reads a block from its
// staged copy only where the block is at the tier and bits it was staged at (hil/executor/lower-layer.ts;
// a later stage of a block replaces its copy, a bulk stage copies every block of its tier, and the copies
// are let go at the layer's attention). The policies mix single and listed prefetches, bulk stages,
// promotions, demotions with requantization (refused where a tier is full), evictions and skips, on the
// layer decided and on others, with the driver's fast paths on and off.
import { describe, expect, it } from 'vitest';
import type { LayerWork, MoveBatch } from '../../sim/executor.js';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver } from '../../sim/replay-driver.js';
import { PlanRecorder } from '../../hil/executor/plan-recorder.js';
import type { Actions, Policy } from '../../policies/policy.js';
import { denseSteps, tinyHeader, tinyModel } from '../helpers/tiny.js';

/** the plan recorder (its own mirror of tiers and bits, as the executor lowers them) with the executor's staging rule applied */
class StagingRule extends PlanRecorder {
  private readonly copies: Map<number, { tier: number; bits: number }>[] = [];
  readonly mismatches: string[] = [];
  works = 0;
  constructor(
    private readonly c: KVCache,
    layers: number,
  ) {
    super(c, []);
    for (let l = 0; l < layers; l++) this.copies.push(new Map());
  }
  /** the recorder's mirror of every block's tier and bits as lowered so far, and the blocks it knows per layer */
  private get mirror(): { tier: Int8Array; bits: Int8Array; known: Int32Array } {
    return this as unknown as { tier: Int8Array; bits: Int8Array; known: Int32Array };
  }
  override stage(b: MoveBatch): number {
    const r = super.stage(b);
    const { tier, bits, known } = this.mirror;
    const M = this.c.maxBlocks;
    const l = b.layer;
    const blocks: number[] = [];
    if (b.blocks.length === 0) {
      for (let x = 0; x < known[l]; x++) if (tier[l * M + x] === b.fromTier && this.c.tierOf(l, x) >= 0) blocks.push(x);
    } else for (const x of b.blocks) if (tier[l * M + x] === b.fromTier) blocks.push(x);
    for (const x of blocks) this.copies[l].set(x, { tier: b.fromTier, bits: bits[l * M + x] });
    return r;
  }
  override layer(w: LayerWork): void {
    const got = [...w.fetchBytes];
    super.layer(w);
    this.works++;
    const { tier, bits } = this.mirror;
    const M = this.c.maxBlocks;
    const l = w.layer;
    const want = new Array<number>(got.length).fill(0);
    for (let b = 0; b < w.nBlocks; b++) {
      if (!w.attendedMask[b]) continue;
      const t = tier[l * M + b];
      if (t <= 0) continue;
      const st = this.copies[l].get(b);
      if (st && st.tier === t && st.bits === bits[l * M + b]) continue;
      want[t] += this.c.bytesOf(bits[l * M + b]);
    }
    this.copies[l].clear();
    if (want.some((x, t) => x !== got[t])) this.mismatches.push(`step ${w.step} layer ${l}: driver ${got} executor ${want}`);
  }
}

/** a linear congruential generator (deterministic per seed) */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const TIERS = ['hbm', 'dram', 'nvme'];
const BITS = [16, 8, 4, 2];

function run(seed: number, fastPaths: boolean, dramOnly: boolean): { mismatches: string[]; works: number } {
  const L = 2;
  const steps = 12;
  const h = tinyHeader(64, steps, L);
  const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
  const cache = new KVCache(tinyModel, 4, L, Math.ceil((64 + steps) / 4) + 1, [
    { name: 'hbm', capacityBytes: 64 * 30 },
    { name: 'dram', capacityBytes: dramOnly ? 1e9 : 64 * 10 },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const r = random(seed);
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
  const policy: Policy = {
    name: 'random',
    decide(v, a: Actions) {
      if (v.step < 0) {
        if (v.nBlocks < 16) return;
        for (let b = 0; b < 16; b++) if (r() < 0.5) a.demote(v.layer, b, dramOnly ? 'dram' : pick(['dram', 'nvme']), 16);
        return;
      }
      if (dramOnly && r() < 0.6) a.prefetchOffloaded(v.layer);
      const k = Math.floor(r() * 12);
      for (let j = 0; j < k; j++) {
        const l = r() < 0.7 ? v.layer : Math.floor(r() * L);
        const n = cache.created[l];
        const b = Math.floor(r() * n);
        const list = Array.from({ length: 1 + Math.floor(r() * 4) }, () => Math.floor(r() * n)).sort((x, y) => x - y);
        const x = r();
        if (x < 0.15) a.prefetch(l, b);
        else if (x < 0.25) a.prefetchBlocks!(l, list, 0, list.length);
        else if (x < 0.35) a.prefetchOffloaded(l);
        else if (x < 0.5) a.promote(l, b, r() < 0.3 ? pick(BITS) : undefined);
        else if (x < 0.7) a.demote(l, b, dramOnly ? pick(['hbm', 'dram']) : pick(TIERS), pick(BITS));
        else if (x < 0.8) a.demoteBlocks!(l, list, 0, list.length, dramOnly ? 'dram' : pick(['dram', 'nvme']), pick(BITS));
        else if (x < 0.9) a.promoteBlocks!(l, list, 0, list.length);
        else if (x < 0.92) a.evict(l, b);
        else if (x < 0.96 && l === v.layer) a.skip(b);
        else if (l === v.layer && r() < 0.5) a.skipExceptListed(list, list.length, r() < 0.5 ? 'offloaded' : 'all');
        else if (l === v.layer) a.skipExceptListedDelta!(list, list.length, [b], 1);
      }
    },
    observe() {},
  };
  const ex = new StagingRule(cache, L);
  const d = new ReplayDriver(h, cache, policy, ex, 30);
  d.fastPaths = fastPaths;
  d.run(trace, () => undefined);
  return { mismatches: ex.mismatches, works: ex.works };
}

describe('the replay driver\'s fetches against the executor\'s staging rule, random policies', () => {
  for (const [fastPaths, dramOnly] of [
    [true, false],
    [false, false],
    [true, true],
    [false, true],
  ] as const) {
    it(`fast paths ${fastPaths ? 'on' : 'off'}, ${dramOnly ? 'DRAM only, bulk stages at most layers' : 'DRAM and NVMe'}`, () => {
      const bad: string[] = [];
      let works = 0;
      for (let seed = 1; seed <= 400; seed++) {
        const r = run(seed, fastPaths, dramOnly);
        works += r.works;
        if (r.mismatches.length) bad.push(`seed ${seed}: ${r.mismatches[0]} (+${r.mismatches.length - 1})`);
      }
      expect(works).toBe(400 * 12 * 2);
      expect(bad).toEqual([]);
    });
  }
});
