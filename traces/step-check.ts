/**
 * Checks of one decode step against its header, for steps handed over as objects (TraceWriter,
 * before writing): the step number, contextTokens, the row count, and per row the types, nBlocks,
 * how many blocks are listed, idx length and the norm range; then the row's values with the same
 * RowValueCheck that TraceReader runs on every record it reads (traces/row-values.ts).
 */
import { blocksFor, contextTokensAt, type LayerAttention, type TraceHeader, type TraceStep } from './format.js';
import { RowValueCheck, checkMassTolerance, rowLabel } from './row-values.js';

export { DEFAULT_MASS_TOLERANCE, rowLabel } from './row-values.js';

export interface StepCheckOptions {
  /** allowed |sum(mass) + remainder - 1| per (step, layer); default 1e-3 */
  massTolerance?: number;
}

export class StepChecker {
  private readonly values: RowValueCheck;

  constructor(
    private readonly header: TraceHeader,
    options: StepCheckOptions = {},
  ) {
    this.values = new RowValueCheck(header.kv_groups, header.encoding === 'dense', checkMassTolerance(options.massTolerance));
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
    for (let r = 0; r < rows; r++) {
      const a = step.layers[r]!;
      this.checkShape(a, nBlocks, `${where}: ${rowLabel(r, h.kv_groups)}`);
      this.values.check(a.idx, a.mass, a.remainder, a.norms, nBlocks, where, r);
    }
  }

  private checkShape(a: LayerAttention, nBlocks: number, where: string): void {
    const h = this.header;
    if (typeof a !== 'object' || a === null) throw new Error(`${where}: expected a LayerAttention object, got ${String(a)}`);
    if (a.nBlocks !== nBlocks) {
      throw new Error(`${where}: field 'nBlocks': expected ${nBlocks} (ceil(contextTokens / block_size)), got ${String(a.nBlocks)}`);
    }
    if (!(a.mass instanceof Float32Array)) throw new Error(`${where}: field 'mass': expected a Float32Array`);
    if (typeof a.remainder !== 'number') throw new Error(`${where}: field 'remainder': expected a number, got ${String(a.remainder)}`);
    const listed = a.mass.length;
    if (h.encoding === 'dense') {
      if (a.idx !== null) throw new Error(`${where}: field 'idx': expected null in a dense trace`);
      if (listed !== nBlocks) throw new Error(`${where}: field 'mass': expected ${nBlocks} entries (dense: one per block), got ${listed}`);
    } else {
      const most = Math.min(h.topk ?? 0, nBlocks);
      if (listed > most) throw new Error(`${where}: field 'mass': expected at most ${most} entries (min(topk, nBlocks)), got ${listed}`);
      if (!(a.idx instanceof Uint32Array)) throw new Error(`${where}: field 'idx': expected a Uint32Array in a topk trace`);
      if (a.idx.length !== listed) throw new Error(`${where}: field 'idx': expected ${listed} entries (as many as mass), got ${a.idx.length}`);
    }
    if (!Number.isInteger(a.normFrom) || a.normFrom < 0) {
      throw new Error(`${where}: field 'normFrom': expected an integer >= 0, got ${String(a.normFrom)}`);
    }
    if (!(a.norms instanceof Float32Array)) throw new Error(`${where}: field 'norms': expected a Float32Array`);
    if (a.normFrom + a.norms.length > nBlocks) {
      throw new Error(`${where}: field 'norms': normFrom (${a.normFrom}) + ${a.norms.length} norms exceeds nBlocks (${nBlocks})`);
    }
  }
}
