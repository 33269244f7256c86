/**
 * The simulator reuses the objects of ended work: the flow network its finished transfers sent with a sink
 * (FlowNetwork.reuseFlows), the executor its ended copy ops (SimExecutor.reuseOps), a stream its ended
 * kernel tasks (Stream.reuseTasks). A reused object must behave as a new one: each is replayed against
 * the same run with every object new (the flags off), which must give the same timeline to the bit, on
 * random transfers (some sent with a sink, some with a signal, some ending at once, some queued for a
 * copy engine) and on random executor call sequences on several machines (storage tiers, chained
 * stages, conversions, the staging ring, tail waits, a host clock).
 */
import { describe, expect, it } from 'vitest';
import { Engine } from '../../sim/engine.js';
import { FlowNetwork, type FlowSink, type Resource } from '../../sim/flow-network.js';
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

/** the free list of an object that keeps one (private: read here to see that reuse happened) */
function freeCount(x: unknown, field: string): number {
  return ((x as Record<string, unknown[]>)[field] ?? []).length;
}

/**
 * Random transfers on three resources (two with copy engines): chains (a sink that sends the next
 * one, as a stream's next copy), transfers with a signal between them, some of no bytes or no alpha.
 * Returns every transfer's start and end, the resources' bytes, and whether a flow was reused.
 */
function network(seed: number, reuse: boolean): { log: number[]; bytes: number[]; reused: boolean } {
  const r = rng(seed);
  const e = new Engine();
  const net = new FlowNetwork(e);
  net.reuseFlows = reuse;
  const res: Resource[] = [net.addResource('a', 1 + r() * 3, 2), net.addResource('b', 0.5 + r(), 1), net.addResource('c', 2 + r() * 5)];
  const routes = [[res[0]], [res[1]], [res[0], res[2]], [res[2]], [res[1], res[2]]];
  const log: number[] = [];
  let id = 0;
  let reused = false;
  const start = (chain: number) => {
    const me = id++;
    const route = routes[Math.floor(r() * routes.length)];
    const bytes = r() < 0.1 ? 0 : Math.floor(1 + r() * 4000) * (r() < 0.5 ? 1 : 1.37);
    const alpha = r() < 0.15 ? 0 : r() * 30;
    log.push(me, -1, e.now);
    if (r() < 0.2) {
      // a transfer with a signal (never reused): its end starts nothing
      const t = net.transfer(route, bytes, alpha);
      t.done.then(() => log.push(me, t.id, e.now, t.flowStart));
      return;
    }
    if (freeCount(net, 'free') > 0) reused = true;
    const sink: FlowSink = {
      flowDone: () => {
        log.push(me, -2, e.now);
        if (chain > 0) start(chain - 1);
        if (r() < 0.2) e.after(r() < 0.5 ? 0 : r() * 20, () => (r() < 0.5 ? start(0) : undefined), Math.floor(r() * 3));
      },
    };
    net.send(route, bytes, alpha, sink);
  };
  for (let i = 0; i < 40; i++) e.at(Math.floor(r() * 3000), () => start(Math.floor(r() * 8)), Math.floor(r() * 3));
  e.run();
  return { log, bytes: res.map((x) => x.bytes), reused };
}

describe('reused flows', () => {
  it('random transfers start and end at the same times with flows reused or all new', () => {
    let reused = 0;
    for (let seed = 1; seed <= 80; seed++) {
      const a = network(seed, true);
      const b = network(seed, false);
      expect(a.log).toEqual(b.log);
      expect(a.bytes).toEqual(b.bytes);
      expect(b.reused).toBe(false);
      if (a.reused) reused++;
    }
    expect(reused).toBeGreaterThan(60);
  });
});

type Call = { kind: 'begin'; step: number } | { kind: 'move' | 'stage'; batch: MoveBatch } | { kind: 'layer'; layer: number; step: number; fetch: number[]; runs: number[] } | { kind: 'end' };

/** a random replay's executor calls over `tiers` tiers: per layer, moves and runs of single-block stages, then the layer */
function calls(seed: number, steps: number, layers: number, tiers: number, blockBytes: number): Call[] {
  const r = rng(seed);
  const out: Call[] = [];
  const pick = (n: number) => Math.floor(r() * n);
  const host = () => 1 + pick(tiers - 1);
  for (let s = 0; s < steps; s++) {
    out.push({ kind: 'begin', step: s });
    for (let l = 0; l < layers; l++) {
      for (let i = 0, n = pick(6); i < n; i++) {
        const u = r();
        const bytes = blockBytes * (1 + pick(3));
        if (u < 0.45) {
          // a run of stages from one tier (chained on the memory stream), sometimes of another precision
          const tier = host();
          const bits = r() < 0.7 ? 16 : 4;
          for (let k = 0, m = 1 + pick(8); k < m; k++) {
            const b = r() < 0.5 ? bytes : bytes / 4;
            out.push({ kind: 'stage', batch: { layer: l, reason: 'prefetch', fromTier: tier, toTier: 0, fromBits: bits, toBits: bits, blocks: [pick(64)], bytesFrom: b, bytesTo: b, runs: 1 } });
          }
        } else if (u < 0.7) {
          const n = 1 + pick(3);
          out.push({ kind: 'move', batch: { layer: l, reason: 'demote', fromTier: 0, toTier: host(), fromBits: 16, toBits: r() < 0.5 ? 16 : 4, blocks: Array.from({ length: n }, () => pick(64)), bytesFrom: n * bytes, bytesTo: n * bytes, runs: n } });
        } else if (u < 0.85) {
          out.push({ kind: 'move', batch: { layer: l, reason: 'promote', fromTier: host(), toTier: 0, fromBits: r() < 0.5 ? 16 : 4, toBits: 16, blocks: [pick(64)], bytesFrom: bytes, bytesTo: bytes, runs: 1 } });
        } else {
          const from = host();
          const to = host();
          out.push({ kind: 'move', batch: { layer: l, reason: 'demote', fromTier: from, toTier: to, fromBits: 4, toBits: from === to ? 2 : 4, blocks: [pick(64), pick(64)], bytesFrom: bytes / 2, bytesTo: bytes / 4, runs: 2 } });
        }
      }
      const fetch = Array.from({ length: tiers }, (_, t) => (t > 0 && r() < 0.4 ? blockBytes * pick(4) : 0));
      out.push({ kind: 'layer', layer: l, step: s, fetch, runs: fetch.map((f) => (f > 0 ? 1 + pick(3) : 0)) });
    }
    out.push({ kind: 'end' });
  }
  return out;
}

