/**
 * The replay driver's copy counts, hand-computed: a bulk stage's runs over the blocks of a tier not yet
 * staged, and a layer's on-demand fetch bytes and runs per tier over the attended blocks without a
 * staged copy (a run continues while the block before is in the run at 16 bits; a quantized block
 * ends its run; a skipped or resident block breaks it).
 */
import { describe, expect, it } from 'vitest';
import type { Executor, LayerWork, MoveBatch, StepTiming } from '../../sim/executor.js';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver } from '../../sim/replay-driver.js';
import type { Policy } from '../../policies/policy.js';
import { denseSteps, tinyHeader, tinyModel } from '../helpers/tiny.js';

class Recorder implements Executor<number> {
  readonly kind = 'sim' as const;
  stages: { step: number; fromTier: number; blocks: number[]; bytesFrom: number; runs: number }[] = [];
  works: { step: number; stagedBytes: number; fetchBytes: number[]; fetchRuns: number[] }[] = [];
  private step = -1;
  beginStep(step: number): void {
    this.step = step;
  }
  move(): number {
    return 0;
  }
  stage(b: MoveBatch): number {
    this.stages.push({ step: this.step, fromTier: b.fromTier, blocks: [...b.blocks], bytesFrom: b.bytesFrom, runs: b.runs });
    return 0;
  }
  layer(w: LayerWork): void {
    this.works.push({ step: w.step, stagedBytes: w.stagedBytes, fetchBytes: [...w.fetchBytes], fetchRuns: [...w.fetchRuns] });
  }
  endStep(): StepTiming {
    return { latency_us: 0, compute_us: 0, stall_us: 0, transfer_us: 0, bytes: {} };
  }
  finish(): Record<string, number> {
    return {};
  }
}

