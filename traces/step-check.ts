/**
 * Value checks for one decode step against its header, shared by TraceWriter (before writing) and
 * validateTrace (after reading): sizes, nBlocks, masses finite in [0,1], idx < nBlocks and unique,
 * the row's mass (listed + remainder) summing to 1, and key norms within the blocks.
 */
import { blocksFor, contextTokensAt, type LayerAttention, type TraceHeader, type TraceStep } from './format.js';

export interface StepCheckOptions {
  /** allowed |sum(mass) + remainder - 1| per (step, layer); default 1e-3 */
  massTolerance?: number;
}

export const DEFAULT_MASS_TOLERANCE = 1e-3;

/** `layer 3`, or `layer 3 group 1` when the trace has several KV-head groups. */
export function rowLabel(row: number, kvGroups: number): string {
  return kvGroups === 1 ? `layer ${row}` : `layer ${Math.floor(row / kvGroups)} group ${row % kvGroups}`;
}

export class StepChecker {
  private readonly tolerance: number;
  /** seen[b] === stamp marks block b as listed in the current row (uniqueness in O(k)) */
  private seen = new Uint32Array(0);
  private stamp = 0;

  constructor(
    private readonly header: TraceHeader,
    options: StepCheckOptions = {},
  ) {
    const t = options.massTolerance ?? DEFAULT_MASS_TOLERANCE;
    if (!(t >= 0 && t < 1)) throw new Error(`massTolerance: expected a number in [0, 1), got ${String(t)}`);
    this.tolerance = t;
  }

  /**
   * Throw `${where}: <what is wrong>` unless `step` is a valid step number `expected` of this trace.
   * `where` names the file and the step (and the byte offset where there is one).
   */
  check(step: TraceStep, expected: number, where: string): void {
    const h = this.header;
    if (typeof step !== 'object' || step === null) throw new Error(`${where}: expected a TraceStep object, got ${String(step)}`);
    if (step.step !== expected) {
      throw new Error(`${where}: field 'step': expected ${expected} (steps are numbered consecutively from 0), got ${String(step.step)}`);
    }
    const ctx = contextTokensAt(h, expected);
    if (step.contextTokens !== ctx) {
      throw new Error(`${where}: field 'contextTokens': expected ${ctx} (prompt_tokens + step + 1), got ${String(step.contextTokens)}`);
    }
    const rows = h.layers * h.kv_groups;
    if (!Array.isArray(step.layers) || step.layers.length !== rows) {
      const got = Array.isArray(step.layers) ? step.layers.length : String(step.layers);
      throw new Error(`${where}: field 'layers': expected ${rows} entries (layers x kv_groups), got ${got}`);
    }
    const nBlocks = blocksFor(ctx, h.block_size);
    if (this.seen.length < nBlocks) this.seen = new Uint32Array(Math.max(nBlocks, 2 * this.seen.length));
    for (let r = 0; r < rows; r++) this.checkLayer(step.layers[r]!, nBlocks, `${where}: ${rowLabel(r, h.kv_groups)}`);
  }

  private checkLayer(a: LayerAttention, nBlocks: number, where: string): void {
    const h = this.header;
    if (typeof a !== 'object' || a === null) throw new Error(`${where}: expected a LayerAttention object, got ${String(a)}`);
    if (a.nBlocks !== nBlocks) {
      throw new Error(`${where}: field 'nBlocks': expected ${nBlocks} (ceil(contextTokens / block_size)), got ${String(a.nBlocks)}`);
    }
    if (!(a.mass instanceof Float32Array)) throw new Error(`${where}: field 'mass': expected a Float32Array`);
    const listed = a.mass.length;
    if (h.encoding === 'dense') {
      if (a.idx !== null) throw new Error(`${where}: field 'idx': expected null in a dense trace`);
      if (listed !== nBlocks) throw new Error(`${where}: field 'mass': expected ${nBlocks} entries (dense: one per block), got ${listed}`);
      if (a.remainder !== 0) throw new Error(`${where}: field 'remainder': expected 0 in a dense trace, got ${String(a.remainder)}`);
    } else {
      const most = Math.min(h.topk ?? 0, nBlocks);
      if (listed > most) throw new Error(`${where}: field 'mass': expected at most ${most} entries (min(topk, nBlocks)), got ${listed}`);
      if (!(a.idx instanceof Uint32Array)) throw new Error(`${where}: field 'idx': expected a Uint32Array in a topk trace`);
      if (a.idx.length !== listed) throw new Error(`${where}: field 'idx': expected ${listed} entries (as many as mass), got ${a.idx.length}`);
      const stamp = this.nextStamp();
      const seen = this.seen;
      for (let i = 0; i < listed; i++) {
        const b = a.idx[i]!;
        if (b >= nBlocks) throw new Error(`${where}: field 'idx[${i}]': expected a block index < nBlocks (${nBlocks}), got ${b}`);
        if (seen[b] === stamp) throw new Error(`${where}: field 'idx[${i}]': block ${b} is listed twice (indices must be unique)`);
        seen[b] = stamp;
      }
      const r = a.remainder;
      if (typeof r !== 'number' || !Number.isFinite(r) || r < 0 || r > 1) {
        throw new Error(`${where}: field 'remainder': expected a finite number in [0, 1], got ${String(r)}`);
      }
      if (listed === nBlocks && r > this.tolerance) {
        throw new Error(`${where}: field 'remainder': expected 0 when every block is listed, got ${r}`);
      }
    }
    let sum = 0;
    const m = a.mass;
    for (let i = 0; i < listed; i++) {
      const v = m[i]!;
      if (!(v >= 0 && v <= 1)) throw new Error(`${where}: field 'mass[${i}]': expected a finite number in [0, 1], got ${v}`);
      sum += v;
    }
    sum += a.remainder;
    if (Math.abs(sum - 1) > this.tolerance) {
      throw new Error(`${where}: field 'mass': listed mass + remainder is ${sum}, expected 1 (within ${this.tolerance})`);
    }
    if (!Number.isInteger(a.normFrom) || a.normFrom < 0) {
      throw new Error(`${where}: field 'normFrom': expected an integer >= 0, got ${String(a.normFrom)}`);
    }
    if (!(a.norms instanceof Float32Array)) throw new Error(`${where}: field 'norms': expected a Float32Array`);
    if (a.normFrom + a.norms.length > nBlocks) {
      throw new Error(`${where}: field 'norms': normFrom (${a.normFrom}) + ${a.norms.length} norms exceeds nBlocks (${nBlocks})`);
    }
    const n = a.norms;
    for (let i = 0; i < n.length; i++) {
      const v = n[i]!;
      if (!(v >= 0 && v < Infinity)) throw new Error(`${where}: field 'norms[${i}]': expected a finite number >= 0, got ${v}`);
    }
  }

  private nextStamp(): number {
    this.stamp = (this.stamp + 1) >>> 0;
    if (this.stamp === 0) {
      this.seen.fill(0);
      this.stamp = 1;
    }
    return this.stamp;
  }
}
