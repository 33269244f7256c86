/**
 * A stage that continues a run of listed stages (one layer and tier) runs as the next part of the
 * run's copy op (SimExecutor option chainStages, on by default) instead of as an op of its own. The
 * timeline must be the same to the bit: random call sequences are replayed on an executor with the
 * parts and on one that gives every stage its own op (chainStages false), on machines that take each
 * way a part can start (at once; on a start event when its route has no alpha, a transfer is queued
 * for the copy engine or the host issues it later; after a copy's time beside GEMVs), with and
 * without the staging ring and tail waits, and the step timings, stream totals and spans are compared.
 */
import { describe, expect, it } from 'vitest';
import { SimExecutor, type SimExecutorOptions } from '../../sim/sim-executor.js';
import type { MoveBatch, StepTiming } from '../../sim/executor.js';
import type { HardwareProfile } from '../../sim/hardware/profile.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import type { Signal } from '../../sim/signal.js';
import { tinyHardware, tinyLayerWork, tinyModel } from '../helpers/tiny.js';

/** mulberry32: a seeded generator in [0, 1) */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Call =
  | { kind: 'begin'; step: number }
  | { kind: 'move' | 'stage'; batch: MoveBatch }
  | { kind: 'layer'; layer: number; step: number; fetch: number[]; runs: number[] }
  | { kind: 'end' };

/** a random replay's executor calls: per layer, moves and runs of single-block stages (some bulk), then the layer */
function calls(seed: number, steps: number, layers: number, blockBytes: number): Call[] {
  const r = rng(seed);
  const out: Call[] = [];
  const pick = (n: number) => Math.floor(r() * n);
  for (let s = 0; s < steps; s++) {
    out.push({ kind: 'begin', step: s });
    for (let l = 0; l < layers; l++) {
      for (let i = 0, n = pick(6); i < n; i++) {
        const u = r();
        const bytes = blockBytes * (1 + pick(3));
        if (u < 0.4) {
          // a run of stages of one tier (dram or nvme), quantized or not
          const tier = r() < 0.75 ? 1 : 2;
          for (let k = 0, m = 1 + pick(6); k < m; k++) {
            const bits = r() < 0.5 ? 16 : 4;
            const b = bits === 16 ? bytes : bytes / 4;
            out.push({ kind: 'stage', batch: { layer: l, reason: 'prefetch', fromTier: tier, toTier: tier, fromBits: bits, toBits: bits, blocks: [pick(64)], bytesFrom: b, bytesTo: b, runs: 1 } });
          }
        } else if (u < 0.5) {
          const tier = 1 + pick(2);
          out.push({ kind: 'stage', batch: { layer: l, reason: 'prefetch', fromTier: tier, toTier: tier, fromBits: 16, toBits: 16, blocks: [], bytesFrom: 3 * bytes, bytesTo: 3 * bytes, runs: 1 + pick(3) } });
        } else if (u < 0.7) {
          const to = 1 + pick(2);
          const n = 1 + pick(3);
          out.push({ kind: 'move', batch: { layer: l, reason: 'demote', fromTier: 0, toTier: to, fromBits: 16, toBits: r() < 0.5 ? 16 : 4, blocks: Array.from({ length: n }, () => pick(64)), bytesFrom: n * bytes, bytesTo: n * bytes, runs: n } });
        } else if (u < 0.85) {
          const from = 1 + pick(2);
          out.push({ kind: 'move', batch: { layer: l, reason: 'promote', fromTier: from, toTier: 0, fromBits: 16, toBits: 16, blocks: [pick(64)], bytesFrom: bytes, bytesTo: bytes, runs: 1 } });
        } else {
          out.push({ kind: 'move', batch: { layer: l, reason: 'demote', fromTier: 1, toTier: 2, fromBits: 4, toBits: 2, blocks: [pick(64), pick(64)], bytesFrom: bytes / 2, bytesTo: bytes / 4, runs: 2 } });
        }
      }
      const fetch = [0, r() < 0.5 ? blockBytes * pick(4) : 0, r() < 0.3 ? blockBytes * pick(3) : 0];
      out.push({ kind: 'layer', layer: l, step: s, fetch, runs: fetch.map((f) => (f > 0 ? 1 + pick(3) : 0)) });
    }
    out.push({ kind: 'end' });
  }
  return out;
}

