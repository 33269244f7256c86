// A copy on the memory stream hidden under attention on the compute stream.
// masking efficiency = 1 - stall / transfer, stall = (time of both) - (time of compute alone).
//
// Each trial starts behind a gate: GEMVs on the compute stream, sized from the host's enqueue time
// (as the layout copy bench), then event s; the memory stream waits for s. So every copy and every
// attention call of the trial is queued before either stream starts, and neither the host's launch
// rate nor the order the host queues the two streams in is timed. Without it, queuing the copies
// after the attention started them late (4k: past the compute, 72-75% masking on the H100), and
// queuing them first held the attention back by the copies' enqueue time (84-89%).
import type { NativeBackend } from '../addon-types.js';
import { buildDeviceCache } from './device-cache.js';
import { median, timeOp } from './timing.js';

export interface OverlapRow {
  computeMs: number;
  copyMs: number;
  bothMs: number;
  computeWhileCopyingMs: number;
  copyBytes: number;
  maskingEfficiency: number;
  /** host time to enqueue one trial after the gate, max over trials (ms) */
  enqueueMs: number;
  /** device time of the gate, min over trials (ms; >= enqueueMs: everything was queued before s) */
  gateMs: number;
}

export interface OverlapOptions {
  contextTokens: number;
  attnRepeat: number;
  slabBytes: number;
  slabs: number;
  /** 'h2d' (default): pinned host -> HBM, the copy writes HBM; 'd2h': HBM -> pinned host, it reads HBM */
  direction?: 'h2d' | 'd2h';
  /** declare the table uniform FP16 (the tensor-core FP16 kernel on cuda) instead of no promise (v3) */
  uniformFp16?: boolean;
}

const GATE_ROWS = 4096;
const GATE_COLS = 4096;

export async function benchOverlap(b: NativeBackend, opts: OverlapOptions, trials = 5): Promise<OverlapRow> {
  const g = { kvHeads: 8, blockTokens: 16, headDim: 128, groupSize: 128 };
  const blocks = Math.ceil(opts.contextTokens / 16);
  const cache = buildDeviceCache(b, g, Array.from({ length: blocks }, () => 'fp16' as const));
  const regions: number[] = [];
  const alloc = (kind: 'device' | 'pinned', bytes: number) => {
    const r = b.alloc(kind, bytes);
    regions.push(r);
    return r;
  };
  const events: number[] = [];
  try {
    const q = alloc('device', 32 * 128 * 4);
    const out = alloc('device', 32 * 128 * 4);
    b.write(q, 0, new Float32Array(32 * 128).fill(0.01));
    const host = alloc('pinned', opts.slabBytes * opts.slabs);
    const dev = alloc('device', opts.slabBytes * opts.slabs);
    // the gate's GEMV: reads 32 MiB of weights, writes 16 KiB (no dirty lines worth draining into the trial)
    const gemv = { w: alloc('device', GATE_ROWS * GATE_COLS * 2), x: alloc('device', GATE_COLS * 4), y: alloc('device', GATE_ROWS * 4), rows: GATE_ROWS, cols: GATE_COLS };
    b.write(gemv.x, 0, new Float32Array(GATE_COLS).fill(0.5));
    const [g0, s, eA, eB] = Array.from({ length: 4 }, () => {
      const e = b.createEvent();
      events.push(e);
      return e;
    });
    const attn = () =>
      b.attention('compute', { arena: cache.arena, table: cache.table, q, out, qHeads: 32, kvHeads: 8, contextTokens: opts.contextTokens, ...(opts.uniformFp16 ? { uniformPrecision: 'fp16' as const } : {}) }, opts.attnRepeat);
    const [dst, src] = opts.direction === 'd2h' ? [host, dev] : [dev, host];
    const copies = () => {
      for (let i = 0; i < opts.slabs; i++) b.copy('memory', dst, i * opts.slabBytes, src, i * opts.slabBytes, opts.slabBytes);
    };
    // device time of one gate GEMV: first from a timed GEMV, then from each gate as it ran back to back
    let gemvUs = Math.max(1, (await timeOp(b, 'compute', 3, 1, () => b.gemv('compute', gemv))) * 1000);
    let enqueueUs = 500;
    const run = async (withAttn: boolean, withCopy: boolean) => {
      const reps = Math.max(1, Math.ceil((1.5 * enqueueUs + 20) / gemvUs));
      b.record('compute', g0);
      b.gemv('compute', gemv, reps);
      const t0 = performance.now();
      b.record('compute', s);
      b.waitEvent('memory', s);
      if (withAttn) attn();
      if (withCopy) copies();
      b.record('compute', eA);
      b.record('memory', eB);
      const enq = (performance.now() - t0) * 1000;
      await b.synchronize();
      enqueueUs = Math.max(enqueueUs, enq);
      const gateMs = b.elapsedMs(g0, s);
      gemvUs = Math.max(1, (gateMs * 1000) / reps);
      return { a: b.elapsedMs(s, eA), c: b.elapsedMs(s, eB), enq, gate: gateMs };
    };
    // warm-up, twice: sizes the gate from the enqueue time and the gate's own GEMV time
    await run(true, true);
    await run(true, true);
    const compute: number[] = [], copy: number[] = [], both: number[] = [], computeBoth: number[] = [], enq: number[] = [], gate: number[] = [];
    const note = (r: { enq: number; gate: number }) => {
      enq.push(r.enq / 1000);
      gate.push(r.gate);
    };
    for (let t = 0; t < trials; t++) {
      const a = await run(true, false);
      compute.push(a.a);
      const c = await run(false, true);
      copy.push(c.c);
      const r = await run(true, true);
      both.push(Math.max(r.a, r.c));
      computeBoth.push(r.a);
      for (const x of [a, c, r]) note(x);
    }
    const computeMs = median(compute), copyMs = median(copy), bothMs = median(both);
    const stall = Math.max(0, bothMs - computeMs);
    return {
      computeMs,
      copyMs,
      bothMs,
      computeWhileCopyingMs: median(computeBoth),
      copyBytes: opts.slabBytes * opts.slabs,
      maskingEfficiency: Math.max(0, Math.min(1, 1 - stall / copyMs)),
      enqueueMs: Math.max(...enq),
      gateMs: Math.min(...gate),
    };
  } finally {
    for (const e of events) b.destroyEvent(e);
    for (const r of regions) b.free(r);
    cache.free();
  }
}
