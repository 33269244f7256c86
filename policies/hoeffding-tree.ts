/**
 * A streaming Hoeffding tree (VFDT: Domingos & Hulten, "Mining High-Speed Data Streams", KDD 2000)
 * for binary labels over numeric features in [0, 1]. Each leaf keeps, per feature, class counts in
 * `bins` equal-width bins; every `grace` samples it computes the information gain of splitting at each
 * bin edge and splits on the best feature when the gain beats the second best by more than the
 * Hoeffding bound ε = sqrt(R² ln(1/δ) / 2n) (R = 1 bit for two classes), or when ε < τ (a tie), and
 * the gain is at least minGain (0.01 bit: a tie between noise features is no reason to split). A split
 * at bin edge e sends x left when its bin is <= e (x[f] < (e + 1) / bins), as its counts were binned; the new leaves start empty. A leaf predicts its
 * majority class (Laplace-smoothed frequency > 1/2). Prequential accuracy (test, then train) is
 * tracked, so the predictor reports how good it is instead of pretending: on an unlearnable stream it
 * stays near the base rate.
 *
 * A split check whose outcome is known without computing the gains is not computed: every gain of a
 * leaf is the mutual information I of the class and the side of the edge in the leaf's counts, and
 * n·I grows by at most d(n) − d(n_y) when one sample of class y is added (d(x) = (x+1)·log2(x+1) −
 * x·log2(x), see gainGrowth), so from the largest gain at one check a bound on every gain at the next
 * follows from the counts alone; while it stays below minGain, no edge can split (the same splits at
 * the same samples as computing every check).
 *
 * The nodes are kept in typed arrays (a node's feature, -1 for a leaf, its edge and children; a
 * leaf's counters) so that routing a sample reads only numbers; while the splits test at most two
 * features (and there are at most 16 bins), a table gives the leaf of each pair of their bins.
 */

export interface HoeffdingOptions {
  features: number;
  bins?: number;
  grace?: number;
  delta?: number;
  tau?: number;
  /** a split must gain at least this many bits (keeps ties on noise from splitting) */
  minGain?: number;
  maxDepth?: number;
  /** compute every split check, never consulting the gain bound (the same splits, slower: a reference for tests) */
  exactChecks?: boolean;
}

/** Binary entropy in bits of `pos` positives among `n`. */
export function entropy(pos: number, n: number): number {
  if (n <= 0 || pos <= 0 || pos >= n) return 0;
  const p = pos / n;
  return -(p * Math.log2(p) + (1 - p) * Math.log2(1 - p));
}

/** binary entropy at p = k / ENTROPY_GRID, k = 0 .. ENTROPY_GRID */
const ENTROPY_GRID = 4096;
const entropyAt = Float64Array.from({ length: ENTROPY_GRID + 1 }, (_, k) => entropy(k, ENTROPY_GRID));

/**
 * A lower bound of the binary entropy at p (in [0, 1]): the chord between the grid points around p
 * (the entropy is concave, so its chords lie below it), less a margin past the rounding of both.
 */
export function entropyBelow(p: number): number {
  const x = p * ENTROPY_GRID;
  const k = Math.floor(x);
  if (k >= ENTROPY_GRID) return 0;
  return entropyAt[k] + (entropyAt[k + 1] - entropyAt[k]) * (x - k) - 1e-12;
}

/**
 * The Hoeffding bound: with probability 1 − δ the true mean of a variable of range R lies within
 * ε = sqrt(R² ln(1/δ) / 2n) of the mean of n observations.
 */
export function hoeffdingBound(range: number, delta: number, n: number): number {
  return Math.sqrt((range * range * Math.log(1 / delta)) / (2 * n));
}

/**
 * d(x) = g(x + 1) − g(x) for g(x) = x·log2(x) (g(0) = 0), written log2(x + 1) + x·log2(1 + 1/x) so
 * that it keeps its precision at large x. g is convex, so d rises with x.
 */
export function gainGrowth(x: number): number {
  return x <= 0 ? 0 : Math.log2(x + 1) + (x * Math.log1p(1 / x)) / Math.LN2;
}

