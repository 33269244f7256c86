/**
 * The features DPNC's prefetch predictor sees for one page (a KV block of one layer) when it decides
 * for step t: only what the system knows at that moment — its own history of use, the attention it
 * got when last attended, its key norm, where it sits, and where it lives. Each feature is in [0, 1]
 * (the Hoeffding tree bins [0, 1] evenly).
 *
 *   0 recency    steps from its last use to t, over RECENCY_HORIZON (1 = never used or >= horizon);
 *                with the tree's 16 bins and a horizon of 16 steps, each recency 0..15 has its own bin
 *   1 frequency  uses / attendances (0 before its first attendance)
 *   2 last_mass  its mass at its last attendance over the largest mass attended in that row
 *   3 key_norm   logistic of the z-score of its key norm among the layer's live pages
 *   4 position   block index / blocks at step t (0 = the oldest, the attention sink)
 *   5 layer      layer / (layers − 1)
 *   6 tier       tier index / (tiers − 1) (0 = HBM)
 *   7 near_layer the page's mass in the layer observed last before this decision (deciding one layer
 *                ahead for layer l at step t, layer l − 2 at t; for layers 0 and 1, a last layer at
 *                t − 1), over that row's largest attended mass, mapped to [0.25, 1]; 0 when that layer
 *                did not attend the page or that observation is older than t − 1. Nearby layers attend
 *                alike (InfiniGen predicts a layer's attention from the layer before it): on the
 *                captured Brown trace a block needed in layer l − 2 is needed in layer l at the same
 *                step with probability 0.49, against 0.034 overall
 */
export const DPNC_FEATURES = ['recency', 'frequency', 'last_mass', 'key_norm', 'position', 'layer', 'tier', 'near_layer'] as const;

export const RECENCY_HORIZON = 16;

export interface PageFacts {
  /** steps from the page's last use to the step decided for; Infinity when never used */
  recency: number;
  /** steps at which it was used, and at which it was attended */
  uses: number;
  seen: number;
  /** mass at its last attendance over the largest attended mass of that row (0 when never attended) */
  lastMass: number;
  /** z-score of its key norm among the layer's live pages (0 when unknown) */
  keyNormZ: number;
  block: number;
  nBlocks: number;
  layer: number;
  layers: number;
  tier: number;
  tiers: number;
  /** mass in the layer observed last, over that row's largest attended mass; NaN when not attended there or too old */
  prevLayerMass: number;
}

/** Write the page's feature vector into out[at .. at + DPNC_FEATURES.length). */
export function pageFeatures(f: PageFacts, out: Float64Array, at = 0): void {
  out[at] = recencyFeature(f.recency);
  out[at + 1] = frequencyFeature(f.uses, f.seen);
  out[at + 2] = lastMassFeature(f.lastMass);
  out[at + 3] = keyNormFeature(f.keyNormZ);
  out[at + 4] = positionFeature(f.block, f.nBlocks);
  out[at + 5] = layerFeature(f.layer, f.layers);
  out[at + 6] = tierFeature(f.tier, f.tiers);
  out[at + 7] = nearLayerFeature(f.prevLayerMass);
}

// the features one by one (pageFeatures writes them all; a caller keeping some of them between
// decisions computes each with the same function)
export const recencyFeature = (recency: number): number => Math.min(1, recency / RECENCY_HORIZON);
export const frequencyFeature = (uses: number, seen: number): number => (seen > 0 ? uses / seen : 0);
/**
 * Whether bin k of `bins` (bin(v) = min(bins − 1, max(0, floor(v · bins)))) is the frequency's bin
 * for integer counts uses <= seen (seen >= 1, below 2^31): when uses · bins lies strictly inside
 * [k · seen, (k + 1) · seen) (or at or past (bins − 1) · seen for the last bin, or below seen for
 * bin 0), the exact quotient is at least 1 / seen from the bin's edges and the division's rounding
 * cannot cross one. False also when k may be right (an edge hit exactly): the caller computes the bin.
 */
export const frequencyBinHolds = (k: number, uses: number, seen: number, bins: number): boolean => {
  const scaled = uses * bins;
  return (k === 0 || k * seen < scaled) && (k === bins - 1 || scaled < (k + 1) * seen);
};
export const lastMassFeature = (lastMass: number): number => Math.min(1, Math.max(0, lastMass));
export const keyNormFeature = (z: number): number => 1 / (1 + Math.exp(-z));
export const positionFeature = (block: number, nBlocks: number): number => block / Math.max(1, nBlocks);
export const layerFeature = (layer: number, layers: number): number => (layers > 1 ? layer / (layers - 1) : 0);
export const tierFeature = (tier: number, tiers: number): number => (tiers > 1 ? Math.max(0, tier) / (tiers - 1) : 0);
export const nearLayerFeature = (prevLayerMass: number): number =>
  Number.isNaN(prevLayerMass) ? 0 : 0.25 + 0.75 * Math.min(1, Math.max(0, prevLayerMass));

