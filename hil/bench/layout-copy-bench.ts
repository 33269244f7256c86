/**
 * PCIe copies in the executor's layout (layout-batches.ts), timed as the executor runs
 * them: each batch enqueued back to back on the memory stream (b.copy per copy, a mark event
 * before and after each layer's group, no synchronization), while the compute stream runs layers
 * of (marks, attention, marks, layer GEMV), or of the layer GEMV alone (`attention: false`). A gate (GEMVs on the compute stream, sized from the
 * host's enqueue time as gate.ts sizes its gates) holds the memory stream until the whole batch is
 * enqueued, so the host's call rate is not timed (with gated: false there is no gate, and the host's
 * rate is in the time). Point = one batch: us = memory-stream time between events (median).
 * A mixed batch's groups are D2H and H2D (a demotion, then a promotion into the slots freed), in turn
 * or every demotion first (layout-batches.ts).
 * After the last trial of a batch its last group is read back and compared byte for byte.
 */
import type { NativeBackend } from '../addon-types.js';
import type { LayoutBatch, LayoutPlan } from './layout-batches.js';
import type { BlockGeometry } from '../kv-format.js';
import { buildDeviceCache } from './device-cache.js';
import { gateReps } from './gate.js';
import { EventSet } from '../timing/event-set.js';
import { median } from '../timing/median.js';
import { timeOp } from '../timing/time-op.js';

export interface LayoutPoint {
  direction: 'h2d' | 'd2h' | 'mixed';
  label: string;
  runs: number;
  bytes: number;
  /** copies and bytes per direction, and D2H <-> H2D changes between the batch's groups */
  split: LayoutBatch['split'];
  switches: number;
  /** copies() calls (groups, a layer's each; marks around each) */
  groups: number;
  us: number;
  lengths: Record<number, number>;
  /** host time to enqueue a trial (compute + copies), max over trials */
  enqueue_us: number;
  /** device time of the gate, min over trials (>= enqueue_us: the copies were all queued before they ran) */
  gate_us: number;
  /** compute-stream time after the copies started / copy time, min over trials (>= 1: compute ran throughout; 0: no compute) */
  compute_cover: number;
  /**
   * how much longer the compute layers ran beside the copies than without them (us, median over
   * trials): their time after the gate minus the time of the same layers behind the same gate with no
   * copies, run right after. Over the copy time (us) it is the compute slowdown per unit of copy time
   * the copies shared with it (they ran wholly under compute where compute_cover >= 1). 0 without compute.
   */
  compute_extra_us: number;
}

export interface LayoutBenchOptions {
  plan: LayoutPlan;
  geometry: BlockGeometry;
  qHeads: number;
  contextTokens: number;
  gemvRows: number;
  gemvCols: number;
  trials: number;
  /** run attention + GEMV layers on the compute stream while the copies run (default true); false: the GPU does nothing else */
  compute?: boolean;
  /**
   * with compute: each layer runs its attention before its GEMV (default true); false: the layers are
   * the GEMV alone (marks around it), so every copy runs beside a GEMV
   */
  attention?: boolean;
  /**
   * hold the memory stream behind a gate until the whole batch is enqueued (default true: the copies' own
   * time); false: the copies start as the host issues them, as the executor's do, so a host slower per
   * copy than the copy engine paces the batch
   */
  gated?: boolean;
}

export interface LayoutBenchResult {
  points: LayoutPoint[];
  /** one compute layer (attention + GEMV, or the GEMV alone, with its marks) alone */
  layer_us: number;
  gemv_us: number;
  /** copies compared byte for byte after their batch */
  verified_copies: number;
}