/**
 * An upper bound of n1·I at every edge of a leaf that had n0 samples (pos0 positive) and n0·I <= cap0
 * at every edge, after pos1 − pos0 positives and the rest negatives were added (n1 samples). n·I =
 * Σ_cells g(n_ys) − Σ_y g(n_y) − Σ_s g(n_s) + g(n), so a sample added to cell (y, s) adds
 * d(n_ys) − d(n_y) − d(n_s) + d(n) <= d(n) − d(n_y) (as n_ys <= n_s and d rises), and with n <= n1 − 1
 * and n_y at least its count at n0, at most d(n1 − 1) − d(count of y at n0). Widened past rounding.
 */
export function gainCapAfter(cap0: number, n0: number, pos0: number, n1: number, pos1: number): number {
  const dn = gainGrowth(n1 - 1);
  const addPos = pos1 - pos0;
  const addNeg = n1 - pos1 - (n0 - pos0);
  const grow = (addPos > 0 ? addPos * (dn - gainGrowth(pos0)) : 0) + (addNeg > 0 ? addNeg * (dn - gainGrowth(n0 - pos0)) : 0);
  return (cap0 + grow) * (1 + 1e-12) + 1e-9;
}

/** What one split check of a leaf saw and decided (the last one is kept, for tests and reports). */
export interface SplitCheck {
  /** samples at the leaf */
  n: number;
  /** best feature (-1: no candidate) and its information gain, bits; its threshold */
  feature: number;
  gain: number;
  threshold: number;
  /** gain of the best split on any other feature (0 when none) */
  second: number;
  /** Hoeffding bound at n */
  epsilon: number;
  split: boolean;
  /** why: 'bound' (gain − second > ε), 'tie' (ε < τ), 'pure', 'min-gain', 'no-gap' */
  reason: 'bound' | 'tie' | 'pure' | 'min-gain' | 'no-gap';
}

/** whether this machine stores the low byte of a word first */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** the counts of a node that is no longer a leaf */
const EMPTY = new Float64Array(0);

export class HoeffdingTree {
  readonly features: number;
  readonly bins: number;
  readonly grace: number;
  readonly delta: number;
  readonly tau: number;
  readonly maxDepth: number;
  readonly minGain: number;
  /** prequential counters */
  seen = 0;
  correct = 0;
  positives = 0;
  splits = 0;
  /** split checks whose outcome (no split: every gain below minGain) the gain bound gave without computing them */
  checksSkipped = 0;
  /** the last split check of any leaf that was computed (undefined before the first) */
  lastCheck: SplitCheck | undefined;
  /** every split check computed (no bound consulted): the reference the bound is tested against */
  private readonly exactChecks: boolean;

  // the nodes (0: the root), per node: its feature (-1: a leaf), edge (x goes left when its bin of
  // the feature is <= edge) and children (kids[2 node], kids[2 node + 1]: left, right)
  private nodes = 0;
  private feat: Int32Array;
  private edge: Int32Array;
  private kids: Int32Array;
  // per leaf: samples, positives, samples since its last check, depth; its class counts (let go when
  // it splits). With at most 16 bins the counts are kept per pair of features (0 and 1, 2 and 3, ...:
  // counts[pair][bin of the first][bin of the second][class] flattened, pair p at p * bins² * 2, and
  // the last feature of an odd count alone after them), one count per pair for each sample; a split
  // check adds them up per feature (flatCounts). With more bins, counts[f][bin][class] flattened:
  // (f * bins + bin) * 2 + y.
  private leafN: Float64Array;
  private leafPos: Float64Array;
  private leafSince: Int32Array;
  private leafDepth: Int32Array;
  private leafCounts: Float64Array[] = [];
  // while the splits test at most two features (routeA, routeB; -1: none) and there are at most 16
  // bins: the leaf of each pair of their bins, route[binA * bins + binB] (routeAll: the splits test more)
  private routeA = -1;
  private routeB = -1;
  private routeAll = false;
  private route = new Int32Array(0);
  /** whether the counts are kept per pair of features */
  private readonly paired: boolean;
  /** counts[f][bin][class] of one leaf, added up from its pairs (flatCounts) */
  private readonly flat: Float64Array;
  // per leaf, at its last split check: samples, positives, and a bound of n·gain at every edge then
  private chkN: Float64Array;
  private chkPos: Float64Array;
  private chkCap: Float64Array;

