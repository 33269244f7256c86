/**
 * An Executor that records the driver's work instead of timing it (see plan.ts). It keeps its own
 * placement of every block, applied in the order the driver issues moves, so bulk stages
 * (`blocks: []`) resolve to the blocks that really sit in the source tier at that moment.
 */
import type { Executor, LayerWork, MoveBatch, StepTiming } from '../../sim/executor.js';
import { DROPPED, NONE, type KVCache } from '../../sim/kv-cache.js';
import type { TraceSpan } from '../../sim/stream.js';
import type { InitialPlacement, PlannedStep, RecordedPlan } from './plan.js';

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
   * The driver flushes a decision's moves grouped by kind, not in the order they were decided, so a
   * block promoted and then demoted again in one decision arrives demote-first. Apply the moves in
   * rounds, each block's moves in an order consistent with where it is.
   */
  private drain(): void {
    let left = this.pending;
    this.pending = [];
    while (left.length) {
      const next: MoveBatch[] = [];
      let progress = false;
      for (const b of left) {
        const now: number[] = [];
        const later: number[] = [];
        for (const x of b.blocks) {
          const i = b.layer * this.M + x;
          const ok = b.reason === 'spill' ? this.tier[i] === NONE : this.tier[i] === b.fromTier && this.bits[i] === b.fromBits;
          (ok ? now : later).push(x);
        }
        if (now.length) {
          progress = true;
          for (const x of now) this.place(b.layer, x, b.toTier, b.toBits);
          this.cur!.ops.push({ kind: 'move', layer: b.layer, fromTier: b.fromTier, toTier: b.toTier, fromBits: b.fromBits, toBits: b.toBits, blocks: now, reason: b.reason });
        }
        if (later.length) next.push({ ...b, blocks: later });
      }
      if (!progress) {
        const b = next[0];
        throw new Error(`hil: cannot order the moves of layer ${b.layer}: block ${b.blocks[0]} is not in tier ${b.fromTier} at ${b.fromBits} bits`);
      }
      left = next;
    }
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
    if (blocks.length) this.cur!.ops.push({ kind: 'stage', layer: l, fromTier: b.fromTier, blocks, bits });
    return 0;
  }

  layer(w: LayerWork): void {
    this.drain();
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
