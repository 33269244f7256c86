/**
 * A transfer's alpha event handles the next end of a transfer at once (the clock moved on to it) when
 * nothing else is due until then and the engine's running loop would run a tick there
 * (FlowNetwork.inlineTicks, on by default). The timeline must be the same to the bit as with a tick
 * event per end: random transfers on a shared network, run in slices by run(until), runBefore(t) and
 * step(), and random executor call sequences on several machines, each replayed both ways.
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

/**
 * Random transfers on three resources (one with two copy engines): some start at scheduled times,
 * some when another ends (a chain, as a stream's next copy), some from other events; the engine is
 * driven in slices. Returns every transfer's end time and the resources' bytes, in order.
 */
function network(seed: number, inline: boolean, drive: 'run' | 'slices' | 'step'): { ends: number[]; bytes: number[]; inlined: number } {
  const r = rng(seed);
  const e = new Engine();
  const net = new FlowNetwork(e);
  net.inlineTicks = inline;
  const res: Resource[] = [net.addResource('a', 1 + r() * 3, 2), net.addResource('b', 0.5 + r()), net.addResource('c', 2 + r() * 5)];
  const routes = [[res[0]], [res[1]], [res[0], res[2]], [res[2]], [res[1], res[2]]];
  const ends: number[] = [];
  let id = 0;
  const start = (chain: number) => {
    const me = id++;
    const route = routes[Math.floor(r() * routes.length)];
    const bytes = r() < 0.1 ? 0 : Math.floor(1 + r() * 4000) * (r() < 0.5 ? 1 : 1.37);
    const alpha = r() < 0.15 ? 0 : r() * 30;
    const sink: FlowSink = {
      flowDone: () => {
        ends[me] = e.now;
        if (chain > 0) start(chain - 1);
        // sometimes an event of another kind at this time or a little later
        if (r() < 0.2) e.after(r() < 0.5 ? 0 : r() * 20, () => (r() < 0.5 ? start(0) : undefined), Math.floor(r() * 3));
      },
    };
    net.send(route, bytes, alpha, sink);
  };
  for (let i = 0; i < 40; i++) e.at(Math.floor(r() * 3000), () => start(Math.floor(r() * 8)), Math.floor(r() * 3));
  if (drive === 'run') e.run();
  else if (drive === 'slices') {
    for (let t = 0; e.pending > 0; t += 37) {
      if (t % 2) e.run(t);
      else e.runBefore(t);
    }
  } else while (e.step());
  return { ends, bytes: res.map((x) => x.bytes), inlined: net.inlined };
}

describe('ends handled by alpha events', () => {
  it('random transfers end at the same times, driven whole, in slices or event by event', () => {
    let inlined = 0;
    for (let seed = 1; seed <= 60; seed++) {
      for (const drive of ['run', 'slices', 'step'] as const) {
        const ahead = network(seed, true, drive);
        const ticks = network(seed, false, drive);
        expect(ahead.ends).toEqual(ticks.ends);
        expect(ahead.bytes).toEqual(ticks.bytes);
        expect(ticks.inlined).toBe(0);
        inlined += ahead.inlined;
      }
    }
    expect(inlined).toBeGreaterThan(1000);
  });

  it('an engine runs nothing past its loop limit: runBefore(t) stops before t, run(t) at t', () => {
    const e = new Engine();
    const net = new FlowNetwork(e);
    const r = net.addResource('r', 0.001);
    const ends: number[] = [];
    // alpha 10, then 1 byte at 1 B/us: ends at 11
    net.send([r], 1, 10, { flowDone: () => ends.push(e.now) });
    e.runBefore(11);
    expect(ends).toEqual([]);
    expect(net.inlined).toBe(0);
    e.run(11);
    expect(ends).toEqual([11]);
    // with room in the loop the alpha event handles the end
    net.send([r], 1, 10, { flowDone: () => ends.push(e.now) });
    e.run();
    expect(ends).toEqual([11, 22]);
    expect(net.inlined).toBe(1);
  });

  it('an event due at the same time as the end runs first, as it would before the tick', () => {
    for (const inline of [true, false]) {
      const e = new Engine();
      const net = new FlowNetwork(e);
      net.inlineTicks = inline;
      const r = net.addResource('r', 0.001);
      const seen: number[] = [];
      // the end is due at 11; an event of a lower priority number, due then, reads the bytes moved so far
      e.at(11, () => seen.push(r.bytes), 0);
      net.send([r], 1, 10, { flowDone: () => seen.push(e.now) });
      e.run();
      expect(seen).toEqual([0, 11]);
      expect(net.inlined).toBe(0);
    }
  });
});