  /** bins of one sample (reused) */
  private readonly scratch: Float64Array;
  // per edge (feature * (bins - 1) + bin) and per feature, for bestSplits() (fields of the tree, not
  // of an object of their own: no object a later tree's construction could change the map of)
  private readonly ub: Float64Array;
  private readonly cumN: Float64Array;
  private readonly cumP: Float64Array;
  private readonly ubF: Float64Array;
  private readonly fGain: Float64Array;
  private readonly fEdge: Int32Array;
  private readonly order: Int32Array;
  private readonly edgeOrder: Int32Array;
  // the last bestSplits(): its best gain, feature and edge, and the second gain (the gains NaN before
  // the first: their fields hold doubles from the start)
  private bestGain = Number.NaN;
  private bestFeature = -1;
  private bestEdge = -1;
  private secondGain = Number.NaN;

  constructor(o: HoeffdingOptions) {
    this.features = o.features;
    this.scratch = new Float64Array(o.features);
    this.bins = o.bins ?? 16;
    this.grace = o.grace ?? 200;
    this.delta = o.delta ?? 1e-7;
    this.tau = o.tau ?? 0.05;
    this.maxDepth = o.maxDepth ?? 8;
    this.minGain = o.minGain ?? 0.01;
    this.exactChecks = o.exactChecks ?? false;
    this.paired = this.bins <= 16;
    this.flat = new Float64Array(o.features * this.bins * 2);
    const edges = o.features * (this.bins - 1);
    this.ub = new Float64Array(edges);
    this.cumN = new Float64Array(edges);
    this.cumP = new Float64Array(edges);
    this.ubF = new Float64Array(o.features);
    this.fGain = new Float64Array(o.features);
    this.fEdge = new Int32Array(o.features);
    this.order = new Int32Array(o.features);
    this.edgeOrder = new Int32Array(Math.max(0, this.bins - 1));
    const cap = 4;
    this.feat = new Int32Array(cap);
    this.edge = new Int32Array(cap);
    this.kids = new Int32Array(2 * cap);
    this.leafN = new Float64Array(cap);
    this.leafPos = new Float64Array(cap);
    this.leafSince = new Int32Array(cap);
    this.leafDepth = new Int32Array(cap);
    this.chkN = new Float64Array(cap);
    this.chkPos = new Float64Array(cap);
    this.chkCap = new Float64Array(cap);
    this.leaf(0);
    this.routeAll = this.bins > 16;
  }

  /** a new leaf at `depth` (empty: every gain 0); its node */
  private leaf(depth: number): number {
    const id = this.nodes++;
    if (id >= this.feat.length) this.grow();
    this.feat[id] = -1;
    this.leafDepth[id] = depth;
    const B = this.bins;
    const F = this.features;
    this.leafCounts[id] = new Float64Array(this.paired ? (F >> 1) * B * B * 2 + (F & 1) * B * 2 : F * B * 2);
    return id;
  }

  private grow(): void {
    // (each array twice as long, its entries kept)
    const more = <A extends Int32Array | Float64Array>(a: A): A => {
      const b = new (a.constructor as new (n: number) => A)(a.length * 2);
      b.set(a);
      return b;
    };
    this.feat = more(this.feat);
    this.edge = more(this.edge);
    this.kids = more(this.kids);
    this.leafN = more(this.leafN);
    this.leafPos = more(this.leafPos);
    this.leafSince = more(this.leafSince);
    this.leafDepth = more(this.leafDepth);
    this.chkN = more(this.chkN);
    this.chkPos = more(this.chkPos);
    this.chkCap = more(this.chkCap);
  }

  /** the route table after a split (routeAll when the splits test more than two features or there are more than 16 bins) */
  private makeRoute(): void {
    if (this.routeAll) return;
    const used: number[] = [];
    for (let node = 0; node < this.nodes; node++) if (this.feat[node] >= 0 && !used.includes(this.feat[node])) used.push(this.feat[node]);
    if (used.length > 2) {
      this.routeAll = true;
      return;
    }
    const B = this.bins;
    this.routeA = used[0];
    this.routeB = used.length > 1 ? used[1] : -1;
    this.route = new Int32Array(B * B);
    const x = new Uint8Array(this.features);
    for (let a = 0; a < B; a++) {
      for (let c = 0; c < B; c++) {
        x[this.routeA] = a;
        if (this.routeB >= 0) x[this.routeB] = c;
        this.route[a * B + c] = this.walk(x, 0);
      }
    }
  }

  /** the leaf of the bins b[offset .. offset + features) */
  private findBins(b: ArrayLike<number>, offset: number): number {
    if (!this.routeAll) return this.routeA < 0 ? 0 : this.route[b[offset + this.routeA] * this.bins + (this.routeB < 0 ? 0 : b[offset + this.routeB])];
    return this.walk(b, offset);
  }

