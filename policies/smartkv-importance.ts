/**
 * SmartKV's importance: an exponential moving average of the attention each block receives, kept per
 * (layer, KV group, block): imp ← decay · imp + (1 − decay) · mass at every observation of the layer
 * (a block not attended at a step receives 0 there). A block's importance is the sum over its groups
 * (`sum`, the default) or the largest of them (`max`).
 *
 * Why the sum by default: a block holds the KV of every group, and its bits serve them all; the
 * attention-weighted error a block's width causes, summed over the groups, is its error times the sum
 * of the groups' masses, so ranking by the summed EMA puts the bits where the summed (equivalently
 * the group-mean) error falls fastest — the run's quant_error. The max instead protects a block that
 * carries most of one group's attention (a retrieval head's needle) when the other groups ignore it:
 * it bounds each group's worst case. On a generated 8-group trace the sum gave 0.4-24% lower
 * quant_error than the max at 2.5-4 average bits (docs/seed-smartkv.md).
 */
import type { Observation } from './policy.js';

export type GroupImportance = 'max' | 'sum';

export class GroupEma {
  /**
   * the EMAs: per (layer, group), a row of maxBlocks values, at (l * G + g) * M + slot. A layer's slot
   * of block b is b until a block of the layer is retired; from then on the layer's rows are packed
   * (slotOf, blockAt): its live slots 0..size-1 are its blocks not retired, in any order.
   */
  private readonly vals: Float64Array;
  /** per layer: its rows are packed */
  private readonly packed: Uint8Array;
  /** per (layer, block), packed layers: the block's slot, −1 once retired */
  private readonly slotOf: Int32Array;
  /** per (layer, slot), packed layers: the block at the slot */
  private readonly blockAt: Int32Array;
  /** per layer, packed: slots in use */
  private readonly size: Int32Array;
  /** per layer: blocks below this were covered by an observation (the others are still 0) */
  private readonly covered: Int32Array;

  constructor(
    readonly layers: number,
    readonly groups: number,
    readonly maxBlocks: number,
    readonly decay: number,
  ) {
    this.vals = new Float64Array(layers * groups * maxBlocks);
    this.packed = new Uint8Array(layers);
    this.slotOf = new Int32Array(layers * maxBlocks);
    this.blockAt = new Int32Array(layers * maxBlocks);
    this.size = new Int32Array(layers);
    this.covered = new Int32Array(layers);
  }

  /** every (layer, group, block) EMA at imp[(l * G + g) * M + b] (NaN for retired blocks; a copy once a block was retired) */
  get imp(): Float64Array {
    if (this.packed.every((p) => p === 0)) return this.vals;
    const out = new Float64Array(this.vals.length);
    for (let l = 0; l < this.layers; l++) {
      for (let g = 0; g < this.groups; g++) {
        for (let b = 0; b < this.maxBlocks; b++) out[(l * this.groups + g) * this.maxBlocks + b] = this.value(l, g, b);
      }
    }
    return out;
  }

  /**
   * Block b of layer l will not be read again: its importance is no longer kept (reads give NaN), and
   * the layer's updates skip it. The other blocks' importances are unchanged.
   */
  retire(l: number, b: number): void {
    const M = this.maxBlocks;
    const G = this.groups;
    const slotOf = this.slotOf;
    const blockAt = this.blockAt;
    const lb = l * M;
    if (!this.packed[l]) {
      this.packed[l] = 1;
      const n = this.covered[l];
      for (let x = 0; x < n; x++) slotOf[lb + x] = blockAt[lb + x] = x;
      for (let x = n; x < M; x++) slotOf[lb + x] = -1;
      this.size[l] = n;
    }
    if (b >= this.covered[l]) this.cover(l, b + 1);
    const s = slotOf[lb + b];
    if (s < 0) return;
    // the last slot moves into the freed one
    const last = --this.size[l];
    for (let g = 0; g < G; g++) this.vals[(l * G + g) * M + s] = this.vals[(l * G + g) * M + last];
    const moved = blockAt[lb + last];
    blockAt[lb + s] = moved;
    slotOf[lb + moved] = s;
    slotOf[lb + b] = -1;
  }

  /** packed layer l: slots (value 0) for its blocks from covered to n */
  private cover(l: number, n: number): void {
    const M = this.maxBlocks;
    const G = this.groups;
    const lb = l * M;
    for (let b = this.covered[l]; b < n; b++) {
      const s = this.size[l]++;
      this.slotOf[lb + b] = s;
      this.blockAt[lb + s] = b;
      for (let g = 0; g < G; g++) this.vals[(l * G + g) * M + s] = 0;
    }
    this.covered[l] = n;
  }

