// The layer-wise prefetch bench (hil/bench/prefetch-bench.ts): its accounting on a scripted machine
// (exact timelines by hand: copies that fit, copies that do not, kernels slowed by copies), and the
// whole bench on the host backend against real streams and buffers.
import { describe, expect, it } from 'vitest';
import { openBackend } from '../../hil/backend.js';
import { ComputeGate } from '../../hil/bench/gate.js';
import { benchPrefetch, runPrefetch } from '../../hil/bench/prefetch-bench.js';
import { backendAvailability } from './availability.js';
import { ScriptedGpu } from './scripted-gpu.js';

const host = backendAvailability('host');

/** 4 layers; attention `attnMs` per layer (`slowMs` in a trial with copies), `copyMs` per layer's copies */
async function scripted(attnMs: number, copyMs: number, slowMs = attnMs, paced = false, eventMs = 0) {
  const m = new ScriptedGpu(0.045, 0.005, eventMs);
  const gate = await ComputeGate.open(m.asBackend(), 64, () => m.host);
  let both = false; // the trial being queued has kernels and copies
  const hold = gate.hold.bind(gate);
  gate.hold = (kind: string) => {
    both = kind === 'prefetch:truetrue';
    hold(kind);
  };
  const events = m.liveEvents();
  const row = await runPrefetch(m.asBackend(), gate, {
    layers: 4,
    copyBytes: 4 << 20,
    paced,
    copies: () => m.op(0.01, copyMs, 'memory'),
    attention: () => m.op(0.01, both ? slowMs : attnMs),
  });
  expect(m.liveEvents()).toBe(events); // every event of the bench destroyed
  gate.free();
  return row;
}

