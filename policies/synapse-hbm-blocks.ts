/**
 * The blocks of each layer in HBM (tier 0), in ascending order, and a mask of its blocks below HBM,
 * kept from one decision to the next so that SynapseVM reads a layer's HBM blocks only, not every
 * block, and never rebuilds the mask. The policy reports every move it makes (moved); at each
 * decision sync() adds the blocks created since the last sync (their tiers read), and checks the
 * cache's change count of the layer (CacheView.changesOf) against the creations and the reported
 * moves: when something else changed the layer (a move, a drop), both are rebuilt from the tiers.
 * After a sync and after every reported move, the list is exactly the layer's HBM blocks and the
 * mask is 1 exactly for its live blocks below HBM (0 for blocks created since the last sync).
 */
import type { CacheView } from './cache-view.js';

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

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
  ) {
    this.blocks = new Int32Array(layers * maxBlocks);
    this.count = new Int32Array(layers);
    this.syncedUpTo = new Int32Array(layers);
    this.below = new Uint8Array(layers * maxBlocks);
    this.belowRows = Array.from({ length: layers }, (_, l) => this.below.subarray(l * maxBlocks, (l + 1) * maxBlocks));
    this.seen = new Float64Array(layers);
    this.rebuilds = new Int32Array(layers);
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
    const created = cache.created[l];
    const from = this.syncedUpTo[l];
    if (cache.changesOf(l) !== this.seen[l] + (created - from)) {
      this.rebuild(cache, l);
      return;
    }
    const base = l * this.maxBlocks;
    let n = this.count[l];
    for (let b = from; b < created; b++) {
      const t = cache.tierOf(l, b);
      if (t === 0) this.blocks[base + n++] = b;
      else if (t > 0) this.below[base + b] = 1;
    }
    this.count[l] = n;
    this.syncedUpTo[l] = created;
    this.seen[l] = cache.changesOf(l);
    if (n !== cache.countIn(l, 0)) this.rebuild(cache, l);
  }

  /** the policy moved block b of layer l from tier `from` to tier `to` (an action that succeeded) */
  moved(l: number, b: number, from: number, to: number): void {
    this.seen[l]++;
    if (b >= this.syncedUpTo[l] || (from === 0) === (to === 0)) return;
    const base = l * this.maxBlocks;
    const list = this.blocks;
    const n = this.count[l];
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[base + mid] < b) lo = mid + 1;
      else hi = mid;
    }
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
    for (let b = 0; b < created; b++) {
      const t = cache.tierOf(l, b);
      if (t === 0) this.blocks[base + n++] = b;
      this.below[base + b] = t > 0 ? 1 : 0;
    }
    this.count[l] = n;
    this.syncedUpTo[l] = created;
    this.seen[l] = cache.changesOf(l);
    this.rebuilds[l]++;
  }
}
