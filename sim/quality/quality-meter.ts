/**
 * The quality measures, the same for every policy, computed from the true attention of each layer
 * at each step and the state of the KV cache when the layer's attention ran:
 * - quantization error: Σ_j p_j·e(bits_j) / Σ_j p_j over the attended blocks j, with p_j the true
 *   attention mass and e the relative error of the block's precision from the error table (a block at
 *   16 bits contributes 0), computed per KV group (p is that group's attention) and averaged over
 *   the groups. Per step: the mean over layers (and the worst layer).
 * - needle retention (needle traces only): in each retrieval layer, whether the needle block was
 *   unavailable (evicted or skipped) or degraded (attended below 16 bits) at each step. The block
 *   holds every group's keys and values, so this is the same for every group (the per-group
 *   average is the layer's value).
 * Recall is measured by the replay driver (attendedShare, per group, averaged).
 */
import type { Observation, Policy } from '../../policies/policy.js';
import type { LayerAttention, TraceHeader } from '../../traces/format.js';
import { doubleArray, objectArray } from '../../common/array-kinds.js';
import { rowUniform } from '../group-mean.js';
import { BITS, bitsIndex, type KVCache } from '../kv-cache.js';
import { defaultErrorTable, type QuantErrorTable } from './error-table.js';
import { needleOf, type NeedleInfo } from './needle.js';

// the branch-free listed counts (QualityMeter's listed rows) name each width of BITS: this fails to
// compile when BITS changes, so that a new width gets a count of its own there
void (BITS satisfies readonly [16, 8, 4, 2, 3]);

/**
 * groupError's count per precision in one number: a block at 16, 8, 4, 2 or 3 bits adds COUNT_FIELD
 * to the power 0, 1, 2, 3 or 4 (other precisions: 0), so that each precision's count is a digit in
 * base COUNT_FIELD while fewer than COUNT_FIELD blocks are added (the sum stays below 2^50: exact)
 */
const COUNT_FIELD = 1024;
const COUNT_PLACE = new Float64Array(17);
COUNT_PLACE[16] = 1;
COUNT_PLACE[8] = COUNT_FIELD;
COUNT_PLACE[4] = COUNT_FIELD ** 2;
COUNT_PLACE[2] = COUNT_FIELD ** 3;
COUNT_PLACE[3] = COUNT_FIELD ** 4;

export interface StepQuality {
  /** mass-weighted relative quantization error, mean over layers */
  quant_error: number;
  /** the worst layer's */
  quant_error_max: number;
  /** needle traces: retrieval layers where the needle block was not attended */
  needle_unavailable?: number;
  /** needle traces: retrieval layers where it was attended below 16 bits */
  needle_degraded?: number;
  /** needle traces: lowest precision of the needle over retrieval layers (0 when unavailable) */
  needle_bits_min?: number;
}

export interface NeedleSummary {
  block: number;
  layers: number[];
  active_from_step: number;
  active_steps: number;
  /** steps at which the needle was unavailable in at least one retrieval layer */
  unavailable_steps: number;
  /** steps at which it was degraded (attended below 16 bits) in at least one retrieval layer */
  degraded_steps: number;
  first_unavailable_step: number | null;
  first_degraded_step: number | null;
  /** the same counts inside the active window, when the retrieval layers look for it */
  unavailable_active_steps: number;
  degraded_active_steps: number;
  /** attended at full precision in every retrieval layer at every step of the active window */
  retained: boolean;
  /** available (possibly quantized) in every retrieval layer during the active window */
  available: boolean;
}

export interface QualitySummary {
  quant_error: { mean: number; max: number };
  needle?: NeedleSummary;
}