  /** findBins() from the root down */
  private walk(b: ArrayLike<number>, offset: number): number {
    const feat = this.feat;
    let node = 0;
    for (let f = feat[0]; f >= 0; f = feat[node]) node = this.kids[2 * node + (b[offset + f] <= this.edge[node] ? 0 : 1)];
    return node;
  }

  /** the bin of a feature value: floor(v * bins), clamped to [0, bins − 1] (all the tree ever uses of a value) */
  bin(v: number): number {
    return Math.min(this.bins - 1, Math.max(0, Math.floor(v * this.bins)));
  }

  /** the bins of the features x[offset .. offset + features), in a scratch array (NaN stays NaN) */
  private binsOf(x: ArrayLike<number>, offset: number): Float64Array {
    const out = this.scratch;
    for (let f = 0; f < this.features; f++) out[f] = this.bin(x[offset + f]);
    return out;
  }

  /** probability of the positive class at x (the leaf's frequency, Laplace-smoothed) */
  probability(x: ArrayLike<number>): number {
    return this.probabilityAt(x, 0);
  }

  /** probability() of the features x[offset .. offset + features) (a row of a larger array, no view made) */
  probabilityAt(x: ArrayLike<number>, offset: number): number {
    return this.probabilityOfBins(this.binsOf(x, offset), 0);
  }

  /** probabilityAt() of features given by their bins b[offset .. offset + features) (bin() of each value) */
  probabilityOfBins(b: ArrayLike<number>, offset: number): number {
    const leaf = this.findBins(b, offset);
    return (this.leafPos[leaf] + 1) / (this.leafN[leaf] + 2);
  }

  /**
   * Whether a leaf whose probability is above `threshold` is reached by some sample with feature f in
   * bin v (the other features in any bins).
   */
  reachesAbove(f: number, v: number, threshold: number): boolean {
    return this.reachesAboveFrom(0, f, v, threshold);
  }

  private reachesAboveFrom(node: number, f: number, v: number, threshold: number): boolean {
    const nf = this.feat[node];
    if (nf < 0) return (this.leafPos[node] + 1) / (this.leafN[node] + 2) > threshold;
    const left = this.kids[2 * node];
    const right = this.kids[2 * node + 1];
    if (nf === f) return this.reachesAboveFrom(v <= this.edge[node] ? left : right, f, v, threshold);
    return this.reachesAboveFrom(left, f, v, threshold) || this.reachesAboveFrom(right, f, v, threshold);
  }

  predict(x: ArrayLike<number>): boolean {
    return this.probability(x) > 0.5;
  }

  /** prequential accuracy so far (NaN before any sample) */
  get accuracy(): number {
    return this.seen ? this.correct / this.seen : Number.NaN;
  }

  /** accuracy of always answering the majority class seen so far (the bar a useful predictor clears) */
  get baseRate(): number {
    return this.seen ? Math.max(this.positives, this.seen - this.positives) / this.seen : Number.NaN;
  }

  /** The split nodes, depth first (left before right): feature, threshold and depth of each. */
  structure(): { feature: number; threshold: number; depth: number }[] {
    const out: { feature: number; threshold: number; depth: number }[] = [];
    const walk = (node: number, depth: number): void => {
      if (this.feat[node] < 0) return;
      out.push({ feature: this.feat[node], threshold: (this.edge[node] + 1) / this.bins, depth });
      walk(this.kids[2 * node], depth + 1);
      walk(this.kids[2 * node + 1], depth + 1);
    };
    walk(0, 0);
    return out;
  }

  /** Test on x, then learn (x, y). */
  learn(x: ArrayLike<number>, y: boolean): void {
    this.learnAt(x, 0, y);
  }

  /** learn() of the features x[offset .. offset + features) */
  learnAt(x: ArrayLike<number>, offset: number, y: boolean): void {
    this.learnBins(this.binsOf(x, offset), 0, y);
  }

  /** learnAt() of features given by their bins b[offset .. offset + features) (bin() of each value) */
  learnBins(b: ArrayLike<number>, offset: number, y: boolean): void {
    const leaf = this.findBins(b, offset);
    const guess = (this.leafPos[leaf] + 1) / (this.leafN[leaf] + 2) > 0.5;
    this.seen++;
    if (guess === y) this.correct++;
    if (y) this.positives++;
    this.leafN[leaf]++;
    if (y) this.leafPos[leaf]++;
    this.count(this.leafCounts[leaf], b, offset, y ? 1 : 0);
    if (++this.leafSince[leaf] >= this.grace && this.leafDepth[leaf] < this.maxDepth) {
      this.leafSince[leaf] = 0;
      this.check(leaf);
    }
  }

