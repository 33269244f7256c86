/**
 * The blocks of each layer in HBM (tier 0), in ascending order, and a mask of its blocks below HBM,
 * kept from one decision to the next so that SynapseVM reads a layer's HBM blocks only, not every
 * block, and never rebuilds the mask. The policy reports every move it makes (moved); at each
 * decision sync() adds the blocks created since the last sync (their tiers read), and checks the
 * cache's change count of the layer (CacheView.changesOf) against the creations and the reported
 * moves: when something else changed the layer (a move, a drop), both are rebuilt from the tiers.
 * After a sync and after every reported move, the list (list(l)) is exactly the layer's HBM blocks and
 * the mask is 1 exactly for its live blocks below HBM (0 for blocks created since the last sync).
 * A reported move into or out of HBM updates the count, the mask and the tier mirror; the list itself
 * is written again from the mirror (one pass in block order) when it is next read, as a layer's list
 * is read at few of its decisions and moves are many.
 * Made with a `second` tier, the blocks of that tier are kept as well, as a bitset (one bit per
 * block: a move sets or clears one bit), listed ascending on demand (listSecond), for a scan of that
 * tier's blocks.
 * `tiers` mirrors the cache's tier of every block created before the last sync (valid as the list),
 * for scans that read many blocks' tiers without a call per block.
 */
import type { CacheView } from './cache-view.js';

export class HbmBlocks {
  /** per layer: the listed blocks (rows of maxBlocks; read through list()) and their count */
  private readonly blocks: Int32Array;
  private readonly count: Int32Array;
  /** per layer: 1 when a move into or out of HBM was reported since its row was last written */
  private readonly stale: Uint8Array;
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
    this.stale = new Uint8Array(layers);
    this.syncedUpTo = new Int32Array(layers);
    this.below = new Uint8Array(layers * maxBlocks);
    this.belowRows = Array.from({ length: layers }, (_, l) => this.below.subarray(l * maxBlocks, (l + 1) * maxBlocks));
    this.seen = new Float64Array(layers);
    this.rebuilds = new Int32Array(layers);
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

  /** listed blocks of layer l (at list(l)[l * maxBlocks ..]) */
  countOf(l: number): number {
    return this.count[l];
  }

  /** the lists (rows of maxBlocks), layer l's up to date: its HBM blocks ascending, countOf(l) of them */
  list(l: number): Int32Array {
    if (this.stale[l] === 1) this.writeList(l);
    return this.blocks;
  }

  /** write layer l's row from the tier mirror: its synced blocks in HBM, ascending */
  private writeList(l: number): void {
    const base = l * this.maxBlocks;
    const tiers = this.tiers;
    const list = this.blocks;
    let n = 0;
    for (let b = 0, end = this.syncedUpTo[l]; b < end; b++) if (tiers[base + b] === 0) list[base + n++] = b;
    this.stale[l] = 0;
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
    // into or out of HBM: the row is written again when read
    this.stale[l] = 1;
    if (to === 0) {
      this.count[l]++;
      this.below[base + b] = 0;
    } else {
      this.count[l]--;
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
    this.stale[l] = 0;
    this.syncedUpTo[l] = created;
    this.seen[l] = cache.changesOf(l);
    this.rebuilds[l]++;
  }
}