export class QualityMeter {
  readonly needle: NeedleInfo | null;
  private readonly isRetrieval: Uint8Array;
  private readonly listed: Uint8Array;
  private readonly listedAt = new Int32Array(BITS.length);
  /** sumListed's tot and err */
  private readonly sums = new Float64Array(2);
  /** the index in BITS of each precision a block can have (bitsIndex, as a table) */
  private readonly bitsSlot = new Int8Array(17).fill(-1);
  private readonly errOfBits = new Map<number, number>();
  /** errOfBits for 0..16 bits (NaN: not computed yet) */
  private readonly errOfSmallBits = new Float64Array(17).fill(Number.NaN);
  /**
   * the step's errors per layer (emptied by pops at each step's end): an array of doubles from the
   * start, as a new `[]` would hold small integers (a step's first errors are often 0) until its first
   * fraction, and code compiled for the widened array of an earlier meter would be thrown away
   */
  private readonly layerErr: number[] = doubleArray(0);
  private nUnavail = 0;
  private nDegraded = 0;
  private bitsMin = 16;
  /** (arrays of objects from the start, as layerErr is of doubles) */
  private readonly steps: StepQuality[] = objectArray();
  private readonly needleSteps: { step: number; unavailable: boolean; degraded: boolean }[] = objectArray();
  private curStep = -1;

  constructor(
    header: TraceHeader,
    private readonly cache: KVCache,
    private readonly policy: Pick<Policy, 'quant'>,
    private readonly table: QuantErrorTable = defaultErrorTable(),
  ) {
    this.needle = needleOf(header);
    this.isRetrieval = new Uint8Array(header.layers);
    if (this.needle) for (const l of this.needle.layers) this.isRetrieval[l] = 1;
    this.listed = new Uint8Array(cache.maxBlocks);
    for (const bits of BITS) this.bitsSlot[bits] = bitsIndex(bits);
  }

  /** relative error of one block as it is stored now */
  blockError(layer: number, block: number): number {
    const stored = this.cache.bitsOf(layer, block);
    const q = this.policy.quant;
    return this.errorOfBits(q?.bitsOf ? q.bitsOf(layer, block, stored) : stored);
  }

  /**
   * errorOfBits of stored bits (0..16), read from `errs` (errOfSmallBits) once computed. Both
   * answers are reads of `errs` (errorOfBits fills it for such bits), so that the compiled loops
   * that call it keep the value unboxed (a call's answer would be a heap number in each of them).
   */
  private storedError(errs: Float64Array, bits: number): number {
    const e = errs[bits];
    if (!Number.isNaN(e)) return e;
    this.errorOfBits(bits);
    return errs[bits];
  }

  private errorOfBits(bits: number): number {
    const known = bits >= 0 && bits <= 16 ? this.errOfSmallBits[bits] : Number.NaN;
    if (!Number.isNaN(known)) return known;
    const q = this.policy.quant;
    let e = this.errOfBits.get(bits);
    if (e === undefined) {
      e = this.table.relError(bits, q?.groupSize ?? this.cache.groupSize, q?.rotation ?? false);
      this.errOfBits.set(bits, e);
    }
    if (bits >= 0 && bits <= 16 && Number.isInteger(bits)) this.errOfSmallBits[bits] = e;
    return e;
  }

  /**
   * Record one layer of one decode step (call after the attention ran, before skips are undone):
   * `rows` are the layer's trace rows, one per KV group. The quantization error is computed per
   * group (each group's own attention weights the blocks) and averaged over the groups.
   */
  layer(step: number, l: number, obs: Observation, rows: readonly LayerAttention[]): void {
    this.curStep = step;
    const { attended, nBlocks } = obs;
    const custom = this.policy.quant?.bitsOf !== undefined;
    const live = this.cache.live(l);
    if (!custom && this.cache.countBits(l, 16) === live) {
      // every attended block is at full precision: no quantization error, nothing to add up
      this.layerErr.push(0);
    } else {
      let sum = 0;
      for (const la of rows) sum += this.groupError(l, obs, la, custom, live);
      this.layerErr.push(sum / rows.length);
    }
    if (this.needle && this.isRetrieval[l] && this.needle.block < nBlocks) {
      const b = this.needle.block;
      if (!attended[b]) {
        this.nUnavail++;
        this.bitsMin = 0;
      } else {
        const stored = this.cache.bitsOf(l, b);
        const bits = this.policy.quant?.bitsOf ? this.policy.quant.bitsOf(l, b, stored) : stored;
        if (bits < 16) this.nDegraded++;
        if (bits < this.bitsMin) this.bitsMin = bits;
      }
    }
  }