describe('prefetch accounting on a scripted machine', () => {
  it('copies that fit under each layer: no stall, masking 1', async () => {
    const r = await scripted(0.058, 0.041);
    expect(r.gateHeld).toBe(15);
    expect(r.copyMs).toBeCloseTo(0.164, 9); // 4 x 41 us back to back
    expect(r.computeMs).toBeCloseTo(0.232, 9);
    expect(r.latencyMs).toBeCloseTo(0.232, 9); // the last copy (at 164 us) is in before the last layer ends
    expect(r.stallMs).toBeCloseTo(0, 9);
    expect(r.maskingEfficiency).toBe(1);
    expect(r.layersStalled).toBe(0);
    expect(r.copyUnderComputeMs).toBeCloseTo(0.164, 9);
    expect(r.lastTrial.ready).toHaveLength(4);
    r.lastTrial.ready.forEach((t, l) => expect(t).toBeCloseTo(0.058 * (l + 1), 9)); // each layer starts when the one before ends
  });
  it('copies slower than the layers: each layer waits 22 us for its data', async () => {
    const r = await scripted(0.058, 0.08);
    // copies end at 80, 160, 240, 320 us; layers run 0-58, 80-138, 160-218, 240-298, then the wait to 320
    expect(r.copyMs).toBeCloseTo(0.32, 9);
    expect(r.latencyMs).toBeCloseTo(0.32, 9);
    expect(r.computeUnderCopiesMs).toBeCloseTo(0.232, 9);
    expect(r.stallMs).toBeCloseTo(0.088, 9);
    expect(r.maskingEfficiency).toBeCloseTo(1 - 0.088 / 0.32, 9);
    expect(r.maskingCountingSlowdown).toBeCloseTo(1 - 0.088 / 0.32, 9);
    expect(r.maskingEveryGap).toBeCloseTo(1 - 0.088 / 0.32, 9);
    expect(r.gapsAloneMs).toBeCloseTo(0, 9);
    expect(r.layersStalled).toBe(4);
    expect(r.copyUnderComputeMs).toBeCloseTo(0.32, 9);
    // layer l + 1's data arrives at 80 (l + 1) us; its kernels start then (the last: the next step's layer 0)
    r.lastTrial.copied.forEach((t, l) => expect(t).toBeCloseTo(0.08 * (l + 1), 9));
    r.lastTrial.ready.forEach((t, l) => expect(t).toBeCloseTo(0.08 * (l + 1), 9));
  });
  it('gaps that are there without copies are not the transfers\' stall', async () => {
    // every event holds its stream 1 us: alone, start -> layer 0 (1 us), 4 layers of 1 + 58 us, 3 gaps of
    // 1 us, the last layer -> end (1 us): latency 4 * 58 + 9 = 241 us, kernels 4 * 59 = 236 us
    const r = await scripted(0.058, 0.041, 0.058, false, 0.001);
    expect(r.gateHeld).toBe(15);
    expect(r.latencyAloneMs).toBeCloseTo(0.241, 9);
    expect(r.computeMs).toBeCloseTo(0.236, 9);
    expect(r.gapsAloneMs).toBeCloseTo(0.005, 9);
    // the copies (41 us each, 1 us per event after each) all end before their layer: the same 5 us of gaps
    expect(r.copyMs).toBeCloseTo(4 * 0.041 + 3 * 0.001, 9);
    expect(r.stallMs).toBeCloseTo(0.005, 9);
    expect(r.transferStallMs).toBeCloseTo(0, 9);
    expect(r.maskingEfficiency).toBeCloseTo(1, 9);
    expect(r.maskingEveryGap).toBeCloseTo(1 - 0.005 / 0.167, 9);
    expect(r.layersStalled).toBe(0); // 1 us gaps between layers, but every copy ends before the layer before it
  });
  it('gaps and a real stall: only the stall beyond the gaps is the transfers\'', async () => {
    // events hold their stream 1 us; copies of 80 us end at 80, 161, 242, 323 us (1 us per event between);
    // layers of 1 + 58 us start at 1, 80, 161, 242 (each after its wait), the step ends at the last copy, 323
    const r = await scripted(0.058, 0.08, 0.058, false, 0.001);
    expect(r.gateHeld).toBe(15);
    expect(r.latencyMs).toBeCloseTo(0.323, 9);
    expect(r.computeUnderCopiesMs).toBeCloseTo(0.236, 9);
    expect(r.stallMs).toBeCloseTo(0.087, 9);
    expect(r.gapsAloneMs).toBeCloseTo(0.005, 9);
    expect(r.transferStallMs).toBeCloseTo(0.082, 9);
    expect(r.copyMs).toBeCloseTo(0.323, 9);
    expect(r.maskingEfficiency).toBeCloseTo(1 - 0.082 / 0.323, 9);
    expect(r.maskingEveryGap).toBeCloseTo(1 - 0.087 / 0.323, 9);
    expect(r.layersStalled).toBe(4); // every copy ends 20-22 us after the layer before it
  });
  it('kernels slowed by the copies: a slowdown, not a stall', async () => {
    const r = await scripted(0.058, 0.041, 0.064);
    expect(r.computeMs).toBeCloseTo(0.232, 9);
    expect(r.computeUnderCopiesMs).toBeCloseTo(0.256, 9);
    expect(r.stallMs).toBeCloseTo(0, 9);
    expect(r.maskingEfficiency).toBe(1);
    expect(r.slowdownShare).toBeCloseTo(0.024 / 0.164, 9);
    expect(r.maskingCountingSlowdown).toBeCloseTo(1 - 0.024 / 0.164, 9);
  });
  it('copies that cannot fit: the compute stream waits for each layer\'s data, masking 5%', async () => {
    const r = await scripted(0.01, 0.2);
    // copies end at 200, 400, 600, 800 us; layers run 0-10, 200-210, 400-410, 600-610, then the wait to 800
    expect(r.copyMs).toBeCloseTo(0.8, 9);
    expect(r.computeMs).toBeCloseTo(0.04, 9);
    expect(r.latencyMs).toBeCloseTo(0.8, 9);
    expect(r.stallMs).toBeCloseTo(0.76, 9);
    expect(r.transferStallMs).toBeCloseTo(0.76, 9);
    expect(r.maskingEfficiency).toBeCloseTo(0.05, 9);
    expect(r.layersStalled).toBe(4);
    r.lastTrial.ready.forEach((t, l) => expect(t).toBeCloseTo(0.2 * (l + 1), 9));
  });
  it('paced copies start with their layer: copies slower than the layers fall further behind', async () => {
    const r = await scripted(0.058, 0.08, 0.058, true);
    // copy l starts with layer l: layer 0 at 0 (copy 0 to 80), layer 1 at 80 (copy 1 to 160), ... as unpaced here,
    // since every layer waits for the copy before it; the copies alone still run back to back
    expect(r.copyMs).toBeCloseTo(0.32, 9);
    expect(r.latencyMs).toBeCloseTo(0.32, 9);
    expect(r.stallMs).toBeCloseTo(0.088, 9);
    const fit = await scripted(0.058, 0.041, 0.058, true);
    // copy l runs 58 l .. 58 l + 41: every layer's data is in 17 us before it starts
    fit.lastTrial.copied.forEach((t, l) => expect(t).toBeCloseTo(0.058 * l + 0.041, 9));
    expect(fit.stallMs).toBeCloseTo(0, 9);
    expect(fit.copyUnderComputeMs).toBeCloseTo(0.058 * 3 + 0.041, 9);
  });
  it('a trial that fails while it is queued leaves the gate usable and sized as before', async () => {
    const m = new ScriptedGpu(0.045, 0.005);
    const gate = await ComputeGate.open(m.asBackend(), 64, () => m.host);
    // 100 us to queue each attention: a full trial takes the host 220 us to queue, the failed one 20 us
    const p = { layers: 2, copyBytes: 1, copies: () => m.op(0.01, 0.04, 'memory'), attention: () => m.op(0.1, 0.05) };
    await runPrefetch(m.asBackend(), gate, p);
    const reps = gate.repsFor('prefetch:truetrue');
    await expect(runPrefetch(m.asBackend(), gate, { ...p, attention: () => { throw new Error('bad attention'); } })).rejects.toThrow(/bad attention/);
    expect(reps).toBe(9); // (1.5 * 220 + 20) / (45 - 5)
    expect(gate.repsFor('prefetch:truetrue')).toBe(reps);
    const r = await runPrefetch(m.asBackend(), gate, p);
    expect(r.computeMs).toBeCloseTo(0.1, 9);
    await expect(gate.trial('x', (async () => {}) as unknown as () => void)).rejects.toThrow(/async enqueue/);
    expect(r.gateHeld).toBe(15);
    gate.free();
  });
  it('refuses no layers and no trials', async () => {
    const m = new ScriptedGpu(0.045, 0.005);
    const gate = await ComputeGate.open(m.asBackend(), 64, () => m.host);
    const p = { layers: 0, copyBytes: 0, copies: () => {}, attention: () => {} };
    await expect(runPrefetch(m.asBackend(), gate, p)).rejects.toThrow(/prefetch layers: expected a positive integer, got 0/);
    await expect(runPrefetch(m.asBackend(), gate, { ...p, layers: 2 }, 0)).rejects.toThrow(/prefetch trials: expected a positive integer, got 0/);
    gate.free();
  });
});

