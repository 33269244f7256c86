// Paged decode attention time vs context and precision; KV bytes read per second and
// decode steps (tokens) per second for one layer.
import type { AttentionPlan, NativeBackend } from '../addon-types.js';
import type { BlockGeometry, Precision } from '../kv-format.js';
import { bitsPerElement } from '../kv-format.js';
import { buildDeviceCache } from './device-cache.js';
import { type ComputeGate, timeOpGated } from './gate.js';
import { timeOp } from '../timing/time-op.js';

export interface AttentionBenchCase {
  label: string;
  contextTokens: number;
  qHeads: number;
  kvHeads: number;
  headDim: number;
  blockTokens: number;
  groupSize: number;
  /** Precision of block i given the block count. */
  precisionOf: (i: number, blocks: number) => Precision;
  splits?: number;
  /** time each trial behind this gate (gate.ts): the host's launch time is then not timed */
  gate?: ComputeGate;
}

export interface AttentionBenchRow {
  label: string;
  contextTokens: number;
  us: number;
  kvBytes: number;
  GBps: number;
  tokensPerSec: number;
  avgBits: number;
  /** with a gate: in how many trials it held */
  gateHeld?: number;
  gateTrials?: number;
  /** the kernel configuration the calls ran with (the backend's attention options) */
  plan: AttentionPlan;
}

/**
 * The benchmark's mixed table at uniform INT8's average bits: FP16 for the sink block and the most
 * recent blocks (the share that brings the average to INT8's bits), INT4 elsewhere.
 */
export function mixedAtInt8Bits(g: BlockGeometry): { share: number; precisionOf: (i: number, n: number) => Precision } {
  const share = (bitsPerElement(g, 'int8') - bitsPerElement(g, 'int4')) / (bitsPerElement(g, 'fp16') - bitsPerElement(g, 'int4'));
  return { share, precisionOf: (i, n) => (i === 0 || i >= n - (Math.round(share * n) - 1) ? 'fp16' : 'int4') };
}

export async function benchAttention(b: NativeBackend, c: AttentionBenchCase, trials = 10): Promise<AttentionBenchRow> {
  const g = { kvHeads: c.kvHeads, blockTokens: c.blockTokens, headDim: c.headDim, groupSize: c.groupSize };
  const blocks = Math.ceil(c.contextTokens / c.blockTokens);
  const precisions = Array.from({ length: blocks }, (_, i) => c.precisionOf(i, blocks));
  const cache = buildDeviceCache(b, g, precisions);
  const qBytes = c.qHeads * c.headDim * 4;
  const q = b.alloc('device', qBytes);
  const out = b.alloc('device', qBytes);
  b.write(q, 0, new Float32Array(c.qHeads * c.headDim).map((_, i) => Math.sin(i * 0.37)));
  try {
    const repeat = 5;
    const op = { arena: cache.arena, arenaBytes: cache.arenaBytes, table: cache.table, q, out, qHeads: c.qHeads, kvHeads: c.kvHeads, headDim: c.headDim, blockTokens: c.blockTokens, groupSize: c.groupSize, contextTokens: c.contextTokens, splits: c.splits ?? 0, ...(precisions.every((p) => p === precisions[0]) ? { uniformPrecision: precisions[0] } : {}) };
    const plan = b.attentionPlan(op);
    const enqueue = () => b.attention('compute', op, repeat);
    const gated = c.gate ? await timeOpGated(b, c.gate, trials, repeat, enqueue, `attention ${c.contextTokens}`) : undefined;
    const ms = gated ? gated.ms : await timeOp(b, 'compute', trials, repeat, enqueue);
    // bytes the kernel must read: every block's K and V (codes + meta), table and q aside
    const elemsPerBlock = 2 * c.kvHeads * c.blockTokens * c.headDim;
    const kvBytes = precisions.reduce((s, p) => s + (bitsPerElement(g, p) * elemsPerBlock) / 8, 0);
    const avgBits = precisions.reduce((s, p) => s + bitsPerElement(g, p), 0) / blocks;
    return { label: c.label, contextTokens: c.contextTokens, us: ms * 1000, kvBytes, GBps: kvBytes / (ms * 1e6), tokensPerSec: 1000 / ms, avgBits, ...(gated ? { gateHeld: gated.held, gateTrials: gated.trials } : {}), plan };
  } finally {
    b.free(q);
    b.free(out);
    cache.free();
  }
}
