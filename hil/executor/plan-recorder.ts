/**
 * An Executor that records the driver's work instead of timing it (see plan.ts). It keeps its own
 * placement of every block, applied in the order the driver issues moves, so bulk stages
 * (`blocks: []`) resolve to the blocks that really sit in the source tier at that moment.
 */
import type { Executor, LayerWork, MoveBatch, StepTiming } from '../../sim/executor.js';
import { DROPPED, NONE, type KVCache } from '../../sim/kv-cache.js';
import type { TraceSpan } from '../../sim/stream.js';
import { blockPath, moveRounds } from '../../sim/move-order.js';
import type { InitialPlacement, PlannedStep, RecordedPlan } from './plan.js';

export { blockPath };

export class PlanRecorder implements Executor<number> {
  readonly kind = 'hil' as const;
  readonly spans: TraceSpan[] = [];
  readonly steps: PlannedStep[] = [];
  private initial?: InitialPlacement;
  private tier!: Int8Array;
  private bits!: Int8Array;
  private known!: Int32Array;
  private cur?: PlannedStep;
  private pending: MoveBatch[] = [];
  /** whether the last stage op recorded was of listed blocks (not a bulk stage) */
  private lastStageListed = false;
  private readonly M: number;
  private readonly L: number;

  constructor(
    private readonly cache: KVCache,
    /** link-direction keys, so the per-step table has the simulator's columns */
    private readonly linkKeys: string[] = [],
  ) {
    this.M = cache.maxBlocks;
    this.L = cache.created.length;
  }

  get plan(): RecordedPlan {
    if (!this.initial) throw new Error('nothing recorded: the trace has no decode steps');
    return { initial: this.initial, steps: this.steps };
  }

  beginStep(step: number, contextTokens: number): void {
    if (!this.initial) this.snapshot();
    this.cur = { step, contextTokens, ops: [] };
    this.steps.push(this.cur);
  }

  move(b: MoveBatch): number {
    this.pending.push({ ...b, blocks: [...b.blocks] });
    return 0;
  }

  /**
   * The driver flushes a decision's moves grouped by (kind, tiers, bits), not in the order they were
   * decided, so a block promoted and then demoted again in one decision arrives demote-first, and a
   * block demoted, promoted and demoted again is listed twice in one batch. Each block's moves are
   * put in an order that walks from where it is through every one of them (blockPath); the k-th
   * moves of all blocks form round k, and each round keeps the batches' order.
   */
  private drain(): number[] {
    const batches = this.pending;
    if (batches.length === 0) return [];
    this.pending = [];
    const moved = new Set<number>();
    const rounds = moveRounds(batches, this.M, (i) => [this.tier[i], this.bits[i]], (i, ks) => {
      const m = batches[ks[0]];
      const moves = ks.map((k) => `${batches[k].reason} ${batches[k].fromTier}/${batches[k].fromBits}b->${batches[k].toTier}/${batches[k].toBits}b`).join(', ');
      throw new Error(`hil: cannot order the moves of layer ${m.layer} block ${i % this.M}: it is in tier ${this.tier[i]} at ${this.bits[i]} bits and no order of its moves (${moves}) starts there`);
    });
    for (const { k, blocks } of rounds) {
      const m = batches[k];
      for (const x of blocks) {
        this.place(m.layer, x, m.toTier, m.toBits);
        moved.add(m.layer * this.M + x);
      }
      this.cur!.ops.push({ kind: 'move', layer: m.layer, fromTier: m.fromTier, toTier: m.toTier, fromBits: m.fromBits, toBits: m.toBits, blocks, reason: m.reason });
    }
    return [...moved];
  }