interface Outcome {
  timings: StepTiming[];
  totals: number[];
  spans: number;
  parts: number;
}

/** replay `cs` on an executor (handles of stages and promotions waited by their layer, as the driver does) */
function replay(hw: HardwareProfile, opts: SimExecutorOptions, cs: Call[]): Outcome {
  const ex = new SimExecutor(hw, { ...tinyModel, layers: 2 }, opts);
  const pending: Signal[][] = [[], []];
  const timings: StepTiming[] = [];
  let parts = 0;
  let last: Signal | null = null;
  for (const c of cs) {
    if (c.kind === 'begin') ex.beginStep(c.step);
    else if (c.kind === 'move') {
      const h = ex.move(c.batch);
      if (c.batch.toTier === 0) pending[c.batch.layer].push(h);
      last = null;
    } else if (c.kind === 'stage') {
      const h = ex.stage(c.batch);
      if (h === last) parts++;
      last = h;
      pending[c.batch.layer].push(h);
    } else if (c.kind === 'layer') {
      ex.layer(tinyLayerWork(c.layer, { step: c.step, fetchBytes: c.fetch, fetchRuns: c.runs }), pending[c.layer]);
      pending[c.layer] = [];
      last = null;
    } else {
      timings.push(ex.endStep());
      last = null;
    }
  }
  ex.finish();
  const totals = [ex.engine.now, ex.memory.busyUs, ex.memory.stallUs, ex.host.busyUs, ex.host.stallUs, ex.compute.busyUs, ex.compute.stallUs, ex.weights?.busyUs ?? 0];
  return { timings, totals, spans: ex.spans.length, parts };
}

/** the tiny machine with `edit` applied */
function tiny(edit: (hw: HardwareProfile) => void = () => {}): HardwareProfile {
  const hw = tinyHardware();
  edit(hw);
  return hw;
}

const machines: [string, HardwareProfile, number, Partial<SimExecutorOptions>?][] = [
  ['tiny (parts start at once)', tiny(), 64],
  ['no alpha on the link into HBM (parts start on an event)', tiny((hw) => (hw.links[0].b_to_a.alpha_us = 0)), 64],
  [
    'copies priced beside GEMVs, a batch cost, direction switches, slowed kernels',
    tiny((hw) => {
      hw.gpu.copy_under_compute = 'gemv';
      hw.gpu.copy_batch_us = 7;
      hw.gpu.kernel_slowdown_under_h2d = 0.25;
      hw.gpu.kernel_slowdown_under_d2h = 0.125;
      for (const d of [hw.links[0].a_to_b, hw.links[0].b_to_a]) Object.assign(d, { alpha_under_compute_us: 14, switch_us: 3, switch_under_compute_us: 5, GBps_under_compute: 0.0005 });
    }),
    64,
  ],
  [
    'alphas priced at the start under compute',
    tiny((hw) => {
      hw.gpu.copy_under_compute = 'start';
      for (const d of [hw.links[0].a_to_b, hw.links[0].b_to_a]) d.alpha_under_compute_us = 4;
    }),
    64,
  ],
  ['weights streamed over one copy engine (transfers queue for it)', tiny((hw) => (hw.links[0].copy_engines = 1)), 64, { weightStreaming: { tier: 'dram', buffers: 1, layerBytes: 300 } }],
  [
    'a host clock slower than the copies (parts wait to be issued)',
    tiny((hw) => Object.assign(hw.gpu, { issue_copy_us: 150, issue_record_us: 3, issue_kernel_us: 5, copy_batch_us: 2 })),
    64,
  ],
  ['h100-pcie5', loadHardware('h100-pcie5'), 1 << 17],
];

