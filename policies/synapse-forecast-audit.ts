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

export interface StepCounts {
  step: number;
  hits: number;
  forecast: number;
  truth: number;
}

export class ForecastAudit {
  private readonly forecast: Uint8Array;
  private readonly offloaded: Uint8Array;
  /** per layer: step of the decision waiting for its truth (−2: none) */
  private readonly pending: Int32Array;
  readonly steps: StepCounts[] = [];
  hits = 0;
  forecastBlocks = 0;
  truthBlocks = 0;
  unobserved = 0;

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
  ) {
    this.forecast = new Uint8Array(layers * maxBlocks);
    this.offloaded = new Uint8Array(layers * maxBlocks);
    this.pending = new Int32Array(layers).fill(-2);
  }

  /** record layer l's decision at `step`: `isOffloaded(b)` for its n blocks, and the forecast set */
  begin(l: number, step: number, n: number, isOffloaded: (b: number) => boolean, forecast: ArrayLike<number>, count = forecast.length): void {
    const base = l * this.maxBlocks;
    this.forecast.fill(0, base, base + this.maxBlocks);
    this.offloaded.fill(0, base, base + this.maxBlocks);
    for (let b = 0; b < n; b++) if (isOffloaded(b)) this.offloaded[base + b] = 1;
    for (let i = 0; i < count; i++) this.forecast[base + forecast[i]] = 1;
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
    let hits = 0;
    let forecast = 0;
    let truth = 0;
    for (let b = 0; b < n; b++) {
      const f = this.forecast[base + b];
      forecast += f;
      if (!this.offloaded[base + b]) continue;
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
    let s = this.steps[this.steps.length - 1];
    if (!s || s.step !== step) this.steps.push((s = { step, hits: 0, forecast: 0, truth: 0 }));
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