/** replay `cs` on an executor that reuses ended objects or makes every one new */
function replay(hw: HardwareProfile, opts: SimExecutorOptions, cs: Call[], reuse: boolean): { timings: StepTiming[]; totals: number[]; spans: string; reused: number } {
  const ex = new SimExecutor(hw, { ...tinyModel, layers: 2 }, opts);
  ex.reuseOps = reuse;
  ex.topology.network.reuseFlows = reuse;
  const streams = [ex.compute, ex.memory, ex.host, ...(ex.weights ? [ex.weights] : [])];
  for (const s of streams) s.reuseTasks = reuse;
  const pending: Signal[][] = [[], []];
  const timings: StepTiming[] = [];
  let reused = 0;
  const free = () => freeCount(ex, 'freeOps') + freeCount(ex.topology.network, 'free') + streams.reduce((n, s) => n + s.freeKernels.length, 0);
  for (const c of cs) {
    if (c.kind === 'begin') {
      ex.beginStep(c.step);
      reused += free();
    } else if (c.kind === 'move') {
      const h = ex.move(c.batch);
      if (c.batch.toTier === 0) pending[c.batch.layer].push(h);
    } else if (c.kind === 'stage') pending[c.batch.layer].push(ex.stage(c.batch));
    else if (c.kind === 'layer') {
      ex.layer(tinyLayerWork(c.layer, { step: c.step, fetchBytes: c.fetch, fetchRuns: c.runs }), pending[c.layer]);
      pending[c.layer] = [];
    } else timings.push(ex.endStep());
  }
  const bytes = ex.finish();
  const totals = [ex.engine.now, ex.engine.executed, ex.memory.busyUs, ex.memory.stallUs, ex.host.busyUs, ex.host.stallUs, ex.compute.busyUs, ex.compute.stallUs, ex.weights?.busyUs ?? 0, ...Object.values(bytes)];
  return { timings, totals, spans: JSON.stringify(ex.spans), reused };
}

function tiny(edit: (hw: HardwareProfile) => void = () => {}): HardwareProfile {
  const hw = tinyHardware();
  edit(hw);
  return hw;
}

const machines: [string, HardwareProfile, number, Partial<SimExecutorOptions>?][] = [
  ['tiny (an NVMe tier without alpha)', tiny(), 64],
  ['conversion kernels on the memory stream', tiny((hw) => Object.assign(hw.gpu, { convert_kernel_us: 3, convert_kernel_under_compute_us: 5 })), 64],
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
  ['weights streamed over one copy engine', tiny((hw) => (hw.links[0].copy_engines = 1)), 64, { weightStreaming: { tier: 'dram', buffers: 1, layerBytes: 300 } }],
  ['a host clock slower than the copies', tiny((hw) => Object.assign(hw.gpu, { issue_copy_us: 150, issue_record_us: 3, issue_kernel_us: 5, copy_batch_us: 2 })), 64],
  ['h100-pcie5', loadHardware('h100-pcie5'), 1 << 17],
  ['dpnc-4tier', loadHardware('dpnc-4tier'), 1 << 16],
];

describe('executor timelines with ended objects reused', () => {
  for (const [name, hw, blockBytes, extra] of machines) {
    it(`the same timeline as with every object new: ${name}`, () => {
      let reused = 0;
      for (let seed = 1; seed <= 5; seed++) {
        const cs = calls(seed * 7919 + blockBytes, 10, 2, hw.tiers.length, blockBytes);
        for (const staging of [undefined, { ringBytes: 6 * blockBytes, fence: 'eager' as const }, { ringBytes: 3 * blockBytes, fence: 'lazy' as const }]) {
          for (const tailWaits of [false, true]) {
            const opts: SimExecutorOptions = { traceSteps: seed === 1 ? 3 : 0, staging, tailWaits, ...extra };
            const a = replay(hw, opts, cs, true);
            const b = replay(hw, opts, cs, false);
            expect(a.timings).toEqual(b.timings);
            expect(a.totals).toEqual(b.totals);
            expect(a.spans).toBe(b.spans);
            expect(b.reused).toBe(0);
            reused += a.reused;
          }
        }
      }
      expect(reused).toBeGreaterThan(100);
    });
  }
});