describe.skipIf(!host.available)(`prefetch bench on the host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('accounts a real pipeline: latency = kernels + stall, shares in range', async () => {
    const b = openBackend('host');
    try {
      const r = await benchPrefetch(b, { contextTokens: 512, layers: 3, attnPerLayer: 1, slabBytes: 64 << 10, slabsPerLayer: 2 }, 3);
      expect(r.layers).toBe(3);
      expect(r.copyBytes).toBe(3 * 2 * (64 << 10));
      expect(r.gateTrials).toBe(9);
      expect(r.copyMs).toBeGreaterThan(0);
      expect(r.computeMs).toBeGreaterThan(0);
      // medians of per-trial values: the stall never exceeds the latency it is part of
      expect(r.stallMs).toBeGreaterThanOrEqual(0);
      expect(r.stallMs).toBeLessThanOrEqual(r.latencyMs);
      expect(r.computeUnderCopiesMs).toBeLessThanOrEqual(r.latencyMs + 1e-9);
      expect(r.gapsAloneMs).toBeGreaterThanOrEqual(0);
      expect(r.transferStallMs).toBeGreaterThanOrEqual(0);
      expect(r.maskingEfficiency).toBeCloseTo(Math.max(0, Math.min(1, 1 - r.transferStallMs / r.copyMs)), 12);
      expect(r.maskingEveryGap).toBeCloseTo(Math.max(0, Math.min(1, 1 - r.stallMs / r.copyMs)), 12);
      expect(r.maskingEveryGap).toBeLessThanOrEqual(r.maskingEfficiency);
      expect(r.layersStalled).toBeLessThanOrEqual(3);
    } finally {
      b.close();
    }
  });
  it('copies that cannot fit: each layer starts only once its data is in', async () => {
    const b = openBackend('host');
    try {
      // 3 x 16 MiB of copies against attention over one 16-token block per layer. How long each side
      // takes depends on the machine (the scripted test above has the timeline); the order does not.
      const r = await benchPrefetch(b, { contextTokens: 16, layers: 3, attnPerLayer: 1, slabBytes: 8 << 20, slabsPerLayer: 2 }, 3);
      expect(r.copyBytes).toBe(3 * 2 * (8 << 20));
      expect(r.lastTrial.copied).toHaveLength(3);
      expect(r.lastTrial.ready).toHaveLength(3);
      r.lastTrial.ready.forEach((t, l) => expect(t).toBeGreaterThanOrEqual(r.lastTrial.copied[l]!));
    } finally {
      b.close();
    }
  });
  it('refuses bad options, naming the field', async () => {
    const b = openBackend('host');
    try {
      await expect(benchPrefetch(b, { contextTokens: 512, layers: 2, attnPerLayer: 1, slabBytes: 0, slabsPerLayer: 1 })).rejects.toThrow(
        /prefetch slabBytes: expected a positive integer, got 0/,
      );
    } finally {
      b.close();
    }
  });
});
