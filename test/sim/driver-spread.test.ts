/**
 * The replay driver's count of host-slot spread (sim/host-spread.ts) for copies whose blocks it does not
 * list to the executor: a bulk stage's blocks and a layer's fetches, per tier in block order, counted
 * only for an executor that prices spread; and the simulated executor paying spread_us for them. The
 * same for adjacent copies: blocks below full width copied after the block in the slot before them.
 */
import { describe, expect, it } from 'vitest';
import type { Executor, LayerWork, MoveBatch, StepTiming } from '../../sim/executor.js';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver } from '../../sim/replay-driver.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import type { Policy } from '../../policies/policy.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';

class Recorder implements Executor<number> {
  readonly kind = 'sim' as const;
  stages: { step: number; fromTier: number; blocks: number[]; spread: number }[] = [];
  works: { step: number; fetchRuns: number[]; fetchSpread: number[] | undefined }[] = [];
  private step = -1;
  constructor(readonly usesSpread: boolean) {}
  beginStep(step: number): void {
    this.step = step;
  }
  move(): number {
    return 0;
  }
  stage(b: MoveBatch): number {
    this.stages.push({ step: this.step, fromTier: b.fromTier, blocks: [...b.blocks], spread: b.spread ?? 0 });
    return 0;
  }
  layer(w: LayerWork): void {
    this.works.push({ step: w.step, fetchRuns: [...w.fetchRuns], fetchSpread: w.fetchSpread ? [...w.fetchSpread] : undefined });
  }
  endStep(): StepTiming {
    return { latency_us: 0, compute_us: 0, stall_us: 0, transfer_us: 0, bytes: {} };
  }
  finish(): Record<string, number> {
    return {};
  }
}

const lg = Math.log2;