  /**
   * learnBins() of `count` samples in turn: sample j's bins are bins[j * features .. (j + 1) *
   * features), its label labels[j] (1: positive).
   */
  learnBinsMany(bins: Uint8Array, count: number, labels: Uint8Array): void {
    const F = this.features;
    const B = this.bins;
    const grace = this.grace;
    const maxDepth = this.maxDepth;
    // eight features of a sample read as two little-endian words (its bins are bytes; aligned rows)
    const words = F === 8 && B === 16 && LITTLE_ENDIAN && bins.byteOffset % 4 === 0 ? new Int32Array(bins.buffer, bins.byteOffset, 2 * count) : null;
    let seen = this.seen;
    let correct = this.correct;
    let positives = this.positives;
    let feat = this.feat;
    let edge = this.edge;
    let kids = this.kids;
    let routeAll = this.routeAll;
    let routeA = this.routeA;
    let routeB = this.routeB;
    let route = this.route;
    // the leaf of the samples being learned and its counters, held here while the samples go to it
    let leaf = -1;
    let n = 0;
    let pos = 0;
    let since = 0;
    let counts: Float64Array = EMPTY;
    for (let j = 0, at = 0; j < count; j++, at += F) {
      let node = 0;
      if (!routeAll) {
        if (routeA >= 0) node = route[bins[at + routeA] * B + (routeB < 0 ? 0 : bins[at + routeB])];
      } else for (let f = feat[0]; f >= 0; f = feat[node]) node = kids[2 * node + (bins[at + f] <= edge[node] ? 0 : 1)];
      if (node !== leaf) {
        if (leaf >= 0) {
          this.leafN[leaf] = n;
          this.leafPos[leaf] = pos;
          this.leafSince[leaf] = since;
        }
        leaf = node;
        n = this.leafN[leaf];
        pos = this.leafPos[leaf];
        since = this.leafSince[leaf];
        counts = this.leafCounts[leaf];
      }
      const y = labels[j];
      // (pos + 1) / (n + 2) > 1/2, in integers
      if ((2 * pos > n ? 1 : 0) === y) correct++;
      seen++;
      positives += y;
      n++;
      pos += y;
      if (words !== null) {
        // the four pairs' counts: pair p at p * 512, (16 · first bin + second bin) * 2 + y
        const w0 = words[2 * j];
        const w1 = words[2 * j + 1];
        counts[2 * (((w0 & 255) << 4) | ((w0 >>> 8) & 255)) + y]++;
        counts[2 * (((w0 >>> 12) & 0xff0) | (w0 >>> 24)) + y + 512]++;
        counts[2 * (((w1 & 255) << 4) | ((w1 >>> 8) & 255)) + y + 1024]++;
        counts[2 * (((w1 >>> 12) & 0xff0) | (w1 >>> 24)) + y + 1536]++;
      } else this.count(counts, bins, at, y);
      if (++since >= grace && this.leafDepth[leaf] < maxDepth) {
        since = 0;
        this.leafN[leaf] = n;
        this.leafPos[leaf] = pos;
        this.leafSince[leaf] = 0;
        if (this.check(leaf)) {
          // (a split may have grown the node arrays; the leaf is now a split)
          feat = this.feat;
          edge = this.edge;
          kids = this.kids;
          routeAll = this.routeAll;
          routeA = this.routeA;
          routeB = this.routeB;
          route = this.route;
          leaf = -1;
        }
      }
    }
    if (leaf >= 0) {
      this.leafN[leaf] = n;
      this.leafPos[leaf] = pos;
      this.leafSince[leaf] = since;
    }
    this.seen = seen;
    this.correct = correct;
    this.positives = positives;
  }

  /** add the sample of bins b[offset .. offset + features), class y (0 or 1), to a leaf's counts */
  private count(counts: Float64Array, b: ArrayLike<number>, offset: number, y: number): void {
    const F = this.features;
    const B = this.bins;
    if (!this.paired) {
      for (let f = 0; f < F; f++) counts[(f * B + b[offset + f]) * 2 + y]++;
      return;
    }
    const pair = B * B * 2;
    let f = 0;
    for (; f + 1 < F; f += 2) counts[(f >> 1) * pair + (b[offset + f] * B + b[offset + f + 1]) * 2 + y]++;
    if (f < F) counts[(F >> 1) * pair + b[offset + f] * 2 + y]++;
  }