  /** one observation of a layer: every block of every group decays, attended ones gain their mass. O(G · nBlocks). */
  observe(obs: Observation): void {
    const l = obs.layer;
    const n = obs.nBlocks;
    if (this.packed[l]) {
      if (n > this.covered[l]) this.cover(l, n);
      this.observePacked(obs);
      return;
    }
    if (n > this.covered[l]) this.covered[l] = n;
    const d = this.decay;
    const w = 1 - d;
    const att = obs.attended;
    const G = this.groups;
    const M = this.maxBlocks;
    // every block attended (the usual case without skips): the products by att (by 1) are left out
    const all = obs.attendedCount === n;
    for (let g = 0; g < G; g++) {
      const row = G === 1 ? obs : obs.groups[g];
      const base = (l * G + g) * M;
      const imp = this.vals;
      const { idx, mass } = row;
      // (att is 0 or 1: x * att is x or +0, and adding +0 leaves a sum as it is, so no branch is needed)
      if (idx === null) {
        if (all) for (let b = 0; b < n; b++) imp[base + b] = d * imp[base + b] + w * mass[b];
        else for (let b = 0; b < n; b++) imp[base + b] = d * imp[base + b] + w * mass[b] * att[b];
        continue;
      }
      // sparse: every attended block gets the uniform share, listed ones their own mass instead
      const wu = w * row.uniform;
      if (all) for (let b = base, end = base + n; b < end; b++) imp[b] = d * imp[b] + wu;
      else for (let b = 0; b < n; b++) imp[base + b] = d * imp[base + b] + wu * att[b];
      for (let i = 0; i < idx.length; i++) {
        const b = idx[i];
        if (att[b]) imp[base + b] += w * mass[i] - wu;
      }
    }
  }

  /** observe() on a packed layer: the same updates of the blocks not retired, through their slots */
  private observePacked(obs: Observation): void {
    const l = obs.layer;
    const d = this.decay;
    const w = 1 - d;
    const n = obs.nBlocks;
    const att = obs.attended;
    const G = this.groups;
    const M = this.maxBlocks;
    const lb = l * M;
    const slotOf = this.slotOf;
    const blockAt = this.blockAt;
    const size = this.size[l];
    const imp = this.vals;
    // every slot holds a block below n, each attended: one pass over the slots
    const whole = obs.attendedCount === n && this.covered[l] === n;
    for (let g = 0; g < G; g++) {
      const row = G === 1 ? obs : obs.groups[g];
      const base = (l * G + g) * M;
      const { idx, mass } = row;
      if (idx === null) {
        for (let b = 0; b < n; b++) {
          const s = slotOf[lb + b];
          if (s >= 0) imp[base + s] = d * imp[base + s] + w * mass[b] * att[b];
        }
        continue;
      }
      const wu = w * row.uniform;
      if (whole) for (let s = base, end = base + size; s < end; s++) imp[s] = d * imp[s] + wu;
      else {
        for (let s = 0; s < size; s++) {
          const b = blockAt[lb + s];
          if (b < n) imp[base + s] = d * imp[base + s] + wu * att[b];
        }
      }
      for (let i = 0; i < idx.length; i++) {
        const b = idx[i];
        const s = b < this.covered[l] ? slotOf[lb + b] : -1;
        if (att[b] && s >= 0) imp[base + s] += w * mass[i] - wu;
      }
    }
  }

  /** the EMA of block b of layer l in group g (NaN once retired) */
  private value(l: number, g: number, b: number): number {
    const M = this.maxBlocks;
    if (!this.packed[l]) return this.vals[(l * this.groups + g) * M + b];
    if (b >= this.covered[l]) return 0;
    const s = this.slotOf[l * M + b];
    return s < 0 ? Number.NaN : this.vals[(l * this.groups + g) * M + s];
  }

  /** importance of one block: the max or the sum over its groups */
  of(l: number, b: number, mode: GroupImportance): number {
    const G = this.groups;
    const M = this.maxBlocks;
    if (this.packed[l]) {
      let s = this.value(l, 0, b);
      for (let g = 1; g < G; g++) {
        const x = this.value(l, g, b);
        s = mode === 'max' ? (x > s ? x : s) : s + x;
      }
      return s;
    }
    let base = l * G * M + b;
    let s = this.vals[base];
    for (let g = 1; g < G; g++) {
      base += M;
      const x = this.vals[base];
      s = mode === 'max' ? (x > s ? x : s) : s + x;
    }
    return s;
  }

  /** out[b] = of(l, b, mode) for b < n */
  scoresInto(l: number, n: number, mode: GroupImportance, out: Float64Array): void {
    if (this.packed[l]) {
      for (let b = 0; b < n; b++) out[b] = this.of(l, b, mode);
      return;
    }
    const G = this.groups;
    const M = this.maxBlocks;
    const base = l * G * M;
    out.set(this.vals.subarray(base, base + n));
    for (let g = 1; g < G; g++) {
      const o = base + g * M;
      if (mode === 'max') {
        for (let b = 0; b < n; b++) if (this.vals[o + b] > out[b]) out[b] = this.vals[o + b];
      } else {
        for (let b = 0; b < n; b++) out[b] += this.vals[o + b];
      }
    }
  }

  /** out[b] = of(l, b, mode) for the blocks ids[0..count) */
  scoresOf(l: number, ids: Int32Array, count: number, mode: GroupImportance, out: Float64Array): void {
    for (let i = 0; i < count; i++) out[ids[i]] = this.of(l, ids[i], mode);
  }
}