type Call = { kind: 'begin'; step: number } | { kind: 'move' | 'stage'; batch: MoveBatch } | { kind: 'layer'; layer: number; step: number; fetch: number[]; runs: number[] } | { kind: 'end' };

/** a random replay's executor calls: per layer, moves and runs of single-block stages, then the layer */
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
        if (u < 0.45) {
          const tier = r() < 0.75 ? 1 : 2;
          for (let k = 0, m = 1 + pick(8); k < m; k++) {
            const b = r() < 0.5 ? bytes : bytes / 4;
            out.push({ kind: 'stage', batch: { layer: l, reason: 'prefetch', fromTier: tier, toTier: tier, fromBits: 16, toBits: 16, blocks: [pick(64)], bytesFrom: b, bytesTo: b, runs: 1 } });
          }
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

/** replay `cs` on an executor whose network handles ends on alpha events or not */
function replay(hw: HardwareProfile, opts: SimExecutorOptions, cs: Call[], inline: boolean): { timings: StepTiming[]; totals: number[]; spans: string; inlined: number } {
  const ex = new SimExecutor(hw, { ...tinyModel, layers: 2 }, opts);
  ex.topology.network.inlineTicks = inline;
  const pending: Signal[][] = [[], []];
  const timings: StepTiming[] = [];
  for (const c of cs) {
    if (c.kind === 'begin') ex.beginStep(c.step);
    else if (c.kind === 'move') {
      const h = ex.move(c.batch);
      if (c.batch.toTier === 0) pending[c.batch.layer].push(h);
    } else if (c.kind === 'stage') pending[c.batch.layer].push(ex.stage(c.batch));
    else if (c.kind === 'layer') {
      ex.layer(tinyLayerWork(c.layer, { step: c.step, fetchBytes: c.fetch, fetchRuns: c.runs }), pending[c.layer]);
      pending[c.layer] = [];
    } else timings.push(ex.endStep());
  }
  const bytes = ex.finish();
  const totals = [ex.engine.now, ex.memory.busyUs, ex.memory.stallUs, ex.host.busyUs, ex.host.stallUs, ex.compute.busyUs, ex.compute.stallUs, ex.weights?.busyUs ?? 0, ...Object.values(bytes)];
  return { timings, totals, spans: JSON.stringify(ex.spans), inlined: ex.topology.network.inlined };
}

function tiny(edit: (hw: HardwareProfile) => void = () => {}): HardwareProfile {
  const hw = tinyHardware();
  edit(hw);
  return hw;
}

const machines: [string, HardwareProfile, number, Partial<SimExecutorOptions>?][] = [
  ['tiny', tiny(), 64],
  ['no alpha on the link into HBM', tiny((hw) => (hw.links[0].b_to_a.alpha_us = 0)), 64],
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

describe('executor timelines with ends handled by alpha events', () => {
  for (const [name, hw, blockBytes, extra] of machines) {
    it(`the same timeline as a tick per end: ${name}`, () => {
      let inlined = 0;
      for (let seed = 1; seed <= 5; seed++) {
        const cs = calls(seed * 104729 + blockBytes, 10, 2, blockBytes);
        for (const staging of [undefined, { ringBytes: 6 * blockBytes, fence: 'eager' as const }]) {
          for (const tailWaits of [false, true]) {
            const opts: SimExecutorOptions = { traceSteps: seed === 1 ? 3 : 0, staging, tailWaits, ...extra };
            const ahead = replay(hw, opts, cs, true);
            const ticks = replay(hw, opts, cs, false);
            expect(ahead.timings).toEqual(ticks.timings);
            expect(ahead.totals).toEqual(ticks.totals);
            expect(ahead.spans).toBe(ticks.spans);
            inlined += ahead.inlined;
          }
        }
      }
      expect(inlined).toBeGreaterThan(50);
    });
  }
});
