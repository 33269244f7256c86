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
 *
 * The decay of the blocks not listed in a sparse observation is held back until the layer's values are
 * read (up to 32 observations): then it is applied to eight blocks at a time, whose chains of multiply
 * and add run side by side, where a pass over every block at every observation loaded and stored each
 * value once per observation. The values are the same to the bit: each block goes through the same
 * operations in the same order.
 */
import type { Observation } from './policy.js';

export type GroupImportance = 'max' | 'sum';

/** observations whose decays a layer may hold back (GroupEma's pendShare) */
const PENDING = 32;

/** settle()'s scratch: the blocks that need every held-back decay (from 0), those that need some (from maxBlocks) */
let settleList = new Int32Array(0);

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
  /**
   * Decays not yet applied (unpacked layers, sparse rows with every block attended): per layer, the
   * observations pendStart..pendEnd − 1 (counted from the layer's first) gave every block of every
   * group imp ← decay · imp + uniformShare, their shares (w · uniform) at pendShare[(l * G + g) *
   * PENDING + o − pendStart]. A block's value in vals holds every observation below max(upTo, pendStart),
   * upTo per (layer, group, block); the others are applied, in order and with the same arithmetic,
   * when the layer's values are read (settle) or the block is listed.
   */
  private readonly pendShare: Float64Array;
  private readonly pendStart: Int32Array;
  private readonly pendEnd: Int32Array;
  private readonly upTo: Int32Array;

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
    this.pendShare = new Float64Array(layers * groups * PENDING);
    this.pendStart = new Int32Array(layers);
    this.pendEnd = new Int32Array(layers);
    this.upTo = new Int32Array(layers * groups * maxBlocks);
  }

  /**
   * every (layer, group, block) EMA at imp[(l * G + g) * M + b] (NaN for retired blocks; a copy once a
   * block was retired). Reading it first applies every layer's held-back decay.
   */
  get imp(): Float64Array {
    for (let l = 0; l < this.layers; l++) this.settle(l);
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
      this.settle(l);
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
    if (this.holdBack(obs)) return;
    this.settle(l);
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

  /**
   * observe() of an unpacked layer whose rows are all sparse, every block attended, none of its
   * blocks beyond the observation's and every listed block below nBlocks: the decay of every block is
   * held back (pendShare), the listed blocks are brought up to this observation and take their own
   * mass. Returns false, having changed nothing, for any other observation.
   */
  private holdBack(obs: Observation): boolean {
    const l = obs.layer;
    const n = obs.nBlocks;
    const G = this.groups;
    if (obs.attendedCount !== n || n < this.covered[l]) return false;
    for (let g = 0; g < G; g++) {
      const row = G === 1 ? obs : obs.groups[g];
      const idx = row.idx;
      if (idx === null) return false;
      for (let i = 0; i < idx.length; i++) if (!(idx[i] < n)) return false;
    }
    if (this.pendEnd[l] - this.pendStart[l] === PENDING) this.settle(l);
    const M = this.maxBlocks;
    const end = this.pendEnd[l];
    // blocks seen first now: 0 until this observation
    const from = this.covered[l];
    if (n > from) {
      for (let g = 0; g < G; g++) this.upTo.fill(end, (l * G + g) * M + from, (l * G + g) * M + n);
      this.covered[l] = n;
    }
    const w = 1 - this.decay;
    const at = end - this.pendStart[l];
    for (let g = 0; g < G; g++) this.pendShare[(l * G + g) * PENDING + at] = w * (G === 1 ? obs : obs.groups[g]).uniform;
    this.pendEnd[l] = end + 1;
    const att = obs.attended;
    const imp = this.vals;
    const upTo = this.upTo;
    const share = this.pendShare;
    const d = this.decay;
    const start = this.pendStart[l];
    const next = end + 1;
    for (let g = 0; g < G; g++) {
      const row = G === 1 ? obs : obs.groups[g];
      const base = (l * G + g) * M;
      const idx = row.idx!;
      const mass = row.mass;
      const p = (l * G + g) * PENDING - start;
      const wu = share[p + end];
      // a listed block: its decays held back applied (usually this observation's only: it was listed at the one before), then its own mass
      for (let i = 0; i < idx.length; i++) {
        const b = idx[i];
        if (!att[b]) continue;
        const k = base + b;
        const from = upTo[k] > start ? upTo[k] : start;
        let x = imp[k];
        if (from === end) x = d * x + wu;
        else for (let o = from; o < next; o++) x = d * x + share[p + o];
        imp[k] = x + (w * mass[i] - wu);
        upTo[k] = next;
      }
    }
    return true;
  }

  /**
   * Layer l's decays held back, applied to every block: the blocks not listed since they were held
   * back eight at a time (eight independent chains of the same operations), the others one by one.
   */
  private settle(l: number): void {
    const start = this.pendStart[l];
    const end = this.pendEnd[l];
    if (start === end) return;
    const G = this.groups;
    const M = this.maxBlocks;
    const n = this.covered[l];
    const d = this.decay;
    const share = this.pendShare;
    const imp = this.vals;
    const upTo = this.upTo;
    if (settleList.length < 2 * M) settleList = new Int32Array(2 * M);
    const list = settleList;
    const P = end - start;
    for (let g = 0; g < G; g++) {
      const base = (l * G + g) * M;
      const p = (l * G + g) * PENDING;
      // the blocks that need every held-back decay (from 0 up), and those that need some (from M up),
      // listed without a branch on each
      let c = 0;
      let c2 = M;
      for (let b = 0; b < n; b++) {
        const u = upTo[base + b];
        list[c] = b;
        c += +(u <= start);
        list[c2] = b;
        c2 += +(u > start) & +(u < end);
      }
      let q = 0;
      for (; q + 8 <= c; q += 8) {
        const i0 = base + list[q];
        const i1 = base + list[q + 1];
        const i2 = base + list[q + 2];
        const i3 = base + list[q + 3];
        const i4 = base + list[q + 4];
        const i5 = base + list[q + 5];
        const i6 = base + list[q + 6];
        const i7 = base + list[q + 7];
        let x0 = imp[i0];
        let x1 = imp[i1];
        let x2 = imp[i2];
        let x3 = imp[i3];
        let x4 = imp[i4];
        let x5 = imp[i5];
        let x6 = imp[i6];
        let x7 = imp[i7];
        for (let o = 0; o < P; o++) {
          const u = share[p + o];
          x0 = d * x0 + u;
          x1 = d * x1 + u;
          x2 = d * x2 + u;
          x3 = d * x3 + u;
          x4 = d * x4 + u;
          x5 = d * x5 + u;
          x6 = d * x6 + u;
          x7 = d * x7 + u;
        }
        imp[i0] = x0;
        imp[i1] = x1;
        imp[i2] = x2;
        imp[i3] = x3;
        imp[i4] = x4;
        imp[i5] = x5;
        imp[i6] = x6;
        imp[i7] = x7;
      }
      for (; q < c; q++) {
        const i = base + list[q];
        let x = imp[i];
        for (let o = 0; o < P; o++) x = d * x + share[p + o];
        imp[i] = x;
      }
      // the blocks listed since: from their own point on
      for (let q2 = M; q2 < c2; q2++) {
        const i = base + list[q2];
        let x = imp[i];
        for (let o = upTo[i]; o < end; o++) x = d * x + share[p + o - start];
        imp[i] = x;
      }
    }
    // (every block is now up to end: upTo below the new start reads as the start)
    this.pendStart[l] = end;
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
    this.settle(l);
    const M = this.maxBlocks;
    if (!this.packed[l]) return this.vals[(l * this.groups + g) * M + b];
    if (b >= this.covered[l]) return 0;
    const s = this.slotOf[l * M + b];
    return s < 0 ? Number.NaN : this.vals[(l * this.groups + g) * M + s];
  }

  /** importance of one block: the max or the sum over its groups */
  of(l: number, b: number, mode: GroupImportance): number {
    this.settle(l);
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
    this.settle(l);
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
    this.settle(l);
    for (let i = 0; i < count; i++) out[ids[i]] = this.of(l, ids[i], mode);
  }
}