export async function benchLayoutCopies(b: NativeBackend, o: LayoutBenchOptions): Promise<LayoutBenchResult> {
  const { plan, geometry: g } = o;
  const owned: number[] = [];
  const alloc = (kind: 'device' | 'pinned', bytes: number) => {
    const r = b.alloc(kind, Math.max(4096, bytes));
    owned.push(r);
    return r;
  };
  const events = new EventSet(b);
  const ev = events.make;
  const cache = buildDeviceCache(b, g, Array.from({ length: Math.ceil(o.contextTokens / g.blockTokens) }, () => 'fp16' as const));
  try {
    const pool = alloc('pinned', plan.hostBytes);
    const arena = alloc('device', plan.arenaBytes);
    fillPattern(b, pool, plan.hostBytes, 1);
    fillPattern(b, arena, plan.arenaBytes, 2);
    const qBytes = o.qHeads * g.headDim * 4;
    const [q, out] = [alloc('device', qBytes), alloc('device', qBytes)];
    b.write(q, 0, new Float32Array(o.qHeads * g.headDim).map((_, i) => Math.sin(i * 0.37)));
    const gemv = { w: alloc('device', o.gemvRows * o.gemvCols * 2), x: alloc('device', o.gemvCols * 4), y: alloc('device', o.gemvRows * 4), rows: o.gemvRows, cols: o.gemvCols };
    b.write(gemv.w, 0, new Uint8Array(Math.min(o.gemvRows * o.gemvCols * 2, 1 << 22)));
    b.write(gemv.x, 0, new Float32Array(o.gemvCols).map((_, i) => Math.cos(i)));
    const attn = { arena: cache.arena, arenaBytes: cache.arenaBytes, table: cache.table, q, out, qHeads: o.qHeads, kvHeads: g.kvHeads, headDim: g.headDim, blockTokens: g.blockTokens, groupSize: g.groupSize, contextTokens: o.contextTokens };
    const [c0, c1, mA, mB, s0, go, cEnd, e0, e1] = Array.from({ length: 9 }, ev);
    const withAttention = o.attention !== false;
    const layer = () => {
      b.record('compute', c0);
      if (withAttention) b.attention('compute', attn);
      b.record('compute', c1);
      b.gemv('compute', gemv);
      b.record('compute', c0);
    };
    const layerMs = await timeOp(b, 'compute', 3, 4, () => {
      for (let i = 0; i < 4; i++) layer();
    });
    const gemvMs = await timeOp(b, 'compute', 3, 1, () => b.gemv('compute', gemv));
    const layerUs = Math.max(1, layerMs * 1000);
    const gemvUs = Math.max(1, gemvMs * 1000);
    const points: LayoutPoint[] = [];
    let verified = 0;
    for (const batch of plan.batches) {
      const ends = (d: 'h2d' | 'd2h') => (d === 'h2d' ? [arena, pool] : [pool, arena]);
      let copyUs = batch.runs * 5 + batch.bytes / 40e3;
      let workUs = 100 + 5 * batch.runs; // host time to queue the trial after the gate's own launches
      let launchUs = 0; // host time per gate GEMV launch
      let enqueueUs = 0; // the whole trial, the gate's launches included
      const us: number[] = [];
      const enq: number[] = [];
      const gate: number[] = [];
      const cover: number[] = [];
      const extra: number[] = [];
      for (let t = 0; t <= o.trials; t++) {
        // sized as gate.ts sizes its gates (from the time after the gate's launches, at most MAX_GATE):
        // sized from the whole enqueue time, a gate whose GEMVs launch about as slowly as they run grows
        const reps = o.gated === false ? 0 : gateReps(workUs, gemvUs, launchUs);
        const layers = o.compute === false ? 0 : Math.max(1, Math.ceil((1.3 * copyUs) / layerUs));
        const t0 = performance.now();
        b.record('compute', s0);
        if (reps > 0) b.gemv('compute', gemv, reps);
        const t1 = performance.now();
        b.record('compute', go);
        for (let i = 0; i < layers; i++) layer();
        b.record('compute', cEnd);
        if (reps > 0) b.waitEvent('memory', go);
        b.record('memory', e0);
        batch.groups.forEach((group, gi) => {
          const [dst, src] = ends(batch.groupDirections[gi]);
          b.record('memory', mA);
          for (const [s, d, n] of group) b.copy('memory', dst, d, src, s, n);
          b.record('memory', mB);
        });
        b.record('memory', e1);
        const t2 = performance.now();
        enqueueUs = (t2 - t0) * 1000;
        workUs = (t2 - t1) * 1000;
        launchUs = reps > 0 ? ((t1 - t0) * 1000) / reps : 0;
        await b.synchronize();
        copyUs = b.elapsedMs(e0, e1) * 1000;
        if (t === 0) continue; // warm-up: sizes the gate and the compute
        us.push(copyUs);
        enq.push(enqueueUs);
        gate.push(b.elapsedMs(s0, go) * 1000);
        cover.push(layers === 0 ? 0 : b.elapsedMs(e0, cEnd) / b.elapsedMs(e0, e1));
        if (layers === 0) {
          extra.push(0);
          continue;
        }
        // the same layers behind the same gate with no copies: the baseline of the extra time (a short
        // chain timed alone, as layer_us, runs slower per layer than these long ones)
        const under = b.elapsedMs(go, cEnd);
        b.record('compute', s0);
        if (reps > 0) b.gemv('compute', gemv, reps);
        b.record('compute', go);
        for (let i = 0; i < layers; i++) layer();
        b.record('compute', cEnd);
        await b.synchronize();
        extra.push((under - b.elapsedMs(go, cEnd)) * 1000);
      }
      const [dst, src] = ends(batch.groupDirections[batch.groups.length - 1]);
      verified += verifyGroup(b, batch, dst, src);
      points.push({ direction: batch.direction, label: batch.label, runs: batch.runs, bytes: batch.bytes, split: batch.split, switches: batch.switches, groups: batch.groups.length, us: median(us), lengths: batch.lengths, enqueue_us: Math.max(...enq), gate_us: Math.min(...gate), compute_cover: Math.min(...cover), compute_extra_us: median(extra) });
    }
    return { points, layer_us: layerUs, gemv_us: gemvUs, verified_copies: verified };
  } finally {
    try {
      await b.synchronize();
    } finally {
      events.destroyAll();
      for (const r of owned) b.free(r);
      cache.free();
    }
  }
}

/** the batch's last group landed: destination bytes equal source bytes, copy by copy */
function verifyGroup(b: NativeBackend, batch: LayoutBatch, dst: number, src: number): number {
  const group = batch.groups[batch.groups.length - 1] ?? [];
  for (const [s, d, n] of group) {
    if (!Buffer.from(b.read(dst, d, n)).equals(Buffer.from(b.read(src, s, n)))) {
      throw new Error(`layout copies (${batch.direction} ${batch.label}): ${n} bytes from offset ${s} did not land at ${d}`);
    }
  }
  return group.length;
}

/** distinct words everywhere (a copy from the wrong slot cannot pass the check) */
function fillPattern(b: NativeBackend, region: number, bytes: number, seed: number): void {
  const chunk = 8 << 20;
  const words = new Uint32Array(chunk / 4);
  for (let off = 0; off < bytes; off += chunk) {
    const n = Math.min(chunk, bytes - off);
    const w0 = off / 4;
    for (let i = 0; i < n / 4; i++) words[i] = Math.imul(w0 + i + 1, 2654435761) ^ seed;
    b.write(region, off, new Uint8Array(words.buffer, 0, n));
  }
}