  /** Σ_j p_j·e_j / Σ_j p_j over the attended blocks j, p the row's (one group's) true attention. */
  private groupError(l: number, obs: Observation, la: LayerAttention, custom: boolean, live: number): number {
    const { attended, nBlocks } = obs;
    let tot = 0;
    let err = 0;
    if (la.idx === null) {
      for (let b = 0; b < nBlocks; b++) {
        if (!attended[b]) continue;
        tot += la.mass[b];
        err += la.mass[b] * this.blockError(l, b);
      }
      return tot > 0 ? err / tot : 0;
    }
    const idx = la.idx;
    const uniform = rowUniform(la);
    // without skips or per-block effective bits, unlisted blocks are counted by precision: O(k)
    const byCount = !custom && obs.attendedCount === live;
    const listedAt = this.listedAt;
    for (let k = 0; k < listedAt.length; k++) listedAt[k] = 0;
    const mass = la.mass;
    const cache = this.cache;
    const errs = this.errOfSmallBits;
    const bitsAt = cache.bits;
    const base = l * cache.maxBlocks;
    if (byCount) {
      // sumListed's sums without a branch on the precision (the blocks' precisions mix at random,
      // and a branch on them is mispredicted): every block adds m·e(bits) to err (the same sum in the
      // same order) and is counted per precision by adding its precision's place value (COUNT_PLACE)
      // to one number, read out per run of fewer than COUNT_FIELD blocks. A mass that is not finite
      // makes tot not finite, and a precision whose error is not computed yet (NaN in errs) makes err
      // NaN: the row is then summed by sumListed (which computes that error).
      // Where every block below nBlocks was attended, no listed block is read in `attended`: one
      // listed at nBlocks or above (which the trace reader refuses) sends the row to sumListed too.
      let n16 = 0;
      let n8 = 0;
      let n4 = 0;
      let n2 = 0;
      let n3 = 0;
      const place = COUNT_PLACE;
      const everyAttended = obs.attendedCount === nBlocks;
      let outside = 0;
      for (let i0 = 0; i0 < idx.length; i0 += COUNT_FIELD - 1) {
        let counts = 0;
        const end = Math.min(idx.length, i0 + COUNT_FIELD - 1);
        if (everyAttended) {
          for (let i = i0; i < end; i++) {
            const b = idx[i];
            outside |= +(b >= nBlocks);
            const m = mass[i];
            tot += m;
            const bits = bitsAt[base + b];
            err += m * errs[bits];
            counts += place[bits];
          }
        } else {
          for (let i = i0; i < end; i++) {
            const b = idx[i];
            if (!attended[b]) continue;
            const m = mass[i];
            tot += m;
            const bits = bitsAt[base + b];
            err += m * errs[bits];
            counts += place[bits];
          }
        }
        // (the fields, from the highest: each below COUNT_FIELD, so every step is exact)
        const c3 = Math.floor(counts / COUNT_FIELD ** 4);
        counts -= c3 * COUNT_FIELD ** 4;
        const c2 = Math.floor(counts / COUNT_FIELD ** 3);
        counts -= c2 * COUNT_FIELD ** 3;
        const c4 = Math.floor(counts / COUNT_FIELD ** 2);
        counts -= c4 * COUNT_FIELD ** 2;
        const c8 = Math.floor(counts / COUNT_FIELD);
        n3 += c3;
        n2 += c2;
        n4 += c4;
        n8 += c8;
        n16 += counts - c8 * COUNT_FIELD;
      }
      if (outside !== 0 || !Number.isFinite(tot) || Number.isNaN(err)) {
        this.sumListed(idx, mass, attended, base);
        tot = this.sums[0];
        err = this.sums[1];
      } else {
        const slotOf = this.bitsSlot;
        listedAt[slotOf[16]] = n16;
        listedAt[slotOf[8]] = n8;
        listedAt[slotOf[4]] = n4;
        listedAt[slotOf[2]] = n2;
        listedAt[slotOf[3]] = n3;
      }
    } else {
      const listed = this.listed;
      for (let i = 0; i < idx.length; i++) {
        const b = idx[i];
        if (!attended[b]) continue;
        listed[b] = 1;
        const e = custom ? this.blockError(l, b) : this.storedError(errs, bitsAt[base + b]);
        tot += mass[i];
        err += mass[i] * e;
      }
      if (uniform > 0) {
        for (let b = 0; b < nBlocks; b++) {
          if (listed[b] || !attended[b]) continue;
          const e = custom ? this.blockError(l, b) : this.storedError(errs, bitsAt[base + b]);
          tot += uniform;
          err += uniform * e;
        }
      }
      for (let i = 0; i < idx.length; i++) listed[idx[i]] = 0;
    }
    if (uniform > 0 && byCount) {
      const counts = cache.bitsCount;
      const row = l * BITS.length;
      for (let k = 0; k < BITS.length; k++) {
        const n = counts[row + k] - listedAt[k];
        tot += uniform * n;
        err += uniform * n * this.storedError(errs, BITS[k]);
      }
    }
    return tot > 0 ? err / tot : 0;
  }

