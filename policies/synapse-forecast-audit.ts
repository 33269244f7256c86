/**
 * Precision and recall of a forecast, per step and over the run. At each decision the forecast set F
 * and the offloaded blocks O (below HBM at that moment) of a layer are recorded; when the layer's
 * attention is known, the truth T is the blocks of O with mass ≥ θ (the layer's heavy threshold).
 * A step's precision is Σ|F ∩ T| / Σ|F| and its recall Σ|F ∩ T| / Σ|T| over its layers; a step
 * without forecast (without truth) has no precision (recall). Run totals sum over every step.
 *
 * A block of O whose mass is unknown (not attended, so not observed) cannot be judged: it is counted
 * as unobserved, and recall is reported only when no block was (the run's truth was fully seen).
 * The audit only counts: nothing a policy decides reads it.
 */
import type { Observation } from './policy.js';

export interface StepCounts {
  step: number;
  hits: number;
  forecast: number;
  truth: number;
}

export class ForecastAudit {
  /**
   * per layer: its recorded forecast as bits (rows of `words` 32-bit words; block b at bit b % 32 of
   * word b >> 5): a row of a few cache lines, which the truth's reads at scattered blocks find warm
   */
  private readonly forecast: Int32Array;
  private readonly words: number;
  private readonly offloaded: Uint8Array;
  /** per layer: the caller's mask of its recorded decision when begin() kept it (not copied), else null */
  private readonly kept: (Uint8Array | null)[];
  /** per layer: the distinct blocks of its recorded forecast (rows of maxBlocks) and their count */
  private readonly forecastList: Int32Array;
  private readonly forecastCount: Int32Array;
  /** scratch: position of a block in an observation's listed blocks (−1: unlisted) */
  private readonly listedAt: Int32Array;
  /** per layer: step of the decision waiting for its truth (−2: none) */
  private readonly pending: Int32Array;
  /** the counts of each step with a forecast or a truth, in step order (an array of objects from the start: see objectList) */
  readonly steps: StepCounts[] = objectList<StepCounts>();
  hits = 0;
  forecastBlocks = 0;
  truthBlocks = 0;
  unobserved = 0;

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
  ) {
    this.words = (maxBlocks + 31) >> 5;
    this.forecast = new Int32Array(layers * this.words);
    this.offloaded = new Uint8Array(layers * maxBlocks);
    this.forecastList = new Int32Array(layers * maxBlocks);
    this.forecastCount = new Int32Array(layers);
    this.listedAt = new Int32Array(maxBlocks).fill(-1);
    this.pending = new Int32Array(layers).fill(-2);
    this.kept = Array.from({ length: layers }, () => null);
  }

  /** layer l's offloaded mask as recorded: the kept mask (block b at b), or the copies (block b at l·maxBlocks + b) */
  private offloadedOf(l: number): Uint8Array {
    return this.kept[l] ?? this.offloaded;
  }

  /**
   * record layer l's decision at `step`: which of its n blocks are offloaded (`isOffloaded(b)`, or a
   * 0/1 mask), and the forecast set. With `keep`, the mask (0 from block n on) is kept, not copied:
   * the caller leaves it as it is until the truth of this decision has come.
   */
  begin(l: number, step: number, n: number, isOffloaded: ((b: number) => boolean) | Uint8Array, forecast: ArrayLike<number>, count = forecast.length, keep = false): void {
    const M = this.maxBlocks;
    const base = l * M;
    const fc = this.forecast;
    const w = l * this.words;
    for (let i = 0; i < this.forecastCount[l]; i++) {
      const b = this.forecastList[base + i];
      fc[w + (b >> 5)] &= ~(1 << (b & 31));
    }
    this.kept[l] = null;
    if (keep && typeof isOffloaded !== 'function') this.kept[l] = isOffloaded;
    else if (typeof isOffloaded === 'function') {
      this.offloaded.fill(0, base, base + M);
      for (let b = 0; b < n; b++) if (isOffloaded(b)) this.offloaded[base + b] = 1;
    } else {
      const m = Math.min(n, isOffloaded.length);
      this.offloaded.set(m === isOffloaded.length ? isOffloaded : isOffloaded.subarray(0, m), base);
      this.offloaded.fill(0, base + m, base + M);
    }
    let distinct = 0;
    for (let i = 0; i < count; i++) {
      const b = forecast[i];
      if ((fc[w + (b >> 5)] >>> (b & 31)) & 1) continue;
      fc[w + (b >> 5)] |= 1 << (b & 31);
      this.forecastList[base + distinct++] = b;
    }
    this.forecastCount[l] = distinct;
    this.pending[l] = step;
  }

  /**
   * the truth for layer l at `step`: `massOf(b)` is block b's attention mass, or null when it is not
   * known; heavy means mass ≥ theta. Ignored unless layer l's decision at `step` was recorded.
   */
  truth(l: number, step: number, n: number, theta: number, massOf: (b: number) => number | null): void {
    if (this.pending[l] !== step) return;
    this.pending[l] = -2;
    const base = l * this.maxBlocks;
    const off = this.offloadedOf(l);
    const ob = off === this.offloaded ? base : 0;
    const w = l * this.words;
    let hits = 0;
    let forecast = 0;
    let truth = 0;
    for (let b = 0; b < n; b++) {
      const f = this.inForecast(w, b);
      forecast += f;
      if (!off[ob + b]) continue;
      const m = massOf(b);
      if (m === null) {
        this.unobserved++;
        continue;
      }
      if (m >= theta) {
        truth++;
        hits += f;
      }
    }
    this.add(step, hits, forecast, truth);
  }

  /**
   * The same from an observation of layer l at `step`: an attended block's mass is its listed mass
   * (or the uniform share), an unattended block's is unknown. Reads only the listed blocks when every
   * block was attended, the unlisted ones carry less than theta and the listed ones ascend.
   */
  truthOf(l: number, step: number, theta: number, obs: Pick<Observation, 'idx' | 'mass' | 'uniform' | 'attended' | 'attendedCount' | 'nBlocks'>): void {
    if (this.pending[l] !== step) return;
    const { idx, mass, uniform, attended, nBlocks: n } = obs;
    const base = l * this.maxBlocks;
    const off = this.offloadedOf(l);
    const ob = off === this.offloaded ? base : 0;
    const w = l * this.words;
    let hits = 0;
    let forecast = 0;
    let truth = 0;
    if (idx !== null && obs.attendedCount === n && uniform < theta && ascending(idx)) {
      for (let i = 0; i < idx.length; i++) {
        const b = idx[i];
        if (b < n && off[ob + b] && mass[i] >= theta) {
          truth++;
          hits += this.inForecast(w, b);
        }
      }
      for (let i = 0; i < this.forecastCount[l]; i++) if (this.forecastList[base + i] < n) forecast++;
    } else {
      const at = this.listedAt;
      if (idx !== null) for (let i = 0; i < idx.length; i++) at[idx[i]] = i;
      for (let b = 0; b < n; b++) {
        const f = this.inForecast(w, b);
        forecast += f;
        if (!off[ob + b]) continue;
        if (!attended[b]) {
          this.unobserved++;
          continue;
        }
        const m = idx === null ? mass[b] : at[b] >= 0 ? mass[at[b]] : uniform;
        if (m >= theta) {
          truth++;
          hits += f;
        }
      }
      if (idx !== null) for (let i = 0; i < idx.length; i++) at[idx[i]] = -1;
    }
    this.pending[l] = -2;
    this.add(step, hits, forecast, truth);
  }

  /**
   * truthOf for an observation of layer l at `step` that attended every one of its n blocks, whose
   * blocks with mass ≥ theta are exactly heavy[0..count): reads only those
   */
  truthOfHeavy(l: number, step: number, n: number, heavy: ArrayLike<number>, count: number): void {
    if (this.pending[l] !== step) return;
    const off = this.offloadedOf(l);
    const ob = off === this.offloaded ? l * this.maxBlocks : 0;
    const w = l * this.words;
    let hits = 0;
    let truth = 0;
    for (let i = 0; i < count; i++) {
      const b = heavy[i];
      if (b < n && off[ob + b]) {
        truth++;
        hits += this.inForecast(w, b);
      }
    }
    this.settle(l, step, n, hits, truth);
  }

  /**
   * truthOfHeavy where the caller has counted both: `truth` blocks below n, offloaded at the recorded
   * decision, with mass ≥ theta, `hits` of them in its recorded forecast
   */
  truthCounted(l: number, step: number, n: number, truth: number, hits: number): void {
    if (this.pending[l] === step) this.settle(l, step, n, hits, truth);
  }

  /** layer l's pending step settled with its counts, the forecast counted as its recorded blocks below n */
  private settle(l: number, step: number, n: number, hits: number, truth: number): void {
    const base = l * this.maxBlocks;
    let forecast = 0;
    for (let i = 0; i < this.forecastCount[l]; i++) if (this.forecastList[base + i] < n) forecast++;
    this.pending[l] = -2;
    this.add(step, hits, forecast, truth);
  }

  /**
   * truthOfHeavy with the heavy blocks given as the ones of ids[from + j] (j < count) whose
   * vals[from + j] ≥ theta
   */
  truthOfHigh(l: number, step: number, n: number, ids: Int32Array, vals: Float64Array, from: number, count: number, theta: number): void {
    if (this.pending[l] !== step) return;
    const off = this.offloadedOf(l);
    const ob = off === this.offloaded ? l * this.maxBlocks : 0;
    const fc = this.forecast;
    const w = l * this.words;
    let hits = 0;
    let truth = 0;
    // (counted by adding 0 or 1, without a branch on the masses or the mask, which fall either way
    // at random; the masks hold 0 or 1, and a block at or above n is read in its row all the same)
    for (let j = 0; j < count; j++) {
      const b = ids[from + j];
      const t = +(vals[from + j] >= theta) & +(b < n) & off[ob + b];
      truth += t;
      hits += t & (fc[w + (b >> 5)] >>> (b & 31));
    }
    this.settle(l, step, n, hits, truth);
  }

  /** 1 when block b is in the recorded forecast of the layer whose bits start at word w, else 0 */
  private inForecast(w: number, b: number): number {
    return (this.forecast[w + (b >> 5)] >>> (b & 31)) & 1;
  }

  private add(step: number, hits: number, forecast: number, truth: number): void {
    // (an empty list is not read at index −1: that read is out of its bounds)
    const steps = this.steps;
    let s = steps.length !== 0 ? steps[steps.length - 1] : undefined;
    if (s === undefined || s.step !== step) steps.push((s = { step, hits: 0, forecast: 0, truth: 0 }));
    s.hits += hits;
    s.forecast += forecast;
    s.truth += truth;
    this.hits += hits;
    this.forecastBlocks += forecast;
    this.truthBlocks += truth;
  }

  /** run totals and the per-step minimum and median, as `<prefix>precision`, `<prefix>recall_step_min`, ... */
  report(prefix = 'forecast_'): Record<string, number> {
    const out: Record<string, number> = {};
    const steps = this.steps.length;
    out[`${prefix}steps`] = steps;
    out[`${prefix}blocks_per_step`] = steps ? this.forecastBlocks / steps : 0;
    out[`${prefix}heavy_offloaded_per_step`] = steps ? this.truthBlocks / steps : 0;
    out[`${prefix}unobserved_blocks`] = this.unobserved;
    const put = (name: string, total: number, per: number[]) => {
      out[`${prefix}${name}`] = total;
      if (per.length === 0) return;
      out[`${prefix}${name}_step_min`] = per.reduce((a, b) => Math.min(a, b));
      out[`${prefix}${name}_step_median`] = median(per);
    };
    if (this.forecastBlocks > 0) put('precision', this.hits / this.forecastBlocks, this.steps.filter((s) => s.forecast > 0).map((s) => s.hits / s.forecast));
    if (this.truthBlocks > 0 && this.unobserved === 0) put('recall', this.hits / this.truthBlocks, this.steps.filter((s) => s.truth > 0).map((s) => s.hits / s.truth));
    return out;
  }
}

/** median of a non-empty list (the mean of the two middle values for an even count) */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** true when the blocks strictly ascend (so none repeats) */
function ascending(idx: ArrayLike<number>): boolean {
  for (let i = 1; i < idx.length; i++) if (idx[i] <= idx[i - 1]) return false;
  return true;
}

/**
 * An empty array whose elements are objects from the start: a new `[]` holds small integers until
 * its first object arrives, so code compiled while an earlier audit's list held objects would be
 * thrown away at a new audit's first step.
 */
function objectList<T>(): T[] {
  const a: (T | null)[] = [null];
  a.pop();
  return a as T[];
}
