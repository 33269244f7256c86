// Layer-wise prefetch on two streams, with the stall measured as the HIL executor measures it
// (hil/executor/run-plan.ts: stall = latency - kernel time on the compute stream), less what the
// compute stream also stands still without copies, and masking as DESIGN.md defines it:
// 1 - stall / transfer time, the stall being what the transfers cost.
//
// A trial is one decode step of `layers` layers. The memory stream copies the KV of layer l + 1
// while layer l computes: paced (each layer's copies wait for the layer's kernels to start, as an
// executor issues them) or all queued up front, back to back. Each layer's copies end in an event;
// the compute stream waits for it before layer l + 1's attention, and after the last layer for the
// last copy (the next step's first layer). Every layer's attention is bracketed by events, so the
// kernel time of the very trial that ran with the copies is known: the rest of the step's latency
// is time the compute stream stood still.
//
// Three kinds of trial, each behind the gate (gate.ts): compute alone, copies alone, both. The
// compute stream stands still between layers even without copies (the events, one attention
// call's launch after another: ~1.7 us per layer on the H100), so the stall the transfers cost is
// the trial's latency - kernel time less that of the trial without copies. Reported:
// - maskingEfficiency: 1 - transfer stall / copy time;
// - maskingEveryGap: 1 - (latency - kernel time) / copy time, every gap of the trial counted;
// - slowdownShare: how much longer the kernels ran while the copies shared the memory system, as a
//   share of the copy time (the simulator's gpu.kernel_slowdown_under_h2d / _d2h, hil/calibrate);
// - maskingCountingSlowdown: 1 - (latency with copies - latency alone) / copy time, the measure of
//   overlap-bench.ts, which counts that slowdown as stall too.
import type { NativeBackend } from '../addon-types.js';
import { openCopyRig } from './copy-rig.js';
import { ComputeGate } from './gate.js';
import { EventSet } from '../timing/event-set.js';
import { median } from '../timing/median.js';

export interface PrefetchRow {
  layers: number;
  copyBytes: number;
  /** the copies alone: gate end to the last copy's end (ms) */
  copyMs: number;
  /** kernel time of all layers without copies (ms) */
  computeMs: number;
  /** kernel time of all layers in the trial with copies (ms) */
  computeUnderCopiesMs: number;
  /** step latency without copies, and with them (ms) */
  latencyAloneMs: number;
  latencyMs: number;
  /** latency - kernel time, in the trial with copies (ms): every time the compute stream stood still */
  stallMs: number;
  /** latency - kernel time, in the trial without copies (ms) */
  gapsAloneMs: number;
  /** what the transfers cost the compute stream in waiting: per trial round, the stall less the gaps of
   * the round's trial without copies (at least 0), median over rounds (ms) */
  transferStallMs: number;
  maskingEfficiency: number;
  maskingEveryGap: number;
  slowdownShare: number;
  maskingCountingSlowdown: number;
  /** layers (the next step's first included) whose data arrived more than 1 us after the layer
   * before had ended, median over trials */
  layersStalled: number;
  /** the copies' end in the trial with the kernels, from the gate end (ms): slowed by the kernels? */
  copyUnderComputeMs: number;
  /** in the last trial with copies, per layer l (the last entry: the next step's first layer): when its
   * data arrived and when its kernels could start, from the gate end (ms) */
  lastTrial: { copied: number[]; ready: number[] };
  gateHeld: number;
  gateTrials: number;
}

export interface PrefetchPipeline {
  layers: number;
  /** queues layer l's attention on the compute stream */
  attention(layer: number): void;
  /** queues the copies that bring layer l + 1's KV (the last one: the next step's first layer) on the memory stream */
  copies(layer: number): void;
  copyBytes: number;
  /** each layer's copies start when the layer's kernels start, not all at once (in the trial with both) */
  paced?: boolean;
}

const clamp01 = (x: number) => Math.max(0, Math.min(1, x));

/**
 * Runs the three kinds of trial `trials` times behind `gate` and accounts for them (the bench's core,
 * separate from its buffers so that a scripted machine can drive it).
 */