describe('stage runs as parts of one copy op', () => {
  for (const [name, hw, blockBytes, extra] of machines) {
    it(`the same timeline as an op per stage: ${name}`, () => {
      let parts = 0;
      for (let seed = 1; seed <= 6; seed++) {
        const cs = calls(seed * 7919 + blockBytes, 12, 2, blockBytes);
        for (const staging of [undefined, { ringBytes: 6 * blockBytes, fence: 'eager' as const }, { ringBytes: 4 * blockBytes, fence: 'lazy' as const }]) {
          for (const tailWaits of [false, true]) {
            const opts: SimExecutorOptions = { traceSteps: seed === 1 ? 3 : 0, staging, tailWaits, ...extra };
            const chained = replay(hw, opts, cs);
            const reference = replay(hw, { ...opts, chainStages: false }, cs);
            expect(chained.timings).toEqual(reference.timings);
            expect(chained.totals).toEqual(reference.totals);
            expect(chained.spans).toBe(reference.spans);
            expect(reference.parts).toBe(0);
            parts += chained.parts;
          }
        }
      }
      // the sequences do make parts
      expect(parts).toBeGreaterThan(100);
    });
  }

  it('a traced step, a storage tier, another layer and a move between each start an op of their own', () => {
    const hw = tinyHardware();
    const stage = (layer: number, tier: number, block: number): MoveBatch => ({ layer, reason: 'prefetch', fromTier: tier, toTier: tier, fromBits: 16, toBits: 16, blocks: [block], bytesFrom: 64, bytesTo: 64, runs: 1 });
    const ex = new SimExecutor(hw, tinyModel, { traceSteps: 1, tailWaits: true });
    ex.beginStep(0);
    expect(ex.stage(stage(0, 1, 0))).not.toBe(ex.stage(stage(0, 1, 1))); // traced
    ex.endStep();
    ex.beginStep(1);
    const a = ex.stage(stage(0, 1, 0));
    expect(ex.stage(stage(0, 1, 1))).toBe(a); // a part of a's op
    expect(ex.stage(stage(0, 2, 2))).not.toBe(ex.stage(stage(0, 2, 3))); // nvme: two legs per stage
    const b = ex.stage(stage(1, 1, 4));
    expect(b).not.toBe(a);
    ex.move({ ...stage(1, 0, 9), toTier: 1, reason: 'demote' });
    expect(ex.stage(stage(1, 1, 5))).not.toBe(b);
    ex.endStep();
    ex.finish();
    // every copy ran on the memory stream, 64 bytes at 1 B/us after alpha 10: the two traced stages,
    // the two parts of a's op, the two nvme stages' second legs, b, the move and the last stage
    expect(ex.memory.busyUs).toBe(9 * 74);
  });

  it('a stage that waits for the ring starts an op of its own', () => {
    const hw = tinyHardware();
    const stage = (layer: number, block: number): MoveBatch => ({ layer, reason: 'prefetch', fromTier: 1, toTier: 1, fromBits: 16, toBits: 16, blocks: [block], bytesFrom: 64, bytesTo: 64, runs: 1 });
    // a ring of three blocks: layer 0's two stages fill [0, 128); layer 1's first goes to [128, 192),
    // its second wraps to [0, 64), which layer 0's attention reads: it waits for that attention
    const ex = new SimExecutor(hw, tinyModel, { traceSteps: 0, staging: { ringBytes: 192, fence: 'eager' }, tailWaits: true });
    ex.beginStep(0);
    const a = ex.stage(stage(0, 0));
    expect(ex.stage(stage(0, 1))).toBe(a);
    ex.layer(tinyLayerWork(0, { residentBytes: 1000 }), [a]);
    const b = ex.stage(stage(1, 2));
    const c = ex.stage(stage(1, 3));
    expect(c).not.toBe(b);
    ex.layer(tinyLayerWork(1), [b, c]);
    ex.endStep();
    // a's op: two copies of 64 bytes at 1 B/us after alpha 10 each, 0 -> 74 -> 148; layer 0's attention
    // reads 1000 bytes, 148 -> 1148; b's copy 148 -> 222; c's copy starts when that attention has
    // ended: 1148 -> 1222
    expect([a.at, b.at, c.at]).toEqual([148, 222, 1222]);
  });
});
