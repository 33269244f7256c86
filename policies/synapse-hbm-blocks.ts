/**
 * The blocks of each layer in HBM (tier 0), in ascending order, and a mask of its blocks below HBM,
 * kept from one decision to the next so that SynapseVM reads a layer's HBM blocks only, not every
 * block, and never rebuilds the mask. The policy reports every move it makes (moved); at each
 * decision sync() adds the blocks created since the last sync (their tiers read), and checks the
 * cache's change count of the layer (CacheView.changesOf) against the creations and the reported
 * moves: when something else changed the layer (a move, a drop), both are rebuilt from the tiers.
 * After a sync and after every reported move, the list is exactly the layer's HBM blocks and the
 * mask is 1 exactly for its live blocks below HBM (0 for blocks created since the last sync).
 * Made with a `second` tier, the blocks of that tier are listed as well (ascending: `secondBlocks`),
 * kept the same way, for a scan of that tier's blocks.
 * `tiers` mirrors the cache's tier of every block created before the last sync (valid as the list),
 * for scans that read many blocks' tiers without a call per block.
 * Between defer() and settle() a layer's blocks leaving HBM are only marked, and blocks entering the
 * second tier only noted, and settle() takes the ones out of the list in one pass and merges the
 * others into the second list (for a decision that moves many blocks down: no shift of the lists per
 * block); the lists are read only after settle().
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
  /** per layer, with a second tier: its blocks (rows of maxBlocks, ascending) and their count */
  readonly secondBlocks: Int32Array;
  private readonly secondCount: Int32Array;
  /** the blocks that entered the second tier since defer() (unsorted), and their count */
  private readonly entering: Int32Array;
  private nEntering = 0;

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
    this.secondBlocks = new Int32Array(second > 0 ? layers * maxBlocks : 0);
    this.secondCount = new Int32Array(layers);
    this.entering = new Int32Array(second > 0 ? maxBlocks : 0);
  }

  /** listed blocks of layer l in the second tier (at secondBlocks[l * maxBlocks ..]) */
  secondOf(l: number): number {
    return this.secondCount[l];
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
    if (this.nEntering > 0) this.mergeEntering(l);
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

  /** merge the blocks that entered the second tier of layer l (deferred) into its list */
  private mergeEntering(l: number): void {
    const m = this.nEntering;
    this.nEntering = 0;
    const add = this.entering.subarray(0, m).sort();
    const list = this.secondBlocks;
    const base = l * this.maxBlocks;
    const n = this.secondCount[l];
    // from the end down: the merged list ends at base + n + m
    let i = n - 1;
    let j = m - 1;
    for (let k = n + m - 1; j >= 0; k--) {
      if (i >= 0 && list[base + i] > add[j]) list[base + k] = list[base + i--];
      else list[base + k] = add[j--];
    }
    this.secondCount[l] = n + m;
  }

  /** take block b out of layer l's second list, or put it in (ascending) */
  private secondMove(l: number, b: number, into: boolean): void {
    const base = l * this.maxBlocks;
    const list = this.secondBlocks;
    const n = this.secondCount[l];
    const lo = lowerBound(list, base, n, b);
    if (into) {
      list.copyWithin(base + lo + 1, base + lo, base + n);
      list[base + lo] = b;
      this.secondCount[l] = n + 1;
    } else {
      list.copyWithin(base + lo, base + lo + 1, base + n);
      this.secondCount[l] = n - 1;
    }
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
    let n2 = this.secondCount[l];
    const second = this.second;
    for (let b = from; b < created; b++) {
      const t = cache.tierOf(l, b);
      this.tiers[base + b] = t;
      if (t === 0) this.blocks[base + n++] = b;
      else if (t > 0) {
        this.below[base + b] = 1;
        if (t === second) this.secondBlocks[base + n2++] = b;
      }
    }
    this.count[l] = n;
    this.secondCount[l] = n2;
    this.syncedUpTo[l] = created;
    this.seen[l] = cache.changesOf(l);
    if (n !== cache.countIn(l, 0) || (second > 0 && n2 !== cache.countIn(l, second))) this.rebuild(cache, l);
  }

  /** the policy moved block b of layer l from tier `from` to tier `to` (an action that succeeded) */
  moved(l: number, b: number, from: number, to: number): void {
    this.seen[l]++;
    if (b >= this.syncedUpTo[l]) return;
    const base = l * this.maxBlocks;
    this.tiers[base + b] = to;
    const second = this.second;
    if (second > 0 && (from === second) !== (to === second)) {
      if (this.deferred === l && to === second) this.entering[this.nEntering++] = b;
      else {
        // (a block leaving the second tier: the entering ones are merged first)
        if (this.deferred === l && this.nEntering > 0) this.mergeEntering(l);
        this.secondMove(l, b, to === second);
      }
    }
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
    let n2 = 0;
    for (let b = 0; b < created; b++) {
      const t = cache.tierOf(l, b);
      this.tiers[base + b] = t;
      if (t === 0) this.blocks[base + n++] = b;
      else if (t === this.second) this.secondBlocks[base + n2++] = b;
      this.below[base + b] = t > 0 ? 1 : 0;
    }
    this.count[l] = n;
    this.secondCount[l] = n2;
    this.syncedUpTo[l] = created;
    this.seen[l] = cache.changesOf(l);
    this.rebuilds[l]++;
  }
}