export async function runPrefetch(b: NativeBackend, gate: ComputeGate, p: PrefetchPipeline, trials = 5): Promise<PrefetchRow> {
  if (!Number.isInteger(p.layers) || p.layers < 1) throw new Error(`prefetch layers: expected a positive integer, got ${p.layers}`);
  if (!Number.isInteger(trials) || trials < 1) throw new Error(`prefetch trials: expected a positive integer, got ${trials}`);
  const L = p.layers;
  const events = new EventSet(b);
  const ev = events.make;
  try {
    const copied = Array.from({ length: L }, ev);
    const kStart = Array.from({ length: L }, ev);
    const kEnd = Array.from({ length: L }, ev);
    const end = ev();
    const run = async (withCompute: boolean, withCopies: boolean) => {
      const paced = p.paced === true && withCompute && withCopies;
      const copyLayer = (l: number) => {
        p.copies(l);
        b.record('memory', copied[l]!);
      };
      const g = await gate.trial(`prefetch:${withCompute}${withCopies}`, () => {
        b.waitEvent('memory', gate.start);
        if (withCopies && !paced) for (let l = 0; l < L; l++) copyLayer(l);
        if (withCompute) {
          for (let l = 0; l < L; l++) {
            if (withCopies && l > 0) b.waitEvent('compute', copied[l - 1]!);
            b.record('compute', kStart[l]!);
            p.attention(l);
            b.record('compute', kEnd[l]!);
            if (paced) {
              b.waitEvent('memory', kStart[l]!);
              copyLayer(l);
            }
          }
          if (withCopies) b.waitEvent('compute', copied[L - 1]!);
          b.record('compute', end);
        }
      });
      let kernel = 0;
      let stalledLayers = 0;
      const copiedAt: number[] = [], readyAt: number[] = [];
      if (withCompute) {
        for (let l = 0; l < L; l++) kernel += b.elapsedMs(kStart[l]!, kEnd[l]!);
      }
      if (withCompute && withCopies) {
        for (let l = 0; l < L; l++) {
          copiedAt.push(b.elapsedMs(gate.start, copied[l]!));
          readyAt.push(b.elapsedMs(gate.start, l + 1 < L ? kStart[l + 1]! : end));
          // layer l + 1 (the last: the next step's first) waited for its data when it came after layer l ended
          if (b.elapsedMs(kEnd[l]!, copied[l]!) > 1e-3) stalledLayers++;
        }
      }
      return {
        latency: withCompute ? b.elapsedMs(gate.start, end) : NaN,
        kernel,
        stalledLayers,
        copyEnd: withCopies ? b.elapsedMs(gate.start, copied[L - 1]!) : NaN,
        copiedAt,
        readyAt,
        held: g.held,
      };
    };
    // warm-up: sizes each kind's gate from its own enqueue time
    for (const [c, x] of [[true, true], [true, true], [true, false], [false, true]] as const) await run(c, x);
    const alone: number[] = [], aloneLat: number[] = [], gaps: number[] = [], transfer: number[] = [], copy: number[] = [], withK: number[] = [], withLat: number[] = [], stall: number[] = [], stalled: number[] = [], copyUnder: number[] = [];
    let lastTrial = { copied: [] as number[], ready: [] as number[] };
    let held = 0;
    for (let t = 0; t < trials; t++) {
      const a = await run(true, false);
      const c = await run(false, true);
      const w = await run(true, true);
      alone.push(a.kernel);
      aloneLat.push(a.latency);
      gaps.push(Math.max(0, a.latency - a.kernel));
      copy.push(c.copyEnd);
      withK.push(w.kernel);
      withLat.push(w.latency);
      stall.push(Math.max(0, w.latency - w.kernel));
      transfer.push(Math.max(0, w.latency - w.kernel - (a.latency - a.kernel)));
      stalled.push(w.stalledLayers);
      copyUnder.push(w.copyEnd);
      lastTrial = { copied: w.copiedAt, ready: w.readyAt };
      held += [a, c, w].filter((x) => x.held).length;
    }
    const copyMs = median(copy), computeMs = median(alone), computeUnderCopiesMs = median(withK);
    const latencyAloneMs = median(aloneLat), latencyMs = median(withLat), stallMs = median(stall), gapsAloneMs = median(gaps);
    const transferStallMs = median(transfer);
    return {
      layers: L,
      copyBytes: p.copyBytes,
      copyMs,
      computeMs,
      computeUnderCopiesMs,
      latencyAloneMs,
      latencyMs,
      stallMs,
      gapsAloneMs,
      transferStallMs,
      maskingEfficiency: clamp01(1 - transferStallMs / copyMs),
      maskingEveryGap: clamp01(1 - stallMs / copyMs),
      slowdownShare: (computeUnderCopiesMs - computeMs) / copyMs,
      maskingCountingSlowdown: clamp01(1 - Math.max(0, latencyMs - latencyAloneMs) / copyMs),
      layersStalled: median(stalled),
      copyUnderComputeMs: median(copyUnder),
      lastTrial,
      gateHeld: held,
      gateTrials: 3 * trials,
    };
  } finally {
    try {
      await b.synchronize(); // no queued wait or record may still use an event
    } finally {
      events.destroyAll();
    }
  }
}

export interface PrefetchOptions {
  contextTokens: number;
  layers: number;
  /** attention calls per layer */
  attnPerLayer: number;
  slabBytes: number;
  /** slabs copied per layer */
  slabsPerLayer: number;
  /** 'h2d' (default): pinned host -> HBM (a prefetch); 'd2h': HBM -> pinned host (an offload) */
  direction?: 'h2d' | 'd2h';
  /** declare the table uniform FP16 (the tensor-core FP16 kernel on cuda) instead of no promise (v3) */
  uniformFp16?: boolean;
  /** each layer's copies start with the layer (PrefetchPipeline.paced) */
  paced?: boolean;
}

/** The pipeline over an FP16 KV cache of `contextTokens` (Llama-3-8B layer shape) on a real backend. */
export async function benchPrefetch(b: NativeBackend, opts: PrefetchOptions, trials = 5): Promise<PrefetchRow> {
  for (const k of ['contextTokens', 'layers', 'attnPerLayer', 'slabBytes', 'slabsPerLayer'] as const) {
    if (!Number.isInteger(opts[k]) || opts[k] < 1) throw new Error(`prefetch ${k}: expected a positive integer, got ${opts[k]}`);
  }
  const perLayer = opts.slabBytes * opts.slabsPerLayer;
  const rig = openCopyRig(b, { contextTokens: opts.contextTokens, copyBytes: perLayer * opts.layers, direction: opts.direction, uniformFp16: opts.uniformFp16 });
  let gate: ComputeGate | undefined;
  try {
    gate = await ComputeGate.open(b);
    return await runPrefetch(
      b,
      gate,
      {
        layers: opts.layers,
        copyBytes: perLayer * opts.layers,
        paced: opts.paced === true,
        attention: () => b.attention('compute', rig.op, opts.attnPerLayer),
        copies: (l) => {
          for (let i = 0; i < opts.slabsPerLayer; i++) {
            const at = l * perLayer + i * opts.slabBytes;
            b.copy('memory', rig.dst, at, rig.src, at, opts.slabBytes);
          }
        },
      },
      trials,
    );
  } finally {
    try {
      await b.synchronize();
    } finally {
      gate?.free();
      rig.free();
    }
  }
}