  /** a leaf's counts[f][bin][class], flattened ((f * bins + bin) * 2 + y): its own, or added up from its pairs */
  private flatCounts(leaf: number): Float64Array {
    const counts = this.leafCounts[leaf];
    if (!this.paired) return counts;
    const F = this.features;
    const B = this.bins;
    const out = this.flat;
    out.fill(0);
    const pair = B * B * 2;
    let f = 0;
    for (; f + 1 < F; f += 2) {
      const at = (f >> 1) * pair;
      for (let a = 0; a < B; a++) {
        for (let c = 0; c < B; c++) {
          const i = at + (a * B + c) * 2;
          out[(f * B + a) * 2] += counts[i];
          out[(f * B + a) * 2 + 1] += counts[i + 1];
          out[((f + 1) * B + c) * 2] += counts[i];
          out[((f + 1) * B + c) * 2 + 1] += counts[i + 1];
        }
      }
    }
    if (f < F) out.set(counts.subarray((F >> 1) * pair, (F >> 1) * pair + B * 2), f * B * 2);
    return out;
  }

  /** a leaf's split check, unless the gain bound says no edge can split it; whether it split */
  private check(leaf: number): boolean {
    const n = this.leafN[leaf];
    const pos = this.leafPos[leaf];
    if (!this.exactChecks) {
      const cap = gainCapAfter(this.chkCap[leaf], this.chkN[leaf], this.chkPos[leaf], n, pos);
      this.chkN[leaf] = n;
      this.chkPos[leaf] = pos;
      this.chkCap[leaf] = cap;
      // (below minGain by more than the rounding of a computed gain, ~1e-14)
      if (cap < n * this.minGain * (1 - 1e-9)) {
        this.checksSkipped++;
        return false;
      }
    }
    return this.trySplit(leaf);
  }

  private trySplit(leaf: number): boolean {
    const n = this.leafN[leaf];
    const pos = this.leafPos[leaf];
    if (pos === 0 || pos === n) {
      // every gain is 0
      this.chkCap[leaf] = 0;
      this.lastCheck = { n, feature: -1, gain: 0, threshold: Number.NaN, second: 0, epsilon: hoeffdingBound(1, this.delta, n), split: false, reason: 'pure' };
      return false;
    }
    const h = entropy(pos, n);
    this.bestSplits(leaf, h);
    const gain = this.bestGain;
    const feature = this.bestFeature;
    // the largest gain, widened past the rounding of its computation
    this.chkCap[leaf] = n * (Math.max(0, gain) * (1 + 1e-12) + 1e-12);
    const second = this.secondGain;
    // R = 1 bit: the range of the information gain for two classes
    const eps = hoeffdingBound(1, this.delta, n);
    const threshold = feature < 0 ? Number.NaN : (this.bestEdge + 1) / this.bins;
    const check: SplitCheck = { n, feature, gain: Math.max(0, gain), threshold, second: Math.max(0, second), epsilon: eps, split: false, reason: 'no-gap' };
    this.lastCheck = check;
    if (feature < 0 || gain < this.minGain) {
      check.reason = 'min-gain';
      return false;
    }
    if (gain - Math.max(0, second) > eps) check.reason = 'bound';
    else if (eps < this.tau && gain > 0) check.reason = 'tie';
    else return false;
    check.split = true;
    const depth = this.leafDepth[leaf] + 1;
    const left = this.leaf(depth);
    const right = this.leaf(depth);
    // the leaf's node becomes the split (its counts let go)
    this.feat[leaf] = feature;
    this.edge[leaf] = this.bestEdge;
    this.kids[2 * leaf] = left;
    this.kids[2 * leaf + 1] = right;
    this.leafCounts[leaf] = EMPTY;
    this.splits++;
    this.makeRoute();
    return true;
  }