/**
 * The bin of the key-norm feature (keyNormFeature) for a z-score, without an exp per page: the
 * logistic rises with z, so its bin is the number of bin edges (in z) at or below z. The edges are
 * found once by bisection on `bin(keyNormFeature(z))` itself; a z within GUARD of an edge (where
 * rounding in exp could decide) gets `bin(keyNormFeature(z))` computed, so every answer equals it.
 */
export class KeyNormBins {
  /** GUARD in z: the logistic's rounding error (a few ulps) is far below its change over this width */
  static readonly GUARD = 1e-7;
  private readonly edges: Float64Array;
  /**
   * per bin k: its lower edge in z (−Infinity for bin 0) and its upper edge (+Infinity for the last):
   * a z within ±40 at least GUARD inside both is in bin k (ofNear(z, k) is k)
   */
  readonly below: Float64Array;
  readonly above: Float64Array;

  /** `binner.bin(v)`: the bin of a feature value v (an object, so that its call site sees one method for every instance) */
  constructor(private readonly binner: { bin(v: number): number }, bins: number) {
    const exact = (z: number) => binner.bin(keyNormFeature(z));
    // edges[k - 1]: the least z found with bin >= k, k = 1 .. bins − 1 (bins past a z of ±40 stay empty: 0 / bins − 1 there)
    this.edges = new Float64Array(Math.max(0, bins - 1));
    for (let k = 1; k < bins; k++) {
      let lo = -40;
      let hi = 40;
      if (exact(lo) >= k) hi = lo;
      else if (exact(hi) < k) lo = hi = Infinity;
      for (let i = 0; i < 200 && lo < hi; i++) {
        const mid = lo + (hi - lo) / 2;
        if (mid === lo || mid === hi) break;
        if (exact(mid) >= k) hi = mid;
        else lo = mid;
      }
      this.edges[k - 1] = hi;
    }
    this.below = Float64Array.from({ length: bins }, (_, k) => (k > 0 ? this.edges[k - 1] : -Infinity));
    this.above = Float64Array.from({ length: bins }, (_, k) => (k < bins - 1 ? this.edges[k] : Infinity));
  }

  /** bin(keyNormFeature(z)) */
  of(z: number): number {
    const e = this.edges;
    let k = 0;
    while (k < e.length && e[k] <= z) k++;
    // the nearest edges on either side (z between edges[k − 1] and edges[k]): too close -> exact
    if ((k > 0 && z - e[k - 1] < KeyNormBins.GUARD) || (k < e.length && e[k] - z < KeyNormBins.GUARD) || !(z > -40 && z < 40)) return this.binner.bin(keyNormFeature(z));
    return k;
  }

  /** of(z), tried first at bin k (a page's z most often keeps the bin it had): the same answer */
  ofNear(z: number, k: number): number {
    const e = this.edges;
    // k is the count of edges at or below z (the edges rise), as of() counts them
    if (!((k === 0 || e[k - 1] <= z) && (k === e.length || e[k] > z))) return this.of(z);
    if ((k > 0 && z - e[k - 1] < KeyNormBins.GUARD) || (k < e.length && e[k] - z < KeyNormBins.GUARD) || !(z > -40 && z < 40)) return this.binner.bin(keyNormFeature(z));
    return k;
  }
}

/** Mean and standard deviation of norms[0 .. n) over the blocks where `live` holds. */
export function normStats(norms: ArrayLike<number>, n: number, live: (b: number) => boolean): { mean: number; sd: number } {
  let s = 0;
  let q = 0;
  let k = 0;
  for (let b = 0; b < n; b++) {
    if (!live(b)) continue;
    s += norms[b];
    q += norms[b] * norms[b];
    k++;
  }
  const mean = k ? s / k : 0;
  return { mean, sd: k ? Math.sqrt(Math.max(0, q / k - mean * mean)) : 0 };
}

/**
 * The first index whose 32 bits differ between `now` and `kept` (-1: none; up to now.length), given
 * also as 8-byte words (nowWords: now's first 2 · nowWords.length entries, null when not 8-byte
 * aligned; keptWords: kept's, at least as many). Compared two at a time as doubles: equal doubles are
 * equal bits except zeros (+0 and -0), which are compared as 32-bit values (NaN is never equal).
 * `from`: the caller knows every index below it equal, so the compare starts there (at the word
 * that holds it).
 */
export function firstBitsChanged(now: Int32Array, kept: Int32Array, nowWords: Float64Array | null, keptWords: Float64Array, from = 0): number {
  let b = from > 0 ? from : 0;
  if (nowWords !== null) {
    const n = nowWords.length;
    for (let w = b >> 1; w < n; w++) {
      const x = nowWords[w];
      if (x !== keptWords[w] || x === 0) {
        const at = w << 1;
        if (now[at] !== kept[at]) return at;
        if (now[at + 1] !== kept[at + 1]) return at + 1;
      }
    }
    if (b < n << 1) b = n << 1;
  }
  for (; b < now.length; b++) if (kept[b] !== now[b]) return b;
  return -1;
}