// one layer, prompt 160 tokens = blocks 0..39 (4-token blocks); after prefill DRAM holds 1 2 9 30 31,
// NVMe holds 20 and 36. Step 0 stages both tiers in bulk; step 1 fetches every offloaded block; step 2
// skips 9 and fetches the rest; step 3 stages 2 alone, then the rest of DRAM in bulk
function replay(ex: Executor<number>): void {
  const h = tinyHeader(160, 4, 1);
  const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
  const cache = new KVCache(tinyModel, 4, 1, 44, [
    { name: 'hbm', capacityBytes: 64 * 60 },
    { name: 'dram', capacityBytes: 1e9 },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const policy: Policy = {
    name: 'scripted',
    decide(v, a) {
      if (v.step < 0) {
        if (v.nBlocks < 40) return;
        for (const b of [1, 2, 9, 30, 31]) a.demote(0, b, 'dram', 16);
        for (const b of [20, 36]) a.demote(0, b, 'nvme', 16);
      } else if (v.step === 0) a.prefetchOffloaded(0);
      else if (v.step === 2) a.skip(9);
      else if (v.step === 3) {
        a.prefetch(0, 2);
        a.prefetchOffloaded(0);
      }
    },
    observe() {},
  };
  new ReplayDriver(h, cache, policy, ex, 60).run(trace, () => undefined);
}

describe('the spread of bulk stages and fetches', () => {
  it('counts the doublings of the blocks a bulk stage or a fetch copies, per tier in block order', () => {
    const ex = new Recorder(true);
    replay(ex);
    // DRAM 1 2 9 30 31: gaps 1, 7, 21, 1; NVMe 20 36: gap 16
    const dram = lg(7 / 3) + lg(21 / 3);
    const nvme = lg(16 / 3);
    expect(ex.stages.map((s) => ({ ...s, spread: +s.spread.toFixed(12) }))).toEqual([
      { step: 0, fromTier: 1, blocks: [], spread: +dram.toFixed(12) },
      { step: 0, fromTier: 2, blocks: [], spread: +nvme.toFixed(12) },
      // step 3: 2 listed (its executor counts it); the bulk stage after it counts the blocks not yet
      // staged, 1 9 30 31: gaps 8, 21, 1 (the HIL's plan recorder lists a bulk stage's every block in the
      // tier, 2 again among them: a layer's later bulk stage is the one place the two differ)
      { step: 3, fromTier: 1, blocks: [2], spread: 0 },
      { step: 3, fromTier: 1, blocks: [], spread: +(lg(8 / 3) + lg(21 / 3)).toFixed(12) },
      { step: 3, fromTier: 2, blocks: [], spread: +nvme.toFixed(12) },
    ]);
    const works = ex.works.map((w) => ({ ...w, fetchSpread: w.fetchSpread!.map((x) => +x.toFixed(12)) }));
    expect(works).toEqual([
      // step 0 reads every offloaded block from its staged copy
      { step: 0, fetchRuns: [0, 0, 0], fetchSpread: [0, 0, 0] },
      // step 1 fetches them all: DRAM 1 2 | 9 | 30 31, NVMe 20 | 36
      { step: 1, fetchRuns: [0, 3, 2], fetchSpread: [0, +dram.toFixed(12), +nvme.toFixed(12)] },
      // step 2 skips 9: DRAM 1 2 | 30 31 (gap 28)
      { step: 2, fetchRuns: [0, 2, 2], fetchSpread: [0, +lg(28 / 3).toFixed(12), +nvme.toFixed(12)] },
      { step: 3, fetchRuns: [0, 0, 0], fetchSpread: [0, 0, 0] },
    ]);
  });

  it('counts nothing for an executor that does not price spread', () => {
    const ex = new Recorder(false);
    replay(ex);
    expect(ex.stages.every((s) => s.spread === 0)).toBe(true);
    expect(ex.works.every((w) => w.fetchSpread!.every((x) => x === 0))).toBe(true);
    expect(ex.works[1].fetchRuns).toEqual([0, 3, 2]);
  });

  it('the simulated executor pays spread_us for a bulk stage\'s and a fetch\'s doublings', () => {
    // PCIe 1 B/us, alpha 10 us per copy; spread_us 2 into HBM
    const run = (spread: boolean) => {
      const hw = tinyHardware();
      if (spread) hw.links[0].b_to_a.spread_us = 2;
      const ex = new SimExecutor(hw, tinyModel, { traceSteps: 100 });
      expect(ex.usesSpread).toBe(spread);
      ex.beginStep(0);
      ex.stage({ layer: 0, fromTier: 1, toTier: 0, fromBits: 16, toBits: 16, blocks: [], bytesFrom: 128, bytesTo: 128, reason: 'prefetch', runs: 2, spread: 3 });
      ex.layer(
        {
          step: 0,
          layer: 1,
          tokens: 8,
          residentBytes: 0,
          quantizedBytes: 0,
          stagedBytes: 0,
          fetchBytes: [0, 64, 0],
          fetchRuns: [0, 1, 0],
          fetchSpread: [0, 1.5, 0],
          nBlocks: 2,
          attendedMask: new Uint8Array([1, 1]),
          attendedCount: 2,
          kernel: 'fp16',
          mixedShare: 0,
        },
        [],
      );
      ex.finish();
      return ex.memory.busyUs;
    };
    // bulk stage 2 x 10 + 128 (+ 3 x 2); fetch 10 + 64 (+ 1.5 x 2)
    expect(run(false)).toBe(148 + 74);
    expect(run(true)).toBe(148 + 6 + 74 + 3);
  });
});

describe('adjacent copies of stages and fetches', () => {
  class AdjRecorder extends Recorder {
    adj: { step: number; listed: boolean; adjacent: number }[] = [];
    fetchAdj: { step: number; adjacent: number[] }[] = [];
    override stage(b: MoveBatch): number {
      this.adj.push({ step: this.stages.length === 0 ? -1 : 0, listed: b.blocks.length > 0, adjacent: b.adjacent ?? 0 });
      return super.stage(b);
    }
    override layer(w: LayerWork): void {
      this.fetchAdj.push({ step: w.step, adjacent: [...w.fetchAdjacent!] });
      super.layer(w);
    }
  }

  // one layer of 40 blocks; after prefill DRAM holds INT8 blocks 1 2 3 6 7 and the FP16 block 5. Step 0
  // prefetches 2 3 6 7 listed, step 1 fetches every offloaded block, step 2 stages DRAM in bulk
  function replayQuantized(ex: Executor<number>): void {
    const h = tinyHeader(160, 4, 1);
    const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
    const cache = new KVCache(tinyModel, 4, 1, 44, [
      { name: 'hbm', capacityBytes: 64 * 60 },
      { name: 'dram', capacityBytes: 1e9 },
    ]);
    const policy: Policy = {
      name: 'scripted',
      decide(v, a) {
        if (v.step < 0) {
          if (v.nBlocks < 40) return;
          for (const b of [1, 2, 3, 6, 7]) a.demote(0, b, 'dram', 8);
          a.demote(0, 5, 'dram', 16);
        } else if (v.step === 0) for (const b of [2, 3, 6, 7]) a.prefetch(0, b);
        else if (v.step === 2) a.prefetchOffloaded(0);
      },
      observe() {},
    };
    new ReplayDriver(h, cache, policy, ex, 60).run(trace, () => undefined);
  }

  it('counts the copies that follow the block in the slot before them, where that block is quantized', () => {
    const ex = new AdjRecorder(true);
    replayQuantized(ex);
    // step 0, listed 2 3 6 7: 3 after 2 and 7 after 6 (each quantized); step 2, in bulk 1 2 3 5 6 7:
    // 2 after 1, 3 after 2, 7 after 6 (6 after the FP16 block 5 joins its copy)
    expect(ex.stages.map((x) => x.blocks)).toEqual([[2, 3, 6, 7], []]);
    expect(ex.adj.map((x) => x.adjacent)).toEqual([2, 3]);
    // fetches: step 0 reads 1 and 5 (none adjacent); steps 1 and 3 every DRAM block: 2, 3 and 7 as
    // above; step 2 reads the bulk stage's copies
    expect(ex.fetchAdj.map((w) => w.adjacent)).toEqual([
      [0, 0],
      [0, 3],
      [0, 0],
      [0, 3],
    ]);
    const none = new AdjRecorder(false);
    replayQuantized(none);
    expect(none.adj.every((x) => x.adjacent === 0)).toBe(true);
  });

  it('the simulated executor takes adjacent_us off per adjacent copy into HBM, and prices spread with it on', () => {
    const run = (adjacent: number) => {
      const hw = tinyHardware();
      if (adjacent > 0) hw.links[0].b_to_a.adjacent_us = adjacent;
      const ex = new SimExecutor(hw, tinyModel, { traceSteps: 100 });
      expect(ex.usesSpread).toBe(adjacent > 0);
      ex.beginStep(0);
      ex.stage({ layer: 0, fromTier: 1, toTier: 0, fromBits: 8, toBits: 8, blocks: [], bytesFrom: 96, bytesTo: 96, reason: 'prefetch', runs: 3, spread: 0, adjacent: 2 });
      // a move into HBM of blocks 4 5 6 9 (each its own copy): 5 after 4, 6 after 5
      ex.move({ layer: 0, fromTier: 1, toTier: 0, fromBits: 8, toBits: 8, blocks: [4, 5, 6, 9], bytesFrom: 128, bytesTo: 128, reason: 'promote', runs: 4 });
      ex.finish();
      return ex.memory.busyUs;
    };
    // stage 3 x 10 + 96 (- 2 x 0.5); move 4 x 10 + 128 (- 2 x 0.5)
    expect(run(0)).toBe(126 + 168);
    expect(run(0.5)).toBe(126 - 1 + 168 - 1);
  });

  it('counts a move\'s adjacent copies less the blocks its runs join, none where it converts, and takes at most alpha a copy, not the first', () => {
    const one = (b: Partial<MoveBatch>, adjacent: number) => {
      const hw = tinyHardware();
      hw.links[0].b_to_a.adjacent_us = adjacent;
      const ex = new SimExecutor(hw, tinyModel, { traceSteps: 100 });
      ex.beginStep(0);
      ex.move({ layer: 0, fromTier: 1, toTier: 0, fromBits: 16, toBits: 16, blocks: [4, 5, 6, 7], bytesFrom: 128, bytesTo: 128, reason: 'promote', runs: 4, ...b });
      ex.finish();
      return ex.memory.busyUs;
    };
    // blocks 4 5 6 7 as 4 copies: 3 adjacent (4 x 10 + 128 - 3 x 0.5)
    expect(one({}, 0.5)).toBe(168 - 1.5);
    // as 2 copies (two blocks joined each): 3 consecutive pairs less 2 joined = 1 adjacent (2 x 10 + 128 - 0.5)
    expect(one({ runs: 2 }, 0.5)).toBe(148 - 0.5);
    // as 1 copy: none
    expect(one({ runs: 1 }, 0.5)).toBe(138);
    // converted on the way (each block to scratch, a kernel between): none
    expect(one({ fromBits: 8 }, 0.5)).toBe(one({ fromBits: 8 }, 0));
    expect(one({ fromBits: 8 }, 0)).toBeGreaterThan(168);
    // a price above the alpha (10 us): 10 a copy at most, 3 x 10 off 4 copies of 10 + their bytes
    expect(one({}, 25)).toBe(168 - 30);
    // a stage listing more adjacent copies than it has copies after its first: counted up to runs - 1
    const hw = tinyHardware();
    hw.links[0].b_to_a.adjacent_us = 0.5;
    const ex = new SimExecutor(hw, tinyModel, { traceSteps: 100 });
    ex.beginStep(0);
    ex.stage({ layer: 0, fromTier: 1, toTier: 0, fromBits: 8, toBits: 8, blocks: [], bytesFrom: 96, bytesTo: 96, reason: 'prefetch', runs: 3, spread: 0, adjacent: 7 });
    ex.finish();
    expect(ex.memory.busyUs).toBe(126 - 1);
  });
});
