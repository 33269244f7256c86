/**
 * The blocks of each layer in HBM (tier 0), in ascending order, kept from one decision to the next so
 * that SynapseVM's victim scans read a layer's HBM blocks only, not every block. At each decision
 * sync() drops the listed blocks no longer in HBM and appends the blocks created since the last sync
 * that are in HBM; the list then holds distinct blocks all in HBM, and when there are as many as the
 * cache counts it is exactly the layer's HBM blocks; otherwise (a block entered HBM unseen) it is
 * rebuilt from the tiers. Between syncs the policy adds the blocks it promotes (add); the blocks it
 * demotes stay listed until the next sync, so readers check the tier (in HBM only when tierOf is 0).
 */
import type { CacheView } from './cache-view.js';

export class HbmBlocks {
  /** per layer: the listed blocks (rows of maxBlocks) and their count */
  readonly blocks: Int32Array;
  private readonly count: Int32Array;
  /** per layer: blocks below this were created before the last sync */
  private readonly syncedUpTo: Int32Array;

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
  ) {
    this.blocks = new Int32Array(layers * maxBlocks);
    this.count = new Int32Array(layers);
    this.syncedUpTo = new Int32Array(layers);
  }

  /** listed blocks of layer l (at blocks[l * maxBlocks ..]) */
  countOf(l: number): number {
    return this.count[l];
  }

  /** bring layer l's list up to date with the cache: exactly its HBM blocks, ascending */
  sync(cache: CacheView, l: number): void {
    const base = l * this.maxBlocks;
    const list = this.blocks;
    let n = 0;
    for (let i = 0; i < this.count[l]; i++) {
      const b = list[base + i];
      if (cache.tierOf(l, b) === 0) list[base + n++] = b;
    }
    const created = cache.created[l];
    for (let b = this.syncedUpTo[l]; b < created; b++) if (cache.tierOf(l, b) === 0) list[base + n++] = b;
    this.syncedUpTo[l] = created;
    if (n !== cache.countIn(l, 0)) {
      n = 0;
      for (let b = 0; b < created; b++) if (cache.tierOf(l, b) === 0) list[base + n++] = b;
    }
    this.count[l] = n;
  }

  /** list block b of layer l (just moved into HBM) in its place; no-op when listed or created since the last sync (the next sync lists it) */
  add(l: number, b: number): void {
    if (b >= this.syncedUpTo[l]) return;
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
    if (lo < n && list[base + lo] === b) return;
    list.copyWithin(base + lo + 1, base + lo, base + n);
    list[base + lo] = b;
    this.count[l] = n + 1;
  }
}