  /** the listed part of groupError's sums without skips (tot, err into sums), counting the listed blocks per precision into listedAt */
  /** groupError's sums over the listed attended blocks (tot, err into sums), each block counted per precision into listedAt */
  private sumListed(idx: ArrayLike<number>, mass: ArrayLike<number>, attended: ArrayLike<number>, base: number): void {
    const listedAt = this.listedAt;
    const errs = this.errOfSmallBits;
    const bitsAt = this.cache.bits;
    let tot = 0;
    let err = 0;
    // (blockError without a custom scheme: the error of the stored bits, read from errOfSmallBits)
    const slotOf = this.bitsSlot;
    for (let i = 0; i < idx.length; i++) {
      const b = idx[i];
      if (!attended[b]) continue;
      const bits = bitsAt[base + b];
      tot += mass[i];
      err += mass[i] * this.storedError(errs, bits);
      listedAt[slotOf[bits]]++;
    }
    this.sums[0] = tot;
    this.sums[1] = err;
  }

  /** Close the step: its quality numbers. */
  endStep(): StepQuality {
    const n = this.layerErr.length;
    const q: StepQuality = {
      quant_error: n ? this.layerErr.reduce((a, b) => a + b, 0) / n : 0,
      quant_error_max: n ? Math.max(...this.layerErr) : 0,
    };
    if (this.needle) {
      q.needle_unavailable = this.nUnavail;
      q.needle_degraded = this.nDegraded;
      q.needle_bits_min = this.bitsMin;
      this.needleSteps.push({ step: this.curStep, unavailable: this.nUnavail > 0, degraded: this.nDegraded > 0 });
    }
    this.steps.push(q);
    const errs = this.layerErr;
    while (errs.length !== 0) errs.pop();
    this.nUnavail = 0;
    this.nDegraded = 0;
    this.bitsMin = 16;
    return q;
  }

  summary(): QualitySummary {
    const s = this.steps;
    const out: QualitySummary = {
      quant_error: {
        mean: s.length ? s.reduce((a, q) => a + q.quant_error, 0) / s.length : 0,
        max: s.reduce((m, q) => Math.max(m, q.quant_error_max), 0),
      },
    };
    const nd = this.needle;
    if (nd) {
      const active = (step: number) => step >= nd.fromStep && step < nd.fromStep + nd.steps;
      const un = this.needleSteps.filter((x) => x.unavailable);
      const dg = this.needleSteps.filter((x) => x.degraded);
      const unA = un.filter((x) => active(x.step)).length;
      const dgA = dg.filter((x) => active(x.step)).length;
      out.needle = {
        block: nd.block,
        layers: nd.layers,
        active_from_step: nd.fromStep,
        active_steps: nd.steps,
        unavailable_steps: un.length,
        degraded_steps: dg.length,
        first_unavailable_step: un.length ? un[0].step : null,
        first_degraded_step: dg.length ? dg[0].step : null,
        unavailable_active_steps: unA,
        degraded_active_steps: dgA,
        retained: unA === 0 && dgA === 0,
        available: unA === 0,
      };
    }
    return out;
  }
}