  stage(b: MoveBatch): number {
    this.drain();
    const l = b.layer;
    let blocks = [...b.blocks];
    if (blocks.length === 0) {
      for (let x = 0; x < this.known[l]; x++) if (this.tier[l * this.M + x] === b.fromTier && this.cache.tierOf(l, x) !== DROPPED) blocks.push(x);
    } else {
      blocks = blocks.filter((x) => this.tier[l * this.M + x] === b.fromTier);
    }
    const bits = blocks.map((x) => this.bits[l * this.M + x]);
    if (blocks.length === 0) return 0;
    // Prefetches of single blocks issued one after another for one layer and tier (a policy that
    // stages its selection block by block) become one stage: one ring extent and one completion,
    // as a system prefetching a layer's selection issues it, rather than an extent, a fence and an
    // event per block. Bulk stages stay apart (they list what is in the tier, staged or not).
    const ops = this.cur!.ops;
    const last = ops[ops.length - 1];
    if (b.blocks.length > 0 && last?.kind === 'stage' && last.layer === l && last.fromTier === b.fromTier && this.lastStageListed) {
      for (let i = 0; i < blocks.length; i++) {
        last.blocks.push(blocks[i]);
        last.bits.push(bits[i]);
      }
      return 0;
    }
    ops.push({ kind: 'stage', layer: l, fromTier: b.fromTier, blocks, bits });
    this.lastStageListed = b.blocks.length > 0;
    return 0;
  }

  layer(w: LayerWork): void {
    // the driver has flushed every move decided so far: each moved block must be where the accounting has it
    for (const i of this.drain()) {
      const l = Math.floor(i / this.M);
      const b = i % this.M;
      const t = this.cache.tierOf(l, b);
      if (t !== DROPPED && (t !== this.tier[i] || this.cache.bitsOf(l, b) !== this.bits[i])) {
        throw new Error(`hil: the recorded moves leave layer ${l} block ${b} in tier ${this.tier[i]} at ${this.bits[i]} bits, the accounting has it in tier ${t} at ${this.cache.bitsOf(l, b)} bits`);
      }
    }
    const l = w.layer;
    const created: number[] = [];
    const dropped: number[] = [];
    // evictions reach the executor only through the accounting
    for (let x = 0; x < this.known[l]; x++) {
      if (this.tier[l * this.M + x] >= 0 && this.cache.tierOf(l, x) === DROPPED) {
        this.tier[l * this.M + x] = DROPPED;
        dropped.push(x);
      }
    }
    // blocks the driver created in HBM (a spilled block arrives as a 'spill' move first)
    for (let x = this.known[l]; x < w.nBlocks; x++) {
      if (this.tier[l * this.M + x] === NONE) {
        const t = this.cache.tierOf(l, x);
        this.place(l, x, t, this.cache.bitsOf(l, x));
        if (t === 0) created.push(x);
      }
    }
    this.known[l] = Math.max(this.known[l], w.nBlocks);
    const attended = new Int32Array(w.attendedCount);
    let k = 0;
    for (let x = 0; x < w.nBlocks && k < attended.length; x++) if (w.attendedMask[x]) attended[k++] = x;
    this.cur!.ops.push({ kind: 'layer', layer: l, tokens: w.tokens, attended: attended.subarray(0, k), created, dropped });
  }

  endStep(): StepTiming {
    this.drain();
    return { latency_us: 0, compute_us: 0, stall_us: 0, transfer_us: 0, bytes: Object.fromEntries(this.linkKeys.map((k) => [k, 0])) };
  }

  finish(): Record<string, number> {
    return {};
  }

  private place(l: number, b: number, tier: number, bits: number): void {
    this.tier[l * this.M + b] = tier;
    this.bits[l * this.M + b] = bits;
    if (b + 1 > this.known[l]) this.known[l] = b + 1;
  }

  private snapshot(): void {
    const c = this.cache;
    const n = this.L * this.M;
    this.tier = new Int8Array(n).fill(NONE);
    this.bits = new Int8Array(n);
    this.known = new Int32Array(this.L);
    for (let l = 0; l < this.L; l++) {
      for (let b = 0; b < c.created[l]; b++) {
        this.tier[l * this.M + b] = c.tierOf(l, b) === DROPPED ? DROPPED : c.tierOf(l, b);
        this.bits[l * this.M + b] = c.bitsOf(l, b);
      }
      this.known[l] = c.created[l];
    }
    this.initial = { layers: this.L, maxBlocks: this.M, tier: this.tier.slice(), bits: this.bits.slice() };
  }
}
