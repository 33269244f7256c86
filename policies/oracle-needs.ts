/**
 * The oracle's needed blocks of one trace step, per layer. Block b is needed at (t, l) when it is
 * among the topK heaviest blocks of the layer's row (mass descending, ties to the lower block), or,
 * with `pooled`, among the step's layers x topK blocks of largest attention share (mass / row total)
 * pooled over the layers (ties to the lower layer, then the lower block). With several KV groups a
 * layer's weight of block b is the mean over the groups of its share of each group's mass,
 * (1/G)·Σ_g m_g[b] / Σ m_g: recall is the mean over groups of each group's attended share, so the
 * heaviest blocks by this weight give any number of attended blocks the highest recall.
 *
 * Both choices are partial selections (quickselect), not sorts; the scratch arrays are reused.
 */
import type { TraceStep } from '../traces/format.js';
import { denseMass } from './dense-mass.js';
import { selectBottomKKeyed } from './quickselect.js';

export class StepNeeds {
  private m = new Float64Array(0);
  private g1 = new Float64Array(0);
  /** per layer x block: 1 where needed */
  private mark = new Uint8Array(0);
  /** per layer x block: 1 where some group of the layer lists the block (top-k rows) */
  private listed = new Uint8Array(0);
  private ids = new Int32Array(0);
  private keys = new Float64Array(0);
  /** listed keys, sorted to find a cut: one row's, the step's pooled */
  private sorted = new Float64Array(0);
  private poolSorted = new Float64Array(0);
  /** pooled keys: -(attention share), l * n + b */
  private negShare = new Float64Array(0);
  /** per layer: the key its unlisted blocks share in the pooled order, and how many there are */
  private groupKey = new Float64Array(0);
  private groupCount = new Int32Array(0);
  /** the same for one row's own cut */
  private readonly rowKey = new Float64Array(1);
  private readonly rowCount = new Int32Array(1);
  private out = new Int32Array(0);

  constructor(
    readonly layers: number,
    readonly kvGroups: number,
    readonly topK: number,
    readonly pooled: boolean,
  ) {}