describe('ReplayDriver copy runs', () => {
  it('bulk stage runs skip staged blocks; fetch runs per tier break at skipped, resident and quantized blocks', () => {
    // one layer, prompt 40 tokens = blocks 0..9 (4-token blocks), block 10 written at step 0
    const h = tinyHeader(40, 2, 1);
    const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
    const cache = new KVCache(tinyModel, 4, 1, 11, [
      { name: 'hbm', capacityBytes: 64 * 20 },
      { name: 'dram', capacityBytes: 1e9 },
      { name: 'nvme', capacityBytes: 1e9 },
    ]);
    const policy: Policy = {
      name: 'scripted',
      decide(v, a) {
        if (v.step < 0) {
          // tiers after prefill: 0 hbm | 1 2 3 dram | 4 dram 8-bit | 5 dram | 6 hbm | 7 dram | 8 nvme | 9 hbm
          for (const b of [1, 2, 3, 5, 7]) a.demote(0, b, 'dram', 16);
          a.demote(0, 4, 'dram', 8);
          a.demote(0, 8, 'nvme', 16);
        } else if (v.step === 0) {
          a.prefetch(0, 2);
          a.prefetchOffloaded(0);
        } else a.skip(2);
      },
      observe() {},
    };
    const ex = new Recorder();
    new ReplayDriver(h, cache, policy, ex, 20).run(trace, () => undefined);
    const b16 = cache.bytesOf(16);
    const b8 = cache.bytesOf(8);
    expect(b16).toBe(64);
    // step 0: block 2 alone; then DRAM's unstaged 1 | 3 4 (4 is 8-bit: ends the run) | 5 | 7 = 4 runs; NVMe's 8 = 1 run
    expect(ex.stages).toEqual([
      { step: 0, fromTier: 1, blocks: [2], bytesFrom: b16, runs: 1 },
      { step: 0, fromTier: 1, blocks: [], bytesFrom: 4 * b16 + b8, runs: 4 },
      { step: 0, fromTier: 2, blocks: [], bytesFrom: b16, runs: 1 },
    ]);
    // step 0 reads every offloaded block from its staged copy; step 1 fetches them, block 2 skipped:
    // DRAM 1 | 3 4 | 5 | 7 = 4 runs, NVMe 8 = 1 run
    expect(ex.works).toEqual([
      { step: 0, stagedBytes: 6 * b16 + b8, fetchBytes: [0, 0, 0], fetchRuns: [0, 0, 0] },
      { step: 1, stagedBytes: 0, fetchBytes: [0, 4 * b16 + b8, b16], fetchRuns: [0, 4, 1] },
    ]);
  });

  it('blocks staged one by one: each leaves the fetch bytes and ends the run before it; a 16-bit one lets the next block start a run', () => {
    // one layer, prompt 40 tokens = blocks 0..9, block 10 written at step 0
    const h = tinyHeader(40, 3, 1);
    const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
    const cache = new KVCache(tinyModel, 4, 1, 12, [
      { name: 'hbm', capacityBytes: 64 * 20 },
      { name: 'dram', capacityBytes: 1e9 },
      { name: 'nvme', capacityBytes: 1e9 },
    ]);
    const policy: Policy = {
      name: 'scripted',
      decide(v, a) {
        if (v.step < 0) {
          // 0 hbm | 1 2 3 dram 16-bit | 4 dram 8-bit | 5 6 nvme 16-bit | 7 hbm | 8 dram 16-bit | 9 dram 4-bit
          for (const b of [1, 2, 3, 8]) a.demote(0, b, 'dram', 16);
          a.demote(0, 4, 'dram', 8);
          a.demote(0, 9, 'dram', 4);
          for (const b of [5, 6]) a.demote(0, b, 'nvme', 16);
        } else if (v.step === 0) {
          // 2 splits DRAM's run 1 2 3 4 into 1 | 3 4; 5 leaves NVMe's 6 a run of its own
          a.prefetch(0, 2);
          a.prefetch(0, 5);
        } else if (v.step === 1) {
          // 4 (8-bit) ends DRAM's run 1 2 3 4 early: 1 2 3 | 8 | 9; 9 staged then 3 promoted: 1 2 | 8
          a.prefetch(0, 4);
          a.prefetch(0, 9);
          a.promote(0, 3, 16);
        }
      },
      observe() {},
    };
    const ex = new Recorder();
    new ReplayDriver(h, cache, policy, ex, 20).run(trace, () => undefined);
    const b16 = cache.bytesOf(16);
    const b8 = cache.bytesOf(8);
    const b4 = cache.bytesOf(4);
    expect(ex.works).toEqual([
      // DRAM 1 | 3 4 | 8 9 (8 at 16 bits runs into 9) = 3 runs; NVMe 6 = 1 run
      { step: 0, stagedBytes: 2 * b16, fetchBytes: [0, 3 * b16 + b8 + b4, b16], fetchRuns: [0, 3, 1] },
      // DRAM 1 2 | 8 = 2 runs (3 now in HBM); NVMe 5 6 = 1 run
      { step: 1, stagedBytes: b8 + b4, fetchBytes: [0, 3 * b16, 2 * b16], fetchRuns: [0, 2, 1] },
      // nothing staged: DRAM 1 2 | 4 | 8 9 = 3 runs, NVMe 5 6 = 1 run
      { step: 2, stagedBytes: 0, fetchBytes: [0, 3 * b16 + b8 + b4, 2 * b16], fetchRuns: [0, 3, 1] },
    ]);
  });

  it('per-block staging over random layouts: fetch bytes and runs as the rule gives them over the blocks not staged', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const h = tinyHeader(120, 40, 1);
    const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
    const cache = new KVCache(tinyModel, 4, 1, 80, [
      { name: 'hbm', capacityBytes: 1e9 },
      { name: 'dram', capacityBytes: 1e9 },
      { name: 'nvme', capacityBytes: 1e9 },
    ]);
    const tiers = ['hbm', 'dram', 'nvme'];
    const want: { stagedBytes: number; fetchBytes: number[]; fetchRuns: number[] }[] = [];
    const policy: Policy = {
      name: 'random',
      decide(v, a) {
        const c = v.cache;
        const n = c.created[0];
        // random moves down (and sometimes back up), then random per-block prefetches
        for (let k = 0; k < 6; k++) {
          const b = Math.floor(rnd() * n);
          const t = c.tierOf(0, b);
          if (t < 0) continue;
          if (t > 0 && rnd() < 0.3) a.promote(0, b, 16);
          else if (t < 2) a.demote(0, b, tiers[t + 1], [16, 16, 8, 4][Math.floor(rnd() * 4)]);
        }
        if (v.step < 0) return;
        const staged = new Set<number>();
        for (let k = 0; k < 5; k++) {
          const b = Math.floor(rnd() * n);
          if (c.tierOf(0, b) > 0 && a.prefetch(0, b)) staged.add(b);
        }
        // the rule, over the live blocks below HBM (the block written after the decision is in HBM)
        const w = { stagedBytes: 0, fetchBytes: [0, 0, 0], fetchRuns: [0, 0, 0] };
        let open = -1;
        for (let b = 0; b < n; b++) {
          const t = c.tierOf(0, b);
          const bytes = c.bytesOf(c.bitsOf(0, b));
          if (t <= 0 || staged.has(b)) {
            if (t > 0) w.stagedBytes += bytes;
            open = -1;
            continue;
          }
          w.fetchBytes[t] += bytes;
          if (open !== t) w.fetchRuns[t]++;
          open = c.bitsOf(0, b) === 16 ? t : -1;
        }
        want.push(w);
      },
      observe() {},
    };
    const ex = new Recorder();
    new ReplayDriver(h, cache, policy, ex, 20).run(trace, () => undefined);
    expect(ex.works.map(({ stagedBytes, fetchBytes, fetchRuns }) => ({ stagedBytes, fetchBytes, fetchRuns }))).toEqual(want);
    expect(want.reduce((s, w) => s + w.stagedBytes, 0)).toBeGreaterThan(0);
    expect(want.reduce((s, w) => s + w.fetchRuns[1] + w.fetchRuns[2], 0)).toBeGreaterThan(0);
  });
});
