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
  private ids = new Int32Array(0);
  private keys = new Float64Array(0);
  /** pooled shares, l * n + b */
  private share = new Float64Array(0);
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
      this.ids = new Int32Array(L * n);
      this.keys = new Float64Array(L * n);
      this.share = new Float64Array(L * n);
      this.out = new Int32Array(L * n);
    }
    const { m, g1, mark, ids, keys, share } = this;
    mark.fill(0, 0, L * n);
    for (let l = 0; l < L; l++) {
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
      for (let b = 0; b < n; b++) {
        ids[b] = b;
        keys[b] = -m[b];
      }
      const k = selectBottomKKeyed(ids, keys, n, this.topK);
      for (let i = 0; i < k; i++) mark[l * n + ids[i]] = 1;
      if (this.pooled) for (let b = 0; b < n; b++) share[l * n + b] = total > 0 ? m[b] / total : 0;
    }
    if (this.pooled) {
      const count = L * n;
      for (let i = 0; i < count; i++) {
        ids[i] = i;
        keys[i] = -share[i];
      }
      const k = selectBottomKKeyed(ids, keys, count, L * this.topK);
      for (let i = 0; i < k; i++) mark[ids[i]] = 1;
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