  /**
   * The needed blocks of step `s`: `lists[l]` ascending (views of one reused buffer, valid until the
   * next call).
   */
  of(s: TraceStep): Int32Array[] {
    const L = this.layers;
    const G = this.kvGroups;
    const n = s.layers[0].nBlocks;
    if (this.m.length < n) {
      this.m = new Float64Array(n);
      this.g1 = new Float64Array(n);
    }
    if (this.mark.length < L * n) {
      this.mark = new Uint8Array(L * n);
      this.listed = new Uint8Array(L * n);
      this.ids = new Int32Array(L * n);
      this.keys = new Float64Array(L * n);
      this.sorted = new Float64Array(L * n);
      this.poolSorted = new Float64Array(L * n);
      this.negShare = new Float64Array(L * n);
      this.out = new Int32Array(L * n);
      this.groupKey = new Float64Array(L);
      this.groupCount = new Int32Array(L);
    }
    const { m, g1, mark, listed, ids, keys, negShare } = this;
    const K = this.topK;
    mark.fill(0, 0, L * n);
    listed.fill(0, 0, L * n);
    // with every row in top-k form, the unlisted blocks of a layer share one mass: cuts are found
    // from the listed masses and that one value instead of selecting over every block
    let allListed = true;
    const rowSorted = this.sorted;
    const poolSorted = this.poolSorted;
    let pp = 0;
    for (let l = 0; l < L; l++) {
      const base = l * n;
      const nl = s.layers[l * G].nBlocks;
      if (nl !== n) throw new Error(`step ${s.step}: layer ${l} has ${nl} blocks, layer 0 has ${n}`);
      if (G === 1) denseMass(s.layers[l], m);
      else {
        m.fill(0, 0, n);
        for (let g = 0; g < G; g++) {
          denseMass(s.layers[l * G + g], g1);
          let t = 0;
          for (let b = 0; b < n; b++) t += g1[b];
          if (t > 0) for (let b = 0; b < n; b++) m[b] += g1[b] / t / G;
        }
      }
      let total = 0;
      for (let b = 0; b < n; b++) total += m[b];
      // the listed blocks (union over the groups), each once: their keys for the row's cut and, when
      // pooled, for the step's
      let topk = true;
      let p = 0;
      for (let g = 0; g < G && topk; g++) {
        const idx = s.layers[l * G + g].idx;
        if (idx === null) topk = false;
        else
          for (let i = 0; i < idx.length; i++) {
            const b = idx[i];
            if (listed[base + b] === 1) continue;
            listed[base + b] = 1;
            rowSorted[p++] = -m[b];
            if (this.pooled) poolSorted[pp++] = -(total > 0 ? m[b] / total : 0);
          }
      }
      if (!topk) allListed = false;
      // the layer's unlisted blocks (all with the same mass, m[first])
      const unlisted = topk ? n - p : 0;
      let first = -1;
      if (unlisted > 0) for (let b = 0; first < 0; b++) if (listed[base + b] === 0) first = b;
      if (!topk || unlisted === 0 || K >= n) {
        for (let b = 0; b < n; b++) {
          ids[b] = b;
          keys[b] = -m[b];
        }
        const k = selectBottomKKeyed(ids, keys, n, K);
        for (let i = 0; i < k; i++) mark[base + ids[i]] = 1;
      } else if (K > 0) {
        rowSorted.subarray(0, p).sort();
        this.rowKey[0] = -m[first];
        this.rowCount[0] = unlisted;
        const v = nthKey(rowSorted, p, this.rowKey, this.rowCount, 1, K);
        // key -m[b] below v: m[b] above -v (negation is exact)
        let ties = K - countBelow(rowSorted, p, this.rowKey, this.rowCount, 1, v);
        const c = -v;
        for (let b = 0; b < n; b++) {
          const x = m[b];
          if (x > c) mark[base + b] = 1;
          else if (x === c && ties > 0) {
            mark[base + b] = 1;
            ties--;
          }
        }
      }
      if (this.pooled) {
        for (let b = 0; b < n; b++) negShare[base + b] = -(total > 0 ? m[b] / total : 0);
        this.groupKey[l] = first >= 0 ? negShare[base + first] : 0;
        this.groupCount[l] = unlisted;
      }
    }
    if (this.pooled) {
      const count = L * n;
      const N = L * K;
      if (!allListed || N >= count) {
        for (let i = 0; i < count; i++) {
          ids[i] = i;
          keys[i] = negShare[i];
        }
        const k = selectBottomKKeyed(ids, keys, count, N);
        for (let i = 0; i < k; i++) mark[ids[i]] = 1;
      } else if (N > 0) {
        poolSorted.subarray(0, pp).sort();
        // the layers' groups in key order (ties: the lower layer)
        const gk = new Float64Array(L);
        const gc = new Int32Array(L);
        const order = Array.from({ length: L }, (_, l) => l).sort((a, b) => this.groupKey[a] - this.groupKey[b] || a - b);
        for (let j = 0; j < L; j++) {
          gk[j] = this.groupKey[order[j]];
          gc[j] = this.groupCount[order[j]];
        }
        const v = nthKey(poolSorted, pp, gk, gc, L, N);
        let ties = N - countBelow(poolSorted, pp, gk, gc, L, v);
        for (let i = 0; i < count; i++) {
          const x = negShare[i];
          if (x < v) mark[i] = 1;
          else if (x === v && ties > 0) {
            mark[i] = 1;
            ties--;
          }
        }
      }
    }
    const lists: Int32Array[] = [];
    let o = 0;
    for (let l = 0; l < L; l++) {
      const from = o;
      for (let b = 0; b < n; b++) if (mark[l * n + b]) this.out[o++] = b;
      lists.push(this.out.subarray(from, o));
    }
    return lists;
  }
}

/**
 * The N-th smallest key (1-based) of a multiset: `sorted[0..p)` ascending, one each, and `gk[0..groups)`
 * ascending with gc[j] copies of gk[j]. N must not exceed the multiset's size.
 */
export function nthKey(sorted: Float64Array, p: number, gk: Float64Array, gc: Int32Array, groups: number, N: number): number {
  let cum = 0;
  let i = 0;
  let j = 0;
  while (true) {
    let v: number;
    if (j >= groups || (i < p && sorted[i] <= gk[j])) {
      if (i >= p) throw new Error(`nthKey: ${N} beyond the multiset (${cum})`);
      v = sorted[i++];
      cum++;
    } else {
      v = gk[j];
      cum += gc[j++];
    }
    if (cum >= N) return v;
  }
}

/** How many keys of the same multiset as nthKey's are below `v`. */
export function countBelow(sorted: Float64Array, p: number, gk: Float64Array, gc: Int32Array, groups: number, v: number): number {
  let below = 0;
  while (below < p && sorted[below] < v) below++;
  for (let j = 0; j < groups; j++) if (gk[j] < v) below += gc[j];
  return below;
}
