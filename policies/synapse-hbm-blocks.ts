/**
 * The blocks of each layer in HBM (tier 0), in ascending order, and a mask of its blocks below HBM,
 * kept from one decision to the next so that SynapseVM reads a layer's HBM blocks only, not every
 * block, and never rebuilds the mask. The policy reports every move it makes (moved); at each
 * decision sync() adds the blocks created since the last sync (their tiers read), and checks the
 * cache's change count of the layer (CacheView.changesOf) against the creations and the reported
 * moves: when something else changed the layer (a move, a drop), both are rebuilt from the tiers.
 * After a sync and after every reported move, the list is exactly the layer's HBM blocks and the
 * mask is 1 exactly for its live blocks below HBM (0 for blocks created since the last sync).
 * Made with a `second` tier, the blocks of that tier are kept as well, as a bitset (one bit per
 * block: a move sets or clears one bit), listed ascending on demand (listSecond), for a scan of that
 * tier's blocks.
 * `tiers` mirrors the cache's tier of every block created before the last sync (valid as the list),
 * for scans that read many blocks' tiers without a call per block.
 * Between defer() and settle() a layer's blocks leaving HBM are only marked, and settle() takes them
 * out of the list in one pass (for a decision that moves many blocks down: no shift of the list per
 * block); the list is read only after settle().
 */
import type { CacheView } from './cache-view.js';
import { lowerBound } from '../common/lower-bound.js';

