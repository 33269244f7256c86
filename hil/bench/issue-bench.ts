/**
 * The host's time to issue ops through the executor's own issue path (executor/issue-ops.ts): a
 * list of N ops of one kind handed to the executor's OpIssuer as one step, timed on the host from
 * its first op to its last (nothing synchronizes in between; N stays well inside the launch queue, so
 * the host never waits for the GPU). As issued, the GPU runs the ops while the host issues them, as
 * in the executor; with a compute gate (cuda) each kind is also timed queued behind it, the memory
 * stream waiting for the gate's start, so that the GPU runs none of them meanwhile. Kinds:
 * - copy: memory-stream copies from host slots into HBM in the executor's prefetch layout
 *   (consecutive FP16-block-sized pinned slots into one packed extent), per size;
 * - record: timing marks (an event recorded on the memory stream);
 * - kernel: GEMV launches of a small GEMV on the compute stream (its launch, not its work);
 * - attention: launches of the paged attention over a table of ATTENTION_BLOCKS FP16 blocks (the
 *   plan's choice of kernel and splits and the launch itself, on the compute stream);
 * - convert: one block's (de)quantization launches on the memory stream, as a requantization in HBM
 *   issues them: INT8 blocks dequantized into scratch and quantized back to INT2, in turn.
 * Where the host takes longer per copy than the copy engine does, the executor's copies go at the
 * host's pace; the simulator keeps a host clock with these costs (gpu.issue_*_us).
 */
import type { NativeBackend } from '../addon-types.js';
import type { ModelSpec } from '../../sim/models/model.js';
import { blockBytes } from '../kv-format.js';
import { geometryOf } from '../executor/block-geometry.js';
import { BlockTables } from '../executor/block-tables.js';
import { FileStepTimes } from '../executor/file-step-times.js';
import { type IssuedPlan, OpIssuer } from '../executor/issue-ops.js';
import type { LowOp } from '../executor/lowered-plan.js';
import type { ModelBuffers } from '../executor/model-buffers.js';
import { RunEvents } from '../executor/run-events.js';
import { RunRegions } from '../executor/run-regions.js';
import { EventSet } from '../timing/event-set.js';
import type { ComputeGate } from './gate.js';
import { median } from '../timing/median.js';

export type IssueKind = 'copy' | 'record' | 'kernel' | 'attention' | 'convert';

export interface IssuePoint {
  kind: IssueKind;
  /** bytes per copy (0 for the other kinds) */
  bytes: number;
  /** behind a compute gate (the GPU ran none of the ops while the host issued them), or as issued */
  gated: boolean;
  ops: number;
  /** host us per op: the median over trials */
  us: number;
  /** every trial's host us per op (the first, warm-up, trial left out) */
  trials_us: number[];
  /** with a gate: how many of those trials it held (the GPU ran none of the ops before they were all issued), and their times; us is their median where any */
  held?: number;
  held_us?: number[];
}

export interface IssueBenchOptions {
  blockTokens: number;
  groupSize: number;
  /** copy sizes (bytes), each at most an FP16 block */
  copyBytes: number[];
  /** ops per trial (default 256) */
  ops?: number;
  /** timed trials per kind (default 9) */
  trials?: number;
  /** cuda: time every kind also behind this gate (gate.ts) */
  gate?: ComputeGate;
  /**
   * before the timed rounds, issue the lists (as issued) back to back for this long (ms, default 0). The
   * host's time per op falls as it keeps issuing (an H100 lease: 4.2-4.6 us per copy in the first round,
   * 3.0-3.3 in the fifth), but after 500 ms of it the lists read 2.1-2.7 us on another lease where the
   * executor's own loop issued at 3.1: the calibration does not warm up (lab/notes/HIL-NOTES.md)
   */
  warmupMs?: number;
}

/** GEMV launched for the kernel kind: small enough that the GPU keeps up with the launches */
const GEMV_ROWS = 64;
const GEMV_COLS = 256;
/** blocks of the attention kind's table */
export const ATTENTION_BLOCKS = 64;

