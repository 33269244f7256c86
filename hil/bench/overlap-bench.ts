// A copy on the memory stream hidden under attention on the compute stream.
// masking efficiency = 1 - stall / transfer, stall = (time of both) - (time of compute alone).
//
// Each trial starts behind a gate: GEMVs on the compute stream, sized from the host's enqueue time
// (as the layout copy bench), then event s; the memory stream waits for s. So every copy and every
// attention call of the trial is queued before either stream starts, and neither the host's launch
// rate nor the order the host queues the two streams in is timed. Without it, queuing the copies
// after the attention started them late (4k: past the compute, 72-75% masking on the H100), and
// queuing them first held the attention back by the copies' enqueue time (84-89%). The row says in
// how many trials the gate held (lasted at least the trial's host enqueue time, its own launches
// included); where it did not, the last calls queued after s may have started late.
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
  /** host time to enqueue one trial, the gate's launches included, max over trials (ms) */
  enqueueMs: number;
  /** device time of the gate, min over trials (ms) */
  gateMs: number;
  /** trials (3 per trial round) whose gate lasted at least their enqueue time: everything was queued before s */
  gateHeld: number;
  gateTrials: number;
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

const GATE_ROWS = 16384; // 128 MiB of weights: each GEMV runs (~45 us on the H100) longer than its launch takes the host, so the gate is not launch-bound
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
    // the gate GEMV: reads 128 MiB of weights, writes 64 KiB (no dirty lines worth draining into the trial)
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
    // host time to queue a trial (the gate's own launches included), per kind of trial, from its last run.
    // (Measured on the H100 at 21:16: the gate held in every trial, but the gates grew from trial to
    // trial to ~250 ms, since their own launches are in the time they are sized from: perf/HIL-NOTES.md.)
    const enqueueUs = new Map<string, number>();
    const run = async (withAttn: boolean, withCopy: boolean) => {
      const kind = `${withAttn}${withCopy}`;
      const reps = Math.max(1, Math.ceil((1.5 * (enqueueUs.get(kind) ?? enqueueUs.get('truetrue') ?? 500) + 20) / gemvUs));
      const t0 = performance.now();
      b.record('compute', g0);
      b.gemv('compute', gemv, reps);
      b.record('compute', s);
      b.waitEvent('memory', s);
      if (withAttn) attn();
      if (withCopy) copies();
      b.record('compute', eA);
      b.record('memory', eB);
      const enq = (performance.now() - t0) * 1000;
      await b.synchronize();
      enqueueUs.set(kind, enq);
      const gateMs = b.elapsedMs(g0, s);
      gemvUs = Math.max(1, (gateMs * 1000) / reps);
      return { a: b.elapsedMs(s, eA), c: b.elapsedMs(s, eB), enq, gate: gateMs };
    };
    // warm-up: sizes the gates from each kind's enqueue time and the gate's own GEMV time
    await run(true, true);
    await run(true, true);
    await run(true, false);
    await run(false, true);
    const compute: number[] = [], copy: number[] = [], both: number[] = [], computeBoth: number[] = [], enq: number[] = [], gate: number[] = [];
    let held = 0;
    const note = (r: { enq: number; gate: number }) => {
      enq.push(r.enq / 1000);
      gate.push(r.gate);
      if (r.gate >= r.enq / 1000) held++;
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
      gateHeld: held,
      gateTrials: gate.length,
    };
  } finally {
    await b.synchronize(); // nothing queued may still use what is freed
    for (const e of events) b.destroyEvent(e);
    for (const r of regions) b.free(r);
    cache.free();
  }
}
