/**
 * The executor interface: turns the driver's work (block moves between tiers, staging copies,
 * a layer's attention and linear projections) into time. The simulated executor computes the time
 * with the event model; a hardware executor does the work on a GPU and measures it. Both are driven
 * identically by the replay driver, so the same policy runs on either.
 */

import type { AttentionKernel } from './hardware/profile.js';
export type TransferReason = 'demote' | 'promote' | 'prefetch' | 'fetch' | 'spill';

/** Blocks of one layer moving between the same pair of (tier, precision), issued as one batched copy. */
export interface MoveBatch {
  layer: number;
  fromTier: number;
  toTier: number;
  fromBits: number;
  toBits: number;
  /** the blocks; empty for a bulk stage of every offloaded block of the layer in fromTier */
  blocks: number[];
  /** bytes at the source precision and at the destination precision */
  bytesFrom: number;
  bytesTo: number;
  reason: TransferReason;
  /**
   * contiguous runs of blocks: the hardware issues one copy (or one file request) per run (the HIL
   * executor coalesces a copy only where source and destination are both contiguous). Counted by the
   * driver as the HIL lowers it: host slots are laid out by block number, so a run is a sequence of
   * consecutive block numbers at 16 bits (a quantized block is smaller than its slot: a run of its
   * own); a block copied to or from an HBM slab slot is a run of its own (slab slots of consecutive
   * blocks are not adjacent in general).
   */
  runs: number;
  /**
   * a bulk stage's host-slot spread: the doublings (sim/host-spread.ts) of its blocks' distances in
   * block order, set by the driver for an executor that prices it (Executor.usesSpread); listed
   * batches carry their blocks instead
   */
  spread?: number;
  /**
   * a stage's copies whose host slot directly follows the previous copy's (a block copied right after
   * the block before it where that one is below KVCache.runBits: not joined to its copy), set by the
   * driver for an executor that prices the spread (Executor.usesSpread); moves into HBM are counted by
   * the executor from their blocks and runs
   */
  adjacent?: number;
}

/** One layer's work on the compute stream. */
export interface LayerWork {
  step: number;
  layer: number;
  /** tokens the attention kernel reads */
  tokens: number;
  /** KV bytes read from HBM-resident blocks (at their precisions) */
  residentBytes: number;
  /** resident bytes that are quantized and need dequantization in the kernel */
  quantizedBytes: number;
  /** KV bytes read from staged (prefetched) copies */
  stagedBytes: number;
  /** bytes that must be fetched on demand before the kernel, per source tier */
  fetchBytes: number[];
  /** contiguous runs (copies, file requests) of those fetches, per source tier (see MoveBatch.runs) */
  fetchRuns: number[];
  /**
   * per source tier, the doublings (sim/host-spread.ts) of the distances between those fetched blocks in
   * block order, as the fetch copies them; set by the driver for an executor that prices it
   * (Executor.usesSpread), else absent
   */
  fetchSpread?: number[];
  /** per source tier, the fetched blocks whose host slot directly follows the previous fetched block's where that one is below KVCache.runBits (MoveBatch.adjacent); set with fetchSpread */
  fetchAdjacent?: number[];
  /** blocks that exist in this layer */
  nBlocks: number;
  /** 1 where the kernel attends the block (a view; valid during the call), for executors that move real data */
  attendedMask: Uint8Array;
  attendedCount: number;
  /** the attention kernel for the attended blocks' precisions (one precision throughout, or 'mixed') */
  kernel: AttentionKernel;
  /**
   * with the 'mixed' kernel: the share of the layer's 8-block windows of live blocks that hold more
   * than one precision (0..1, KVCache.mixedWindowShare; the per-block kernel slows down with them); 0
   * otherwise
   */
  mixedShare: number;
  /**
   * with the 'mixed' kernel: the attended blocks per precision, in kv-cache BITS order (16, 8, 4, 2, 3)
   * (a view, valid during the call); absent: the table kernel is priced by its 'mixed' curve alone
   */
  blocksByBits?: ArrayLike<number>;
}

export interface StepTiming {
  /** from the end of the previous step's compute to the end of this one's */
  latency_us: number;
  compute_us: number;
  stall_us: number;
  /** busy time of the memory streams in this step */
  transfer_us: number;
  /** bytes per link direction moved in this step */
  bytes: Record<string, number>;
}

export interface Executor<Handle = unknown> {
  readonly kind: 'sim' | 'hil';
  /** whether layer() prices the table kernel by LayerWork.mixedShare (the driver computes it only then) */
  readonly usesMixedShare?: boolean;
  /** whether the executor prices the spread of host slots: the driver then counts it for bulk stages (MoveBatch.spread) and fetches (LayerWork.fetchSpread) */
  readonly usesSpread?: boolean;
  beginStep(step: number, contextTokens: number): void;
  /** move resident blocks between tiers / precisions on the memory streams; the batch is valid during the call only */
  move(batch: MoveBatch): Handle;
  /** copy offloaded blocks into HBM staging for their next attention (blocks stay where they are); the batch is valid during the call only */
  stage(batch: MoveBatch): Handle;
  /** attention (with on-demand fetches) and the layer's linear projections on the compute stream */
  layer(work: LayerWork, waits: Handle[]): void;
  /** finish the step (run until its compute is done) and report its timing */
  endStep(): StepTiming;
  /** wait for all outstanding work; returns total bytes per link direction */
  finish(): Record<string, number>;
}