export async function benchIssue(b: NativeBackend, model: ModelSpec, o: IssueBenchOptions): Promise<IssuePoint[]> {
  const n = o.ops ?? 256;
  const trials = o.trials ?? 9;
  if (!(Number.isInteger(n) && n >= 1)) throw new Error(`issue bench: ops must be an integer >= 1 (got ${n})`);
  if (!(Number.isInteger(trials) && trials >= 1)) throw new Error(`issue bench: trials must be an integer >= 1 (got ${trials})`);
  const warm = o.warmupMs ?? 0;
  if (!(warm >= 0 && Number.isFinite(warm))) throw new Error(`issue bench: warmupMs must be a number >= 0 (got ${warm})`);
  const geometry = geometryOf(model, o.blockTokens, o.groupSize);
  const slot = blockBytes(geometry, 'fp16');
  for (const bytes of o.copyBytes) {
    if (!(Number.isInteger(bytes) && bytes >= 1 && bytes <= slot)) throw new Error(`issue bench: copyBytes: copy size ${bytes} must be an integer in 1..${slot} (an FP16 block)`);
  }
  const mem = new RunRegions(b);
  const events = new EventSet(b);
  try {
    const maxBytes = Math.max(...o.copyBytes, 1);
    const int8 = blockBytes(geometry, 'int8');
    const arenaBytes = Math.max(n * maxBytes, n * int8, ATTENTION_BLOCKS * slot);
    mem.regions.set('arena', mem.alloc('device', arenaBytes));
    mem.regions.set('scratch', mem.alloc('device', slot));
    const tables = new BlockTables();
    const tableOff = tables.write(Float64Array.from({ length: ATTENTION_BLOCKS }, (_, i) => i * slot), new Int32Array(ATTENTION_BLOCKS));
    mem.tables = mem.alloc('device', tables.bytes.length);
    b.write(mem.tables, 0, tables.bytes);
    const qBytes = model.q_heads * model.head_dim * 4;
    mem.regions.set('dram', mem.alloc('pinned', n * slot));
    const buffers: ModelBuffers = {
      q: mem.alloc('device', qBytes),
      out: mem.alloc('device', qBytes),
      x: mem.alloc('device', GEMV_COLS * 4),
      y: mem.alloc('device', GEMV_ROWS * 4),
      rows: GEMV_ROWS,
      cols: GEMV_COLS,
      headRows: 0,
      weights: [mem.alloc('device', GEMV_ROWS * GEMV_COLS * 2)],
      head: -1,
      streamedRows: 0,
    };
    const ev = new RunEvents(b, events, { marks: n, fences: [0, 0], steps: [0] });
    await b.synchronize();
    const lists: { kind: IssueKind; bytes: number; ops: LowOp[] }[] = [
      ...o.copyBytes.map((bytes) => ({
        kind: 'copy' as const,
        bytes,
        ops: Array.from({ length: n }, (_, i): LowOp => ({ o: 'copy', s: 1, src: 'dram', srcOff: i * slot, dst: 'arena', dstOff: i * bytes, bytes })),
      })),
      { kind: 'record', bytes: 0, ops: Array.from({ length: n }, (_, i): LowOp => ({ o: 'mark', s: 1, id: i })) },
      { kind: 'kernel', bytes: 0, ops: Array.from({ length: n }, (_, i): LowOp => ({ o: 'gemv', layer: i, lmHead: false })) },
      { kind: 'attention', bytes: 0, ops: Array.from({ length: n }, (_, i): LowOp => ({ o: 'attn', layer: i, tableOff, tokens: ATTENTION_BLOCKS * o.blockTokens, uniform: 16 })) },
      {
        kind: 'convert',
        bytes: 0,
        ops: Array.from({ length: n }, (_, i): LowOp =>
          i % 2 === 0 ? { o: 'dequant', src: 'arena', srcOff: i * int8, dst: 'scratch', dstOff: 0, bits: 8 } : { o: 'quant', src: 'scratch', srcOff: 0, dst: 'arena', dstOff: (i - 1) * int8, bits: 2 },
        ),
      },
    ];
    const gate = o.gate;
    // with a gate, each kind both ways: behind it, and as issued (the GPU running the ops meanwhile)
    const runs = lists.flatMap((list) => (gate ? [true, false] : [false]).map((gated) => {
      const plan: IssuedPlan = { geometry, slotBytes: slot, arenaBytes, steps: [{ ops: list.ops }] };
      const times = new FileStepTimes(1);
      const issuer = new OpIssuer(b, plan, model, mem, buffers, ev, times, { fileBatch: true, waitMarks: false });
      return { list, gated, times, issuer, each: [] as number[], held: [] as number[] };
    }));
    for (const t0 = performance.now(); performance.now() - t0 < warm; ) {
      for (const r of runs) if (!r.gated) await r.issuer.issueAll();
    }
    await b.synchronize();
    // the kinds take turns, trial by trial, so that a drift of the host's speed (its clocks, the
    // code's first runs) falls on all of them alike; the first round warms up and is left out
    for (let t = 0; t <= trials; t++) {
      for (const r of runs) {
        if (gate && r.gated) {
          gate.hold(`issue ${r.list.kind} ${r.list.bytes}`);
          b.waitEvent('memory', gate.start);
        }
        await r.issuer.issueAll();
        const us = (r.times.issueMs[0] * 1000) / n;
        const g = gate && r.gated ? await gate.release() : undefined;
        if (t > 0) {
          r.each.push(us);
          if (g?.held) r.held.push(us);
        }
        await b.synchronize();
      }
    }
    return runs.map(({ list, gated, each, held }): IssuePoint => ({ kind: list.kind, bytes: list.bytes, gated, ops: n, us: median(held.length ? held : each), trials_us: each, ...(gated ? { held: held.length, held_us: held } : {}) }));
  } finally {
    try {
      await b.synchronize();
    } catch {
      /* the error that got us here matters more */
    }
    events.destroyAll();
    mem.free();
  }
}
