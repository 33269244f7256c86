/**
 * SynapseVM's outlier bound of a layer: mean + k·σ of the key norms of its live blocks (a block
 * whose norm exceeds it is an outlier; Infinity with fewer than two live blocks). The sums run over
 * the blocks in order; while every created block is live, the sums over a layer's blocks but the
 * last are kept with a copy of those norms, and a later call whose norms still start with that copy
 * (compared byte for byte) continues the same sums from there: the same additions in the same
 * order, so the same bound as summing from the first block. Made with `noted`, the caller hands every
 * decision's view to note() (PolicyView.keyNormsFrom: the first block whose norms may have changed
 * since the layer's previous decision), and the byte compare is skipped when no block below the kept
 * count may have changed since the copy was taken.
 */
import { Buffer } from 'node:buffer';
import type { PolicyView } from './policy.js';

export class OutlierBound {
  /** per layer: the norms array the kept sums were taken from, its copy (bytes) and the blocks summed */
  private readonly source: (Float32Array | null)[];
  private readonly sourceBytes: (Buffer | null)[];
  private readonly copy: Buffer[];
  private readonly upTo: Int32Array;
  private readonly sum: Float64Array;
  private readonly sq: Float64Array;
  /** per layer (with `noted`): the blocks below this kept their norms since the copy was taken (0: unknown) */
  private readonly clean: Int32Array;

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
    /** true when note() sees every decision's view (of every layer) before of() may be asked for it */
    readonly noted = false,
  ) {
    this.source = Array.from({ length: layers }, () => null);
    this.sourceBytes = Array.from({ length: layers }, () => null);
    this.copy = Array.from({ length: layers }, () => Buffer.alloc(maxBlocks * 4));
    this.upTo = new Int32Array(layers);
    this.sum = new Float64Array(layers);
    this.sq = new Float64Array(layers);
    this.clean = new Int32Array(layers);
  }

  /** a decision of layer v.layer (with `noted`: every one, before of() for it) */
  note(v: PolicyView): void {
    const from = v.keyNormsFrom ?? 0;
    if (from < this.clean[v.layer]) this.clean[v.layer] = from;
  }

  /** the bound of the deciding layer of `v` with k = `sigmas` */
  of(v: PolicyView, sigmas: number): number {
    const l = v.layer;
    const created = v.cache.created[l];
    const norms = v.keyNorms;
    let n = 0;
    let sum = 0;
    let sq = 0;
    if (v.cache.live(l) === created) {
      // every created block is live: continue the kept sums where the norms they read are unchanged
      let from = this.upTo[l];
      if (from > created || !this.same(l, norms, from)) from = 0;
      if (from > 0) {
        sum = this.sum[l];
        sq = this.sq[l];
      }
      const keep = created - 1;
      for (let b = from; b < created; b++) {
        if (b === keep) this.keep(l, norms, b, sum, sq, from);
        const x = norms[b];
        sum += x;
        sq += x * x;
      }
      n = created;
    } else {
      for (let b = 0; b < created; b++) {
        if (v.cache.tierOf(l, b) < 0) continue;
        const x = norms[b];
        n++;
        sum += x;
        sq += x * x;
      }
    }
    if (n < 2) return Infinity;
    const mean = sum / n;
    const sd = Math.sqrt(Math.max(0, sq / n - mean * mean));
    return mean + sigmas * sd;
  }

  /** true when layer l's kept sums came from `norms` and its first `count` norms equal the copy */
  private same(l: number, norms: Float32Array, count: number): boolean {
    if (count === 0) return true;
    if (this.source[l] !== norms) return false;
    if (this.clean[l] >= count) return true;
    return this.sourceBytes[l]!.compare(this.copy[l], 0, count * 4, 0, count * 4) === 0;
  }

  /** keep the sums over layer l's first `count` blocks (the copy gets the norms from `from` on) */
  private keep(l: number, norms: Float32Array, count: number, sum: number, sq: number, from: number): void {
    if (this.source[l] !== norms) {
      this.source[l] = norms;
      this.sourceBytes[l] = Buffer.from(norms.buffer, norms.byteOffset, norms.byteLength);
    }
    this.sourceBytes[l]!.copy(this.copy[l], from * 4, from * 4, count * 4);
    this.upTo[l] = count;
    // the copy holds the norms as they are now
    this.clean[l] = this.noted ? this.maxBlocks : 0;
    this.sum[l] = sum;
    this.sq[l] = sq;
  }
}