export class HbmBlocks {
  /** per layer: the listed blocks (rows of maxBlocks) and their count */
  readonly blocks: Int32Array;
  private readonly count: Int32Array;
  /** per layer: blocks below this were created before the last sync */
  private readonly syncedUpTo: Int32Array;
  /** per (layer, block): 1 for a live block below HBM (blocks created before the last sync) */
  private readonly below: Uint8Array;
  private readonly belowRows: Uint8Array[];
  /** per layer: the cache's change count the list and the mask account for */
  private readonly seen: Float64Array;
  /** per layer: rebuilds from the tiers so far */
  readonly rebuilds: Int32Array;
  /** per (layer, block): the block's tier (CacheView.tierOf; −1: dropped) for blocks created before the last sync */
  readonly tiers: Int8Array;
  /** the layer whose removals are deferred (−1: none), and per block of it: 1 when it left the list */
  private deferred = -1;
  private leaving = 0;
  private readonly left: Uint8Array;
  /** per layer, with a second tier: its blocks as bits (rows of `words` 32-bit words; block b at bit b % 32 of word b >> 5), and their count */
  private readonly secondBits: Int32Array;
  private readonly words: number;
  private readonly secondCount: Int32Array;

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
    /** a tier > 0 whose blocks are listed too (−1: none) */
    readonly second = -1,
  ) {
    this.blocks = new Int32Array(layers * maxBlocks);
    this.count = new Int32Array(layers);
    this.syncedUpTo = new Int32Array(layers);
    this.below = new Uint8Array(layers * maxBlocks);
    this.belowRows = Array.from({ length: layers }, (_, l) => this.below.subarray(l * maxBlocks, (l + 1) * maxBlocks));
    this.seen = new Float64Array(layers);
    this.rebuilds = new Int32Array(layers);
    this.left = new Uint8Array(maxBlocks);
    this.tiers = new Int8Array(layers * maxBlocks).fill(-1);
    this.words = (maxBlocks + 31) >> 5;
    this.secondBits = new Int32Array(second > 0 ? layers * this.words : 0);
    this.secondCount = new Int32Array(layers);
  }

  /** blocks of layer l in the second tier */
  secondOf(l: number): number {
    return this.secondCount[l];
  }

  /** layer l's blocks in the second tier, ascending, into out[0..]; their count */
  listSecond(l: number, out: Int32Array): number {
    const bits = this.secondBits;
    const W = this.words;
    const base = l * W;
    let n = 0;
    for (let w = 0; w < W; w++) {
      let x = bits[base + w];
      while (x !== 0) {
        const low = x & -x;
        out[n++] = (w << 5) + 31 - Math.clz32(low);
        x ^= low;
      }
    }
    return n;
  }

  /** set (into) or clear block b's bit in layer l's second-tier bitset, and count it */
  private secondMark(l: number, b: number, into: boolean): void {
    const i = l * this.words + (b >> 5);
    const bit = 1 << (b & 31);
    if (into) {
      this.secondBits[i] |= bit;
      this.secondCount[l]++;
    } else {
      this.secondBits[i] &= ~bit;
      this.secondCount[l]--;
    }
  }

  /** from now until settle(l), layer l's blocks leaving HBM are marked, not taken out of the list */
  defer(l: number): void {
    this.settleDeferred();
    this.deferred = l;
  }

  /** take the marked blocks of layer l out of its list (in one pass) and end defer() */
  settle(l: number): void {
    if (this.deferred === l) this.settleDeferred();
  }

  private settleDeferred(): void {
    const l = this.deferred;
    this.deferred = -1;
    if (l < 0) return;
    if (this.leaving === 0) return;
    const base = l * this.maxBlocks;
    const list = this.blocks;
    const left = this.left;
    const n = this.count[l];
    let k = 0;
    for (let i = 0; i < n; i++) {
      const b = list[base + i];
      if (left[b] === 1) left[b] = 0;
      else list[base + k++] = b;
    }
    this.count[l] = k;
    this.leaving = 0;
  }

  /** listed blocks of layer l (at blocks[l * maxBlocks ..]) */
  countOf(l: number): number {
    return this.count[l];
  }

  /** layer l's mask of live blocks below HBM (a view of maxBlocks entries, valid as the list) */
  belowOf(l: number): Uint8Array {
    return this.belowRows[l];
  }

  /** bring layer l's list and mask up to date with the cache */
  sync(cache: CacheView, l: number): void {
    this.settleDeferred();
    const created = cache.created[l];
    const from = this.syncedUpTo[l];
    if (cache.changesOf(l) !== this.seen[l] + (created - from)) {
      this.rebuild(cache, l);
      return;
    }
    const base = l * this.maxBlocks;
    let n = this.count[l];
    const second = this.second;
    for (let b = from; b < created; b++) {
      const t = cache.tierOf(l, b);
      this.tiers[base + b] = t;
      if (t === 0) this.blocks[base + n++] = b;
      else if (t > 0) {
        this.below[base + b] = 1;
        if (t === second) this.secondMark(l, b, true);
      }
    }
    this.count[l] = n;
    this.syncedUpTo[l] = created;
    this.seen[l] = cache.changesOf(l);
    if (n !== cache.countIn(l, 0) || (second > 0 && this.secondCount[l] !== cache.countIn(l, second))) this.rebuild(cache, l);
  }

  /** the policy moved block b of layer l from tier `from` to tier `to` (an action that succeeded) */
  moved(l: number, b: number, from: number, to: number): void {
    this.seen[l]++;
    if (b >= this.syncedUpTo[l]) return;
    const base = l * this.maxBlocks;
    this.tiers[base + b] = to;
    const second = this.second;
    if (second > 0 && (from === second) !== (to === second)) this.secondMark(l, b, to === second);
    if ((from === 0) === (to === 0)) return;
    if (this.deferred === l) {
      if (to !== 0) {
        this.left[b] = 1;
        this.leaving++;
        this.below[base + b] = to > 0 ? 1 : 0;
        return;
      }
      // a block entering: the list is settled first (the search needs it)
      this.settleDeferred();
    }
    const list = this.blocks;
    const n = this.count[l];
    const lo = lowerBound(list, base, n, b);
    if (to === 0) {
      list.copyWithin(base + lo + 1, base + lo, base + n);
      list[base + lo] = b;
      this.count[l] = n + 1;
      this.below[base + b] = 0;
    } else {
      list.copyWithin(base + lo, base + lo + 1, base + n);
      this.count[l] = n - 1;
      this.below[base + b] = to > 0 ? 1 : 0;
    }
  }

  private rebuild(cache: CacheView, l: number): void {
    const base = l * this.maxBlocks;
    const created = cache.created[l];
    let n = 0;
    if (this.second > 0) {
      this.secondBits.fill(0, l * this.words, (l + 1) * this.words);
      this.secondCount[l] = 0;
    }
    for (let b = 0; b < created; b++) {
      const t = cache.tierOf(l, b);
      this.tiers[base + b] = t;
      if (t === 0) this.blocks[base + n++] = b;
      else if (t === this.second) this.secondMark(l, b, true);
      this.below[base + b] = t > 0 ? 1 : 0;
    }
    this.count[l] = n;
    this.syncedUpTo[l] = created;
    this.seen[l] = cache.changesOf(l);
    this.rebuilds[l]++;
  }
}
