/**
 * SynapseVM's forecast of the blocks a layer will need at this step, from the attention the system
 * has already seen. Observations arrive layer by layer within a step, so when layer l decides,
 * layer l−1 of this step has run (layer 0 reads layer L−1 of the previous step). Two predictors:
 * - cross: the mass block b received in the previous layer at this step (adjacent layers attend
 *   much the same positions);
 * - self: the same layer's recent steps, an exponential average of the mass observed on b
 *   (r ← (1 − w)·r + w·m at every step b is attended; w = history weight, 1 = the latest step only;
 *   0 before any observation).
 * The forecast score is f(b) = α·cross(b) + (1 − α)·self(b), with α = s_c / (s_c + s_s) learned
 * online from how well each predictor matched: after each observation of layer l, over the judged
 * blocks (the ones the forecast was made for: below L1 at the layer's decision) that were attended,
 * each predictor's heavy set P (blocks it scores ≥ θ) is compared with the observed heavy set H
 * (mass ≥ θ) by their overlap |P ∩ H| / |P ∪ H|, which feeds an exponential average
 * s ← (1 − ρ)·s + ρ·overlap (ρ = similarity rate; no update when P ∪ H is empty, none for cross
 * when the previous layer had no observation). s_c starts at 0 and s_s at 1, so the cross predictor
 * earns its weight. α is 0.5 when both averages are 0, and 0 when the previous layer has no
 * observation at the expected step (or with one layer). θ = heavy_ratio / nBlocks: heavy means
 * heavy_ratio times the layer's mean share of the attention.
 *
 * Blocks a layer did not attend (skipped) carry no observation: their self score keeps its value and
 * their cross contribution is 0. With several KV groups the observation's group mean is used.
 */
import type { Observation } from './policy.js';

export interface ForecastParams {
  /** weight w of the newest observation in the same-layer average */
  historyWeight: number;
  /** heavy: mass ≥ heavyRatio / nBlocks */
  heavyRatio: number;
  /** rate ρ of the similarity averages */
  simRate: number;
}

