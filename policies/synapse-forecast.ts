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
import { lowerBound } from '../common/lower-bound.js';
import type { Observation } from './policy.js';
import { LISTED_ASCENDING, LISTED_BELOW, LISTED_FINITE } from './synapse-score.js';

export interface ForecastParams {
  /** weight w of the newest observation in the same-layer average */
  historyWeight: number;
  /** heavy: mass ≥ heavyRatio / nBlocks */
  heavyRatio: number;
  /** rate ρ of the similarity averages */
  simRate: number;
}

export class SynapseForecast {
  /**
   * per (layer, block): the self predictor (exponential average of observed mass), the mass at the
   * layer's latest observation (0 where not attended) and the step the block was last attended (−2:
   * never). A layer whose latest observation attended every block with history weight 1 may hold its
   * first nBlocks entries in listed form instead (see `listed`): read them through selfScore(),
   * lastMass() and seen().
   */
  private readonly recent: Float64Array;
  private readonly cur: Float64Array;
  private readonly seenStep: Int32Array;
  /**
   * per layer: 1 when its blocks below formN are in listed form: self score and mass are both the
   * latest observation's (its listed mass, or the uniform share formU) and the block was seen at
   * formStep. The listed masses are formMass[i] of the listed blocks curListed[i], i < formK (those
   * below formN), ascending: a block's listed mass is found by a search there, or by walking the
   * list alongside other ascending blocks
   */
  private readonly listed: Uint8Array;
  private readonly formN: Int32Array;
  private readonly formK: Int32Array;
  private readonly formU: Float64Array;
  private readonly formStep: Int32Array;
  private readonly formMass: Float64Array;
  /**
   * per (layer, block): the place in the layer's form list (curListed) where the block was last
   * written; the block is listed in the form where that place is below formK and holds it (the
   * places of earlier forms are never cleared: that test tells them apart). With formMass[L·M + l]
   * = formU[l], a block's value in layer l's form is formMass at one place found without a branch:
   * see formAt()
   */
  private readonly formPos: Int16Array | Int32Array;
  /** per layer: step of its latest observation (−2: none) */
  private readonly curStep: Int32Array;
  /**
   * per layer, of its latest observation in sparse form: the listed blocks (rows of maxBlocks), their
   * count (−1: dense form, or listed blocks that do not ascend) and the mass of the unlisted attended blocks
   */
  private readonly curListed: Int32Array;
  private readonly curListedCount: Int32Array;
  private readonly curUniform: Float64Array;
  /**
   * per layer: the blocks whose self score is ≥ highFrom (rows of maxBlocks, ascending) and their
   * count (−1: not kept), as of the layer's latest observation, which sets highFrom below the heavy
   * threshold of one more block (what the layer's next decision may see), so that the forecast need
   * read only these blocks and the previous layer's listed ones
   */
  private readonly high: Int32Array;
  /** the self score of each kept high block as of the layer's latest observation (in listed form: its mass) */
  private readonly highVal: Float64Array;
  private readonly highCount: Int32Array;
  private readonly highFrom: Float64Array;
  /**
   * per layer: of its latest observation, the count of the judged blocks (observe's `judged`) with
   * mass ≥ the heavy threshold (the observed heavy set the mix learns from), where that observation
   * counted them (−1 otherwise)
   */
  private readonly heavyJudged: Int32Array;
  /** per layer: 1 once an observation carried a mass that is not finite (the listed form then never applies) */
  private readonly nonFinite: Uint8Array;
  /**
   * scratch marks of the observation being taken: a block is marked when it holds the observation's
   * stamp (markStamp; no clearing). mark: its listed blocks, or the previous layer's judged heavy
   * blocks; markSelf: the layer's own judged heavy blocks
   */
  private readonly mark: Int32Array;
  private readonly markSelf: Int32Array;
  private markStamp = 0;
  /** candidates' scratch: the places of the blocks it reads */
  private readonly sel: Int32Array;
  /** per layer: learned overlap of the cross and the self predictor with the observed heavy set */
  readonly simCross: Float64Array;
  readonly simSelf: Float64Array;

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
    readonly p: ForecastParams,
  ) {
    const n = layers * maxBlocks;
    this.recent = new Float64Array(n);
    this.cur = new Float64Array(n);
    this.seenStep = new Int32Array(n).fill(-2);
    this.listed = new Uint8Array(layers);
    this.formN = new Int32Array(layers);
    this.formK = new Int32Array(layers);
    this.formU = new Float64Array(layers);
    this.formStep = new Int32Array(layers);
    this.formMass = new Float64Array(n + layers);
    // (16-bit places where every place fits: rows half as long, whose scattered stores and reads
    // touch half the cache lines)
    this.formPos = maxBlocks <= 0x7fff ? new Int16Array(n) : new Int32Array(n);
    this.curStep = new Int32Array(layers).fill(-2);
    this.curListed = new Int32Array(n);
    this.curListedCount = new Int32Array(layers);
    this.curUniform = new Float64Array(layers);
    this.high = new Int32Array(n);
    this.highVal = new Float64Array(n);
    this.highCount = new Int32Array(layers).fill(-1);
    this.highFrom = new Float64Array(layers);
    this.heavyJudged = new Int32Array(layers).fill(-1);
    this.nonFinite = new Uint8Array(layers);
    this.mark = new Int32Array(maxBlocks);
    this.markSelf = new Int32Array(maxBlocks);
    this.sel = new Int32Array(maxBlocks + 1);
    this.simCross = new Float64Array(layers);
    this.simSelf = new Float64Array(layers).fill(1);
  }

  /** heavy threshold θ of a layer with n blocks */
  threshold(nBlocks: number): number {
    return this.p.heavyRatio / nBlocks;
  }

  /** the layer whose observation layer l's forecast reads (at the same step; layer 0 reads layer L−1 of the step before) */
  private prevLayer(l: number): number {
    // (l − 1, plus the layer count where that is −1: without a branch, so that the count is read at
    // every call; a read made for layer 0 only has no type feedback in code compiled during a replay's
    // first steps, where the callers that read layer 0's observation this way run)
    const p = l - 1;
    return p + (this.layers & (p >> 31));
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

  /** self score of block b of layer l */
  selfScore(l: number, b: number): number {
    return this.listed[l] && b < this.formN[l] ? this.formValue(l, b) : this.recent[l * this.maxBlocks + b];
  }

  /** mass block b of layer l received at the layer's latest observation (0 where not attended) */
  lastMass(l: number, b: number): number {
    return this.listed[l] && b < this.formN[l] ? this.formValue(l, b) : this.cur[l * this.maxBlocks + b];
  }

  /** block b's value in layer l's listed form (b < formN): its listed mass, else the uniform share */
  private formValue(l: number, b: number): number {
    const base = l * this.maxBlocks;
    const i = lowerBound(this.curListed, base, this.formK[l], b);
    return i < this.formK[l] && this.curListed[base + i] === b ? this.formMass[base + i] : this.formU[l];
  }

  /** step block b of layer l was last attended (−2: never) */
  seen(l: number, b: number): number {
    return this.listed[l] && b < this.formN[l] ? this.formStep[l] : this.seenStep[l * this.maxBlocks + b];
  }

  /** forecast score f(b) of block b of layer l at `step`, with α = alpha(l, step) */
  score(l: number, b: number, step: number, alpha = this.alpha(l, step)): number {
    const self = this.selfScore(l, b);
    if (alpha === 0) return self;
    return alpha * this.lastMass(this.prevLayer(l), b) + (1 - alpha) * self;
  }

  /**
   * The blocks b < n of layer l with mask[b] = 1 whose score f(b) (with α = alpha) is ≥ theta, into
   * ids[0..] (in no set order), each with −f(b) at the same place of keys; their count. (ids and keys
   * past the count may be written too.) Reads only the blocks
   * that can score that high (own self score or the previous layer's mass near theta) where those
   * are kept, else every block.
   */
  candidates(l: number, n: number, alpha: number, theta: number, mask: Uint8Array, ids: Int32Array, keys: Float64Array): number {
    const M = this.maxBlocks;
    const base = l * M;
    // below this, neither part can bring f to theta (rounding of α·c + (1 − α)·s is far smaller)
    const near = theta * (1 - 1e-9);
    const prev = this.prevLayer(l);
    const pListed = this.curListedCount[prev];
    const sparse =
      theta > 0 && this.highCount[l] >= 0 && this.highFrom[l] <= near && (alpha === 0 || (pListed >= 0 && this.curUniform[prev] < near));
    if (!sparse) return this.candidatesDense(l, n, alpha, theta, mask, ids, keys);
    const pbase = prev * M;
    const beta = 1 - alpha;
    // (selfScore of layer l and lastMass of the previous layer written out, with the arrays held; a
    // block's value in a form is read at the place formAt finds, or (the last loop) found by walking
    // the form's list, ascending, alongside the ascending blocks read)
    const list = this.curListed;
    const fm = this.formMass;
    const pos = this.formPos;
    const lU1 = this.layers * M + l;
    const pU1 = this.layers * M + prev;
    const lForm = this.listed[l] === 1;
    const lN = this.formN[l];
    const lK = this.formK[l];
    const lU = this.formU[l];
    const recent = this.recent;
    const pForm = this.listed[prev] === 1;
    const pN = this.formN[prev];
    const pK = this.formK[prev];
    const pU = this.formU[prev];
    const cur = this.cur;
    const high = this.high;
    const hv = this.highVal;
    let count = 0;
    const hn = this.highCount[l];
    // (first the places of the blocks below n with mask 1, in order: each place is written at the next
    // place of sel, which moves on by 1 for such a block, by 0 elsewhere; then each of those blocks is
    // written at the next place of ids, with −f at the same place of keys, and the count moves on by 1
    // where it is a candidate: no branch on the mask or the score, which fall either way at random)
    const sel = this.sel;
    let ns = 0;
    for (let i = 0; i < hn; i++) {
      const b = high[base + i];
      sel[ns] = i;
      ns += +(b < n) & mask[b];
    }
    for (let q = 0; q < ns; q++) {
      const i = sel[q];
      const b = high[base + i];
      // a kept high block's self score is kept with it (observe sets both; nothing changes it before this decision)
      const self = hv[base + i];
      let f = self;
      if (alpha !== 0) {
        let pm: number;
        if (pForm && b < pN) pm = fm[formAt(pos, list, pbase, pK, pU1, b)];
        else pm = cur[pbase + b];
        f = alpha * pm + beta * self;
      }
      ids[count] = b;
      keys[count] = -f;
      count += +(f >= theta);
    }
    if (alpha === 0) return count;
    const highFrom = this.highFrom[l];
    if (pForm && this.highCount[prev] >= 0 && this.highFrom[prev] <= near) {
      // the previous layer's blocks not read above: with a self score below highFrom (<= near), f
      // reaches theta only where the previous layer's mass is near theta, so only its kept high
      // blocks (in listed form their masses; ascending) can
      // (as above: no branch on the mask, the self score or f.) A block counts only with a self score
      // below highFrom, so its f is at most α·c + β·highFrom as computed (rounding keeps the order of
      // products by β ≥ 0 and of sums): a block with that below theta is not read further
      const bHigh = beta * highFrom;
      ns = 0;
      for (let j = 0, hp = this.highCount[prev]; j < hp; j++) {
        const b = high[pbase + j];
        sel[ns] = j;
        ns += +(b < n) & mask[b] & +(alpha * hv[pbase + j] + bHigh >= theta);
      }
      for (let q = 0; q < ns; q++) {
        const j = sel[q];
        const b = high[pbase + j];
        const self = lForm && b < lN ? fm[formAt(pos, list, base, lK, lU1, b)] : recent[base + b];
        const f = alpha * hv[pbase + j] + beta * self;
        ids[count] = b;
        keys[count] = -f;
        count += +!(self >= highFrom) & +(f >= theta);
      }
      return count;
    }
    // the previous layer's listed blocks not read above (distinct: they ascend)
    let ql = 0;
    for (let i = 0; i < pListed; i++) {
      const b = list[pbase + i];
      if (b >= n || mask[b] === 0) continue;
      let self: number;
      if (lForm && b < lN) {
        while (ql < lK && list[base + ql] < b) ql++;
        self = ql < lK && list[base + ql] === b ? fm[base + ql] : lU;
      } else self = recent[base + b];
      if (self >= highFrom) continue;
      const f = alpha * (pForm && i < pK ? fm[pbase + i] : cur[pbase + b]) + beta * self;
      if (f >= theta) {
        keys[count] = -f;
        ids[count++] = b;
      }
    }
    return count;
  }

  private candidatesDense(l: number, n: number, alpha: number, theta: number, mask: Uint8Array, ids: Int32Array, keys: Float64Array): number {
    const M = this.maxBlocks;
    const prev = this.prevLayer(l);
    this.toRows(l);
    this.toRows(prev);
    const recent = this.recent;
    const base = l * M;
    let count = 0;
    if (alpha === 0) {
      for (let b = 0; b < n; b++) {
        if (mask[b] === 0) continue;
        const f = recent[base + b];
        if (f >= theta) {
          keys[count] = -f;
          ids[count++] = b;
        }
      }
      return count;
    }
    const cur = this.cur;
    const pbase = prev * M;
    const beta = 1 - alpha;
    for (let b = 0; b < n; b++) {
      if (mask[b] === 0) continue;
      const f = alpha * cur[pbase + b] + beta * recent[base + b];
      if (f >= theta) {
        keys[count] = -f;
        ids[count++] = b;
      }
    }
    return count;
  }

  /**
   * The blocks b < n of layer l whose mass at the layer's latest observation is ≥ theta, into
   * ids[0..] (in no set order); their count. Only the listed blocks are read when the unlisted ones
   * carry less than theta.
   */
  lastAtLeast(l: number, n: number, theta: number, ids: Int32Array): number {
    const base = l * this.maxBlocks;
    const listed = this.curListedCount[l];
    if (listed < 0 || !(theta > this.curUniform[l]) || !(theta > 0)) return this.lastAtLeastDense(l, n, theta, ids);
    let count = 0;
    if (this.listed[l] === 1 && this.highCount[l] >= 0 && this.highFrom[l] <= theta) {
      // in listed form the blocks reaching theta are among the kept high ones (their masses kept)
      const high = this.high;
      const hv = this.highVal;
      for (let j = 0, hn = this.highCount[l]; j < hn; j++) {
        const b = high[base + j];
        if (b < n && hv[base + j] >= theta) ids[count++] = b;
      }
      return count;
    }
    const list = this.curListed;
    const fm = this.formMass;
    const cur = this.cur;
    // a listed block's last mass: the form's mass where the form lists it (its first formK entries), else its dense mass
    const formK = this.listed[l] === 1 ? this.formK[l] : 0;
    for (let i = 0; i < listed; i++) {
      const b = list[base + i];
      if (b < n && (i < formK ? fm[base + i] : cur[base + b]) >= theta) ids[count++] = b;
    }
    return count;
  }

  private lastAtLeastDense(l: number, n: number, theta: number, ids: Int32Array): number {
    this.toRows(l);
    const base = l * this.maxBlocks;
    let count = 0;
    for (let b = 0; b < n; b++) if (this.cur[base + b] >= theta) ids[count++] = b;
    return count;
  }

  /**
   * The blocks of layer l's latest observation with mass ≥ theta, into ids (ascending), when that
   * observation was taken in listed form (every block attended) and they are all among the kept high
   * blocks (theta ≥ highFrom); their count, or −1 (the caller reads the observation then)
   */
  heavyOfLatest(l: number, theta: number, ids: Int32Array): number {
    if (this.listed[l] !== 1 || this.highCount[l] < 0 || !(this.highFrom[l] <= theta)) return -1;
    const base = l * this.maxBlocks;
    const high = this.high;
    const hv = this.highVal;
    let count = 0;
    for (let j = 0, hn = this.highCount[l]; j < hn; j++) if (hv[base + j] >= theta) ids[count++] = high[base + j];
    return count;
  }

  /**
   * The count of layer l's kept high blocks (their ids at highIds[l * maxBlocks ..], ascending, their
   * masses at highMasses[..]) when its latest observation was taken in listed form and every block
   * with mass ≥ theta is among them (theta ≥ highFrom), else −1 (as heavyOfLatest)
   */
  latestHigh(l: number, theta: number): number {
    if (this.listed[l] !== 1 || this.highCount[l] < 0 || !(this.highFrom[l] <= theta)) return -1;
    return this.highCount[l];
  }

  /**
   * Of layer l's latest observation, the count of the blocks of its `judged` mask with mass ≥ the
   * heavy threshold, when it counted them (taken in listed form from the kept high blocks, with a
   * judged mask), else −1
   */
  judgedHeavyOf(l: number): number {
    return this.heavyJudged[l];
  }

  /**
   * How many of the blocks ids[0..count) have mass ≥ theta at layer l's latest observation (each as
   * lastMass reads it; in listed form at the place formAt finds, without a search)
   */
  countAtLeast(l: number, ids: ArrayLike<number>, count: number, theta: number): number {
    const base = l * this.maxBlocks;
    const form = this.listed[l] === 1;
    const n = this.formN[l];
    const k = this.formK[l];
    const uPlace = this.layers * this.maxBlocks + l;
    const fm = this.formMass;
    const cur = this.cur;
    let c = 0;
    for (let i = 0; i < count; i++) {
      const b = ids[i];
      const m = form && b < n ? fm[formAt(this.formPos, this.curListed, base, k, uPlace, b)] : cur[base + b];
      c += +(m >= theta);
    }
    return c;
  }

  /** the kept high blocks (rows of maxBlocks; see latestHigh) */
  get highIds(): Int32Array {
    return this.high;
  }

  /** their self scores (in listed form: their masses at the latest observation) */
  get highMasses(): Float64Array {
    return this.highVal;
  }

  /** step of layer l's latest observation (−2: none) */
  lastStep(l: number): number {
    return this.curStep[l];
  }

  /** write layer l's listed form out to its rows (no-op in row form) */
  private toRows(l: number): void {
    if (!this.listed[l]) return;
    const base = l * this.maxBlocks;
    const n = this.formN[l];
    const u = this.formU[l];
    this.cur.fill(u, base, base + n);
    this.recent.fill(u, base, base + n);
    this.seenStep.fill(this.formStep[l], base, base + n);
    this.dropForm(l);
  }

  /** leave layer l's listed form, its listed masses written into the rows */
  private dropForm(l: number): void {
    const base = l * this.maxBlocks;
    for (let i = 0; i < this.formK[l]; i++) {
      const b = this.curListed[base + i];
      const m = this.formMass[base + i];
      this.cur[base + b] = m;
      this.recent[base + b] = m;
    }
    this.listed[l] = 0;
  }

  /**
   * take layer obs.layer's observation; `judged` (1 = judged block) enables learning the mix.
   * `listed`: 0, or LISTED_* bits (synapse-score.ts) found for its listed blocks, with
   * LISTED_ASCENDING and LISTED_BELOW both set (the checks they stand for are then not made again)
   */
  observe(obs: Observation, judged?: Uint8Array, listed = 0): void {
    const l = obs.layer;
    const known = (listed & (LISTED_ASCENDING | LISTED_BELOW)) === (LISTED_ASCENDING | LISTED_BELOW);
    const walk = obs.idx !== null && (known || ascending(obs.idx));
    // (observeListed counts them where it learns from the kept high blocks)
    this.heavyJudged[l] = -1;
    if (!(walk && this.observeListed(obs, judged, known ? listed : 0))) {
      this.toRows(l);
      this.toRows(this.prevLayer(l));
      this.keepListed(obs, walk);
      this.observeEvery(obs, judged, walk);
    }
    this.curStep[l] = obs.step;
  }

  /** record the observation's listed blocks and uniform share (its sparse form) */
  private keepListed(obs: Observation, walk: boolean): void {
    const l = obs.layer;
    const base = l * this.maxBlocks;
    const idx = obs.idx;
    if (idx === null) {
      this.curListedCount[l] = -1;
      return;
    }
    for (let i = 0; i < idx.length; i++) this.curListed[base + i] = idx[i];
    this.curListedCount[l] = walk ? idx.length : -1;
    this.curUniform[l] = obs.uniform;
  }

  /**
   * observe() in listed form, where that gives the same result: every block attended, the newest
   * step's weight 1 (the self score becomes the mass), the unlisted share and the previous layer's
   * below the heavy threshold, and the layer's kept high blocks (its self scores that may reach it);
   * false (nothing changed) otherwise
   */
  private observeListed(obs: Observation, judged: Uint8Array | undefined, listedBits: number): boolean {
    const l = obs.layer;
    const M = this.maxBlocks;
    const base = l * M;
    const n = obs.nBlocks;
    const idx = obs.idx!;
    const mass = obs.mass;
    const u = obs.uniform;
    const theta = this.threshold(n);
    if (this.p.historyWeight !== 1 || obs.attendedCount !== n || this.nonFinite[l] || !(theta > 0) || !(u < theta) || !Number.isFinite(u)) return false;
    // the listed blocks below n (they ascend)
    let k = idx.length;
    if (listedBits !== 0) {
      // (every listed block is below n; whether their masses are finite was found with them)
      if ((listedBits & LISTED_FINITE) === 0) {
        this.nonFinite[l] = 1;
        return false;
      }
    } else {
      if (k > 0 && !(idx[k - 1] < n)) {
        k = 0;
        while (k < idx.length && idx[k] < n) k++;
      }
      for (let i = 0; i < k; i++) {
        if (!Number.isFinite(mass[i])) {
          this.nonFinite[l] = 1;
          return false;
        }
      }
    }
    const prev = this.prevLayer(l);
    const pbase = prev * M;
    const crossKnown = this.crossKnown(l, obs.step);
    /** the overlaps counted with the form's pass below: the stamp of the marks, and the marked blocks */
    let stamp = 0;
    let nCross = 0;
    let nSelf = 0;
    if (judged !== undefined) {
      if (crossKnown && !(this.curListedCount[prev] >= 0 && this.curUniform[prev] < theta)) return false;
      if (!(this.highCount[l] >= 0 && this.highFrom[l] <= theta)) return false;
    }
    const bounded = judged !== undefined && (!crossKnown || (this.listed[prev] === 1 && this.highCount[prev] >= 0 && this.highFrom[prev] <= theta));
    if (bounded) {
      // each predictor's judged blocks reaching theta are among its kept high blocks (the previous
      // layer in listed form: its self score is its mass); they are marked here, and the form's pass
      // counts the observed heavy blocks among them: |P ∪ H| = |P| + |H| − |P ∩ H|. (Without a branch:
      // every block read gets the stamp times 0 or 1, and a mark of 0 is no stamp; judged is 0 or 1.)
      stamp = ++this.markStamp;
      const high = this.high;
      const highVal = this.highVal;
      if (crossKnown) {
        const mark = this.mark;
        for (let j = 0, hn = this.highCount[prev]; j < hn; j++) {
          const b = high[pbase + j];
          if (b >= n) break;
          const c = judged[b] & +(highVal[pbase + j] >= theta);
          mark[b] = c * stamp;
          nCross += c;
        }
      }
      const markSelf = this.markSelf;
      for (let j = 0, hn = this.highCount[l]; j < hn; j++) {
        const b = high[base + j];
        if (b >= n) break;
        const c = judged[b] & +(highVal[base + j] >= theta);
        markSelf[b] = c * stamp;
        nSelf += c;
      }
    }
    // (called at every observation, so that its call has type feedback; it learns only where the above did not)
    this.learnListed(bounded, l, n, k, idx, mass, theta, judged, crossKnown);
    // the new state in listed form: every block's mass and self score ((1 − 1)·r + 1·m = m for a
    // finite r) is its listed mass or u, and every block was seen now
    const highFrom = this.threshold(n + 1) * (1 - 1e-9);
    const list = this.curListed;
    const formMass = this.formMass;
    const formPos = this.formPos;
    const high = this.high;
    const highVal = this.highVal;
    let nHigh = 0;
    let heavy = 0;
    let interC = 0;
    let interS = 0;
    const mark = this.mark;
    const markSelf = this.markSelf;
    // (every block is written at the next high place, which moves on by 0 or 1: no branch on the
    // masses, which fall either side of highFrom at random)
    for (let i = 0; i < k; i++) {
      const b = idx[i];
      const m = mass[i];
      list[base + i] = b;
      formMass[base + i] = m;
      formPos[base + b] = i;
      high[base + nHigh] = b;
      highVal[base + nHigh] = m;
      nHigh += +(m >= highFrom);
    }
    if (stamp !== 0) {
      // the observed heavy judged blocks are among the high ones (theta > highFrom); counted by adding 0 or 1
      for (let j = 0; j < nHigh; j++) {
        const b = high[base + j];
        const h = +(highVal[base + j] >= theta) & judged![b];
        heavy += h;
        interC += h & +(mark[b] === stamp);
        interS += h & +(markSelf[b] === stamp);
      }
      const rho = this.p.simRate;
      const unionC = heavy + nCross - interC;
      const unionS = heavy + nSelf - interS;
      if (crossKnown && unionC > 0) this.simCross[l] = (1 - rho) * this.simCross[l] + (rho * interC) / unionC;
      if (unionS > 0) this.simSelf[l] = (1 - rho) * this.simSelf[l] + (rho * interS) / unionS;
      this.heavyJudged[l] = heavy;
    }
    for (let i = k; i < idx.length; i++) list[base + i] = idx[i];
    this.curListedCount[l] = idx.length;
    this.curUniform[l] = u;
    this.listed[l] = 1;
    this.formN[l] = n;
    this.formK[l] = k;
    this.formU[l] = u;
    formMass[this.layers * M + l] = u;
    this.formStep[l] = obs.step;
    // (the unlisted blocks are high too when u reaches highFrom: not kept then)
    this.highCount[l] = u >= highFrom ? -1 : nHigh;
    this.highFrom[l] = highFrom;
    return true;
  }

  /**
   * observeListed's learning of the mix where the kept high blocks do not bound the predictors' heavy
   * sets: the judged listed blocks of layer l (idx[0..k), masses `mass`) as observeEvery counts them;
   * nothing where they do (`bounded`) or without `judged`. (Its own method, called at every such
   * observation: its work runs in a replay's first steps only, so code compiled for observeListed during
   * one replay would have no type feedback for it and be thrown away there in the next replay.)
   */
  private learnListed(bounded: boolean, l: number, n: number, k: number, idx: ArrayLike<number>, mass: ArrayLike<number>, theta: number, judged: Uint8Array | undefined, crossKnown: boolean): void {
    if (bounded || judged === undefined) return;
    const M = this.maxBlocks;
    const base = l * M;
    const prev = this.prevLayer(l);
    const pbase = prev * M;
    // the listed blocks as the full pass counts them; an unlisted block is not heavy (u < theta), so
    // it adds to a union only, where the previous layer's mass (a listed block of it) or its own
    // self score (a kept high block) reaches theta
    let interC = 0;
    let unionC = 0;
    let interS = 0;
    let unionS = 0;
    const mark = this.mark;
    const mk = ++this.markStamp;
    // (the forms' lookups written out, with the arrays held: selfScore and lastMass of the two layers;
    // a listed mass found by walking the form's list alongside the ascending blocks read)
    const list = this.curListed;
    const fm = this.formMass;
    const pForm = crossKnown && this.listed[prev] === 1;
    const pN = this.formN[prev];
    const pK = this.formK[prev];
    const pU = this.formU[prev];
    const pCur = this.cur;
    const lForm = this.listed[l] === 1;
    const lN = this.formN[l];
    const lK = this.formK[l];
    const lU = this.formU[l];
    const lRecent = this.recent;
    let qp = 0;
    let ql = 0;
    for (let i = 0; i < k; i++) {
      const b = idx[i];
      mark[b] = mk;
      if (!judged[b]) continue;
      const h = mass[i] >= theta;
      let c = false;
      if (crossKnown) {
        let pm: number;
        if (pForm && b < pN) {
          while (qp < pK && list[pbase + qp] < b) qp++;
          pm = qp < pK && list[pbase + qp] === b ? fm[pbase + qp] : pU;
        } else pm = pCur[pbase + b];
        c = pm >= theta;
      }
      let sv: number;
      if (lForm && b < lN) {
        while (ql < lK && list[base + ql] < b) ql++;
        sv = ql < lK && list[base + ql] === b ? fm[base + ql] : lU;
      } else sv = lRecent[base + b];
      const sf = sv >= theta;
      if (h && c) interC++;
      if (h || c) unionC++;
      if (h && sf) interS++;
      if (h || sf) unionS++;
    }
    if (crossKnown) {
      const pn = this.curListedCount[prev];
      for (let i = 0; i < pn; i++) {
        const b = list[pbase + i];
        if (b >= n) break;
        if (mark[b] === mk || !judged[b]) continue;
        const pm = pForm && i < pK ? fm[pbase + i] : pCur[pbase + b];
        if (pm >= theta) unionC++;
      }
    }
    const hn = this.highCount[l];
    const high = this.high;
    ql = 0;
    for (let i = 0; i < hn; i++) {
      const b = high[base + i];
      if (b >= n) break;
      if (mark[b] === mk || !judged[b]) continue;
      let sv: number;
      if (lForm && b < lN) {
        while (ql < lK && list[base + ql] < b) ql++;
        sv = ql < lK && list[base + ql] === b ? fm[base + ql] : lU;
      } else sv = lRecent[base + b];
      if (sv >= theta) unionS++;
    }
    const rho = this.p.simRate;
    if (crossKnown && unionC > 0) this.simCross[l] = (1 - rho) * this.simCross[l] + (rho * interC) / unionC;
    if (unionS > 0) this.simSelf[l] = (1 - rho) * this.simSelf[l] + (rho * interS) / unionS;
  }

  /** observe() reading every block */
  private observeEvery(obs: Observation, judged: Uint8Array | undefined, walk: boolean): void {
    const l = obs.layer;
    const M = this.maxBlocks;
    const base = l * M;
    const n = obs.nBlocks;
    const att = obs.attended;
    const cur = this.cur;
    const recent = this.recent;
    const seen = this.seenStep;
    const step = obs.step;
    const { idx, mass } = obs;
    const u = obs.uniform;
    // listed blocks that ascend are walked with the blocks (else their masses are written first)
    if (idx !== null && !walk) {
      for (let b = 0; b < n; b++) cur[base + b] = att[b] ? u : 0;
      for (let i = 0; i < idx.length; i++) cur[base + idx[i]] = att[idx[i]] ? mass[i] : 0;
    }
    const theta = this.threshold(n);
    const highFrom = this.threshold(n + 1) * (1 - 1e-9);
    const high = this.high;
    const highVal = this.highVal;
    let nHigh = 0;
    const crossKnown = this.crossKnown(l, step);
    const pbase = this.prevLayer(l) * M;
    const w = this.p.historyWeight;
    // learn the mix: each predictor's overlap with the observed heavy set, over the judged blocks
    let interC = 0;
    let unionC = 0;
    let interS = 0;
    let unionS = 0;
    let finite = Number.isFinite(u);
    let j = 0;
    let next = walk && idx!.length > 0 ? idx![0] : -1;
    for (let b = 0; b < n; b++) {
      // this observation's mass (0 where not attended)
      let m: number;
      if (idx === null) m = att[b] ? mass[b] : 0;
      else if (!walk) m = cur[base + b];
      else if (b === next) {
        m = att[b] ? mass[j] : 0;
        next = ++j < idx.length ? idx[j] : -1;
      } else m = att[b] ? u : 0;
      cur[base + b] = m;
      if (att[b]) {
        const r = recent[base + b];
        if (judged !== undefined && judged[b]) {
          const h = m >= theta;
          const c = crossKnown && cur[pbase + b] >= theta;
          const sf = r >= theta;
          if (h && c) interC++;
          if (h || c) unionC++;
          if (h && sf) interS++;
          if (h || sf) unionS++;
        }
        recent[base + b] = (1 - w) * r + w * m;
        seen[base + b] = step;
        if (!Number.isFinite(m)) finite = false;
      }
      const self = recent[base + b];
      if (self >= highFrom) {
        high[base + nHigh] = b;
        highVal[base + nHigh++] = self;
      }
    }
    if (judged !== undefined) {
      const rho = this.p.simRate;
      if (crossKnown && unionC > 0) this.simCross[l] = (1 - rho) * this.simCross[l] + (rho * interC) / unionC;
      if (unionS > 0) this.simSelf[l] = (1 - rho) * this.simSelf[l] + (rho * interS) / unionS;
    }
    if (!finite) this.nonFinite[l] = 1;
    this.highCount[l] = nHigh;
    this.highFrom[l] = highFrom;
  }
}

/**
 * The place in formMass of block b's value in a layer's form (its rows at `base`, k blocks listed,
 * the uniform share at uPlace): its listed mass where the form lists it, else the uniform share.
 * The place formPos keeps for b holds b in the list only where b is listed (the list's blocks are
 * distinct); the place is picked by arithmetic, not a branch (whether a block is listed falls
 * either way at random).
 */
function formAt(pos: Int16Array | Int32Array, list: Int32Array, base: number, k: number, uPlace: number, b: number): number {
  const p = pos[base + b];
  const hit = +(p < k) & +(list[base + p] === b);
  return uPlace + hit * (base + p - uPlace);
}

/** true when the blocks strictly ascend (so none repeats) */
function ascending(idx: ArrayLike<number>): boolean {
  for (let i = 1; i < idx.length; i++) if (idx[i] <= idx[i - 1]) return false;
  return true;
}