  /**
   * The best split of a leaf, into bestGain, bestFeature and bestEdge: the feature and bin edge of
   * the largest information gain (ties: the lowest feature, then the lowest edge; gain -1 and feature
   * -1 when no edge splits its samples), and in secondGain the largest gain of any other feature (-1
   * when none). Each gain has an upper
   * bound that costs no logarithm (its two entropies bounded from below by entropyBelow); the gains
   * are computed (each exactly as it would be alone) only where that bound reaches the best of its
   * feature or the second best feature so far.
   */
  private bestSplits(leaf: number, h: number): void {
    const F = this.features;
    const E = this.bins - 1;
    const n = this.leafN[leaf];
    const pos = this.leafPos[leaf];
    const counts = this.flatCounts(leaf);
    const ub = this.ub;
    const cumN = this.cumN;
    const cumP = this.cumP;
    const ubF = this.ubF;
    const fGain = this.fGain;
    const fEdge = this.fEdge;
    const order = this.order;
    const edgeOrder = this.edgeOrder;
    // the bound of every edge that splits the samples (-1: one that does not), and per feature the largest
    for (let f = 0; f < F; f++) {
      let ln = 0;
      let lp = 0;
      let top = -1;
      for (let b = 0; b < E; b++) {
        const i = (f * this.bins + b) * 2;
        const inBin = counts[i] + counts[i + 1];
        ln += inBin;
        lp += counts[i + 1];
        const rn = n - ln;
        const e = f * E + b;
        cumN[e] = ln;
        cumP[e] = lp;
        // an empty bin: the same split as at the edge before
        if (ln === 0 || rn === 0 || (inBin === 0 && b > 0)) {
          ub[e] = -1;
          continue;
        }
        // the bound, widened past any rounding of the gain's own computation
        const u = h - (ln / n) * entropyBelow(lp / ln) - (rn / n) * entropyBelow((pos - lp) / rn) + 1e-12;
        ub[e] = u;
        if (u > top) top = u;
      }
      ubF[f] = top;
      order[f] = f;
    }
    // features by bound, highest first (ties: the lower feature)
    for (let x = 1; x < F; x++) {
      const fx = order[x];
      let y = x - 1;
      for (; y >= 0 && (ubF[order[y]] < ubF[fx] || (ubF[order[y]] === ubF[fx] && order[y] > fx)); y--) order[y + 1] = order[y];
      order[y + 1] = fx;
    }
    // exact best gains of the features whose bound reaches the second best exact gain so far
    let v1 = -Infinity;
    let v2 = -Infinity;
    let done = 0;
    for (; done < F; done++) {
      const f = order[done];
      if (ubF[f] < v2) break;
      let fBest = -1;
      let fb = -1;
      if (ubF[f] >= 0) {
        let m = 0;
        for (let b = 0; b < E; b++) if (ub[f * E + b] >= 0) edgeOrder[m++] = b;
        // edges by bound, highest first
        for (let x = 1; x < m; x++) {
          const bx = edgeOrder[x];
          const ux = ub[f * E + bx];
          let y = x - 1;
          for (; y >= 0 && ub[f * E + edgeOrder[y]] < ux; y--) edgeOrder[y + 1] = edgeOrder[y];
          edgeOrder[y + 1] = bx;
        }
        for (let j = 0; j < m; j++) {
          const b = edgeOrder[j];
          const e = f * E + b;
          if (ub[e] < (fBest > v2 ? fBest : v2)) break;
          const ln = cumN[e];
          const lp = cumP[e];
          const rn = n - ln;
          const g = h - (ln / n) * entropy(lp, ln) - (rn / n) * entropy(pos - lp, rn);
          // the first edge of the largest gain
          if (g > fBest || (g === fBest && b < fb)) {
            fBest = g;
            fb = b;
          }
        }
      }
      fGain[f] = fBest;
      fEdge[f] = fb;
      if (fBest > v1) {
        v2 = v1;
        v1 = fBest;
      } else if (fBest > v2) v2 = fBest;
    }
    // the features not computed gain less than the second best: the best and second come from the others
    let bestGain = -1;
    let bestFeature = -1;
    let bestEdge = -1;
    let second = -1;
    for (let f = 0; f < F; f++) {
      let computed = false;
      for (let j = 0; j < done; j++) if (order[j] === f) computed = true;
      if (!computed) continue;
      const fBest = fGain[f];
      if (fBest > bestGain) {
        second = Math.max(second, bestGain);
        bestGain = fBest;
        bestFeature = f;
        bestEdge = fEdge[f];
      } else second = Math.max(second, fBest);
    }
    this.bestGain = bestGain;
    this.bestFeature = bestFeature;
    this.bestEdge = bestEdge;
    this.secondGain = second;
  }
}