export class SynapseForecast {
  /** self predictor: per (layer, block) exponential average of observed mass */
  readonly recent: Float64Array;
  /** per (layer, block) mass observed at the layer's latest observation (0 where not attended) */
  private readonly cur: Float64Array;
  /** per layer: step of its latest observation (−2: none) */
  private readonly curStep: Int32Array;
  /**
   * per layer, of its latest observation in sparse form: the listed blocks (rows of maxBlocks), their
   * count (−1: dense form, every block listed) and the mass of the unlisted attended blocks
   */
  private readonly curListed: Int32Array;
  private readonly curListedCount: Int32Array;
  private readonly curUniform: Float64Array;
  /** per layer: learned overlap of the cross and the self predictor with the observed heavy set */
  readonly simCross: Float64Array;
  readonly simSelf: Float64Array;
  /** per (layer, block): step the block was last attended (−2: never) */
  readonly seenStep: Int32Array;

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
    readonly p: ForecastParams,
  ) {
    const n = layers * maxBlocks;
    this.recent = new Float64Array(n);
    this.cur = new Float64Array(n);
    this.curStep = new Int32Array(layers).fill(-2);
    this.curListed = new Int32Array(n);
    this.curListedCount = new Int32Array(layers);
    this.curUniform = new Float64Array(layers);
    this.simCross = new Float64Array(layers);
    this.simSelf = new Float64Array(layers).fill(1);
    this.seenStep = new Int32Array(n).fill(-2);
  }

  /** heavy threshold θ of a layer with n blocks */
  threshold(nBlocks: number): number {
    return this.p.heavyRatio / nBlocks;
  }

  /** the layer whose observation layer l's forecast reads (at the same step; layer 0 reads layer L−1 of the step before) */
  private prevLayer(l: number): number {
    return l > 0 ? l - 1 : this.layers - 1;
  }

  /** true when the layer layer l's forecast reads at `step` has its observation for it (never with one layer) */
  private crossKnown(l: number, step: number): boolean {
    const prev = this.prevLayer(l);
    return prev !== l && this.curStep[prev] === (l > 0 ? step : step - 1);
  }

  /** weight α of the cross predictor for layer l at `step` (0 when the previous layer has no observation then) */
  alpha(l: number, step: number): number {
    if (!this.crossKnown(l, step)) return 0;
    const c = this.simCross[l];
    const s = this.simSelf[l];
    return c + s > 0 ? c / (c + s) : 0.5;
  }

  /** forecast score f(b) of block b of layer l at `step`, with α = alpha(l, step) */
  score(l: number, b: number, step: number, alpha = this.alpha(l, step)): number {
    const self = this.recent[l * this.maxBlocks + b];
    if (alpha === 0) return self;
    return alpha * this.cur[this.prevLayer(l) * this.maxBlocks + b] + (1 - alpha) * self;
  }

  /**
   * The blocks b < n of layer l with mask[b] = 1 whose score f(b) (with α = alpha) is ≥ theta, in
   * ascending order, into ids[0..], each with −f(b) into keys[b]; their count.
   */
  candidates(l: number, n: number, alpha: number, theta: number, mask: Uint8Array, ids: Int32Array, keys: Float64Array): number {
    const M = this.maxBlocks;
    const recent = this.recent;
    const base = l * M;
    let count = 0;
    if (alpha === 0) {
      for (let b = 0; b < n; b++) {
        if (mask[b] === 0) continue;
        const f = recent[base + b];
        if (f >= theta) {
          keys[b] = -f;
          ids[count++] = b;
        }
      }
      return count;
    }
    const cur = this.cur;
    const pbase = this.prevLayer(l) * M;
    const beta = 1 - alpha;
    for (let b = 0; b < n; b++) {
      if (mask[b] === 0) continue;
      const f = alpha * cur[pbase + b] + beta * recent[base + b];
      if (f >= theta) {
        keys[b] = -f;
        ids[count++] = b;
      }
    }
    return count;
  }

  /** mass block b of layer l received at the layer's latest observation (0 where not attended) */
  lastMass(l: number, b: number): number {
    return this.cur[l * this.maxBlocks + b];
  }

  /**
   * The blocks b < n of layer l whose mass at the layer's latest observation is ≥ theta, into
   * ids[0..] (in no set order); their count. Only the listed blocks are read when the unlisted ones
   * carry less than theta.
   */
  lastAtLeast(l: number, n: number, theta: number, ids: Int32Array): number {
    const base = l * this.maxBlocks;
    const cur = this.cur;
    const listed = this.curListedCount[l];
    // listed blocks in ascending order (a repeated one falls back to reading every block)
    if (listed < 0 || !(theta > this.curUniform[l]) || !(theta > 0)) return this.lastAtLeastDense(l, n, theta, ids);
    let count = 0;
    let last = -1;
    for (let i = 0; i < listed; i++) {
      const b = this.curListed[base + i];
      if (b <= last) return this.lastAtLeastDense(l, n, theta, ids);
      last = b;
      if (b < n && cur[base + b] >= theta) ids[count++] = b;
    }
    return count;
  }

  private lastAtLeastDense(l: number, n: number, theta: number, ids: Int32Array): number {
    const base = l * this.maxBlocks;
    let count = 0;
    for (let b = 0; b < n; b++) if (this.cur[base + b] >= theta) ids[count++] = b;
    return count;
  }

  /** step of layer l's latest observation (−2: none) */
  lastStep(l: number): number {
    return this.curStep[l];
  }

  /** take layer obs.layer's observation; `judged` (1 = judged block) enables learning the mix */
  observe(obs: Observation, judged?: Uint8Array): void {
    const l = obs.layer;
    const M = this.maxBlocks;
    const base = l * M;
    const n = obs.nBlocks;
    const att = obs.attended;
    const cur = this.cur;
    const recent = this.recent;
    // this observation's masses (0 where not attended) into the layer's row, and its listed blocks
    const { idx, mass } = obs;
    if (idx === null) {
      for (let b = 0; b < n; b++) cur[base + b] = att[b] ? mass[b] : 0;
      this.curListedCount[l] = -1;
    } else {
      const u = obs.uniform;
      for (let b = 0; b < n; b++) cur[base + b] = att[b] ? u : 0;
      for (let i = 0; i < idx.length; i++) {
        const b = idx[i];
        cur[base + b] = att[b] ? mass[i] : 0;
        this.curListed[base + i] = b;
      }
      this.curListedCount[l] = idx.length;
      this.curUniform[l] = u;
    }
    const theta = this.threshold(n);
    // learn the mix: each predictor's overlap with the observed heavy set, over the judged blocks
    const crossKnown = this.crossKnown(l, obs.step);
    const pbase = this.prevLayer(l) * M;
    if (judged) {
      let interC = 0;
      let unionC = 0;
      let interS = 0;
      let unionS = 0;
      for (let b = 0; b < n; b++) {
        if (!att[b] || !judged[b]) continue;
        const h = cur[base + b] >= theta;
        const c = crossKnown && cur[pbase + b] >= theta;
        const sf = recent[base + b] >= theta;
        if (h && c) interC++;
        if (h || c) unionC++;
        if (h && sf) interS++;
        if (h || sf) unionS++;
      }
      const rho = this.p.simRate;
      if (crossKnown && unionC > 0) this.simCross[l] = (1 - rho) * this.simCross[l] + (rho * interC) / unionC;
      if (unionS > 0) this.simSelf[l] = (1 - rho) * this.simSelf[l] + (rho * interS) / unionS;
    }
    const w = this.p.historyWeight;
    const seen = this.seenStep;
    const step = obs.step;
    for (let b = 0; b < n; b++) {
      if (att[b]) {
        recent[base + b] = (1 - w) * recent[base + b] + w * cur[base + b];
        seen[base + b] = step;
      }
    }
    this.curStep[l] = step;
  }
}
