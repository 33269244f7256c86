/**
 * A layer's attention as the exact mean over its KV-head groups. A trace step holds one row per
 * (layer, group), `row = layer * kv_groups + group`; a layer's KV block holds every group's keys and
 * values, so placement is per layer and a per-layer policy decides from the group mean:
 *   mass_b = (1/G) · Σ_g (group g's listed mass on b, else group g's uniform share).
 * Dense rows give a dense mean. Top-k rows give the union of the groups' listed blocks, ascending,
 * each with its mean, and every other block the mean of the groups' uniform shares. With one group
 * the row itself is the mean (no copy).
 */
import type { LayerAttention } from '../traces/format.js';

/** The even share of each unlisted block of a row (0 when every block is listed). */
export function rowUniform(la: LayerAttention): number {
  const listed = la.idx === null ? la.nBlocks : la.idx.length;
  const unlisted = la.nBlocks - listed;
  return unlisted > 0 ? la.remainder / unlisted : 0;
}

export class GroupMean {
  private readonly mass: Float32Array;
  private readonly idx: Uint32Array;
  /** per block: the union slot it holds at the current stamp */
  private readonly slot: Int32Array;
  private readonly stampOf: Int32Array;
  /** per union slot: listed mass so far and the uniform shares of the groups that listed it */
  private readonly acc: Float64Array;
  private readonly listedU: Float64Array;
  /** union blocks in first-seen order (slot order), then sorted */
  private readonly order: Uint32Array;
  private stamp = 0;

  constructor(maxBlocks: number) {
    this.mass = new Float32Array(maxBlocks);
    this.idx = new Uint32Array(maxBlocks);
    this.slot = new Int32Array(maxBlocks);
    this.stampOf = new Int32Array(maxBlocks);
    this.acc = new Float64Array(maxBlocks);
    this.listedU = new Float64Array(maxBlocks);
    this.order = new Uint32Array(maxBlocks);
  }

  /**
   * The mean of rows[from .. from + G) (one layer's groups, all of nBlocks blocks). The arrays it
   * returns are reused: valid until the next call.
   */
  of(rows: readonly LayerAttention[], from: number, G: number, out: { idx: Uint32Array | null; mass: Float32Array; uniform: number }): void {
    const first = rows[from];
    const n = first.nBlocks;
    if (G === 1) {
      out.idx = first.idx;
      out.mass = first.mass;
      out.uniform = rowUniform(first);
      return;
    }
    if (first.idx === null) {
      const m = this.mass;
      for (let b = 0; b < n; b++) {
        let s = 0;
        for (let g = 0; g < G; g++) s += rows[from + g].mass[b];
        m[b] = s / G;
      }
      out.idx = null;
      out.mass = m.subarray(0, n);
      out.uniform = 0;
      return;
    }
    const stamp = ++this.stamp;
    const { slot, stampOf, acc, listedU, order } = this;
    let k = 0;
    let sumU = 0;
    for (let g = 0; g < G; g++) {
      const la = rows[from + g];
      const u = rowUniform(la);
      sumU += u;
      const gi = la.idx!;
      for (let i = 0; i < gi.length; i++) {
        const b = gi[i];
        let at: number;
        if (stampOf[b] !== stamp) {
          stampOf[b] = stamp;
          at = slot[b] = k++;
          order[at] = b;
          acc[at] = 0;
          listedU[at] = 0;
        } else at = slot[b];
        acc[at] += la.mass[i];
        listedU[at] += u;
      }
    }
    // ascending block order (canonical, as the generator writes); each listed block's mean is
    // (1/G) · (its listed masses + the uniform shares of the groups that did not list it)
    const sorted = order.subarray(0, k).sort();
    const { idx, mass } = this;
    for (let j = 0; j < k; j++) {
      const b = sorted[j];
      const at = slot[b];
      idx[j] = b;
      mass[j] = (acc[at] + (sumU - listedU[at])) / G;
    }
    out.idx = idx.subarray(0, k);
    out.mass = this.mass.subarray(0, k);
    // (when the union lists every block there is no other block to carry a share)
    out.uniform = k < n ? sumU / G : 0;
  }
}
