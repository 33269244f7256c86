/**
 * Classic replacement orders over one layer's HBM-resident blocks (page replacement applied to KV
 * blocks). A "use" of a block is an attention mass >= the threshold share of its row maximum.
 * Each replacer keeps its own bookkeeping; the cache engine (classic-cache.ts) asks it for victims.
 */
import { LruList } from './lru-list.js';

export interface Replacer {
  /** a block entered HBM (created, or promoted after a miss) */
  admit(b: number): void;
  /** a resident block was used */
  hit(b: number): void;
  /** an offloaded block was used (a miss); called before room is made for it */
  miss(b: number): void;
  /** the resident block to remove next (-1 if none) */
  victim(): number;
  /** the block left HBM (demoted or dropped) */
  remove(b: number): void;
}

/** FIFO: the block resident the longest goes first; uses do not matter. */
export class FifoReplacer implements Replacer {
  private readonly q: LruList;
  constructor(maxBlocks: number) {
    this.q = new LruList(maxBlocks);
  }
  admit(b: number) {
    this.q.touch(b);
  }
  hit() {}
  miss() {}
  victim() {
    return this.q.oldest();
  }
  remove(b: number) {
    this.q.remove(b);
  }
}

/** LRU: the least recently used (or admitted) block goes first. */
export class LruReplacer implements Replacer {
  private readonly q: LruList;
  constructor(maxBlocks: number) {
    this.q = new LruList(maxBlocks);
  }
  admit(b: number) {
    this.q.touch(b);
  }
  hit(b: number) {
    this.q.touch(b);
  }
  miss() {}
  victim() {
    return this.q.oldest();
  }
  remove(b: number) {
    this.q.remove(b);
  }
}

/** LFU (in-cache counts): the block with the fewest uses since admission goes first; ties: least recent. */
export class LfuReplacer implements Replacer {
  private readonly freq: Float64Array;
  private readonly stamp: Float64Array;
  private readonly resident: Uint8Array;
  private clock = 0;
  constructor(maxBlocks: number) {
    this.freq = new Float64Array(maxBlocks);
    this.stamp = new Float64Array(maxBlocks);
    this.resident = new Uint8Array(maxBlocks);
  }
  admit(b: number) {
    this.resident[b] = 1;
    this.freq[b] = 1;
    this.stamp[b] = ++this.clock;
  }
  hit(b: number) {
    this.freq[b]++;
    this.stamp[b] = ++this.clock;
  }
  miss() {}
  victim() {
    let best = -1;
    for (let b = 0; b < this.resident.length; b++) {
      if (!this.resident[b]) continue;
      if (best < 0 || this.freq[b] < this.freq[best] || (this.freq[b] === this.freq[best] && this.stamp[b] < this.stamp[best])) best = b;
    }
    return best;
  }
  remove(b: number) {
    this.resident[b] = 0;
  }
}

/**
 * ARC (Megiddo & Modha, FAST 2003): T1 (seen once recently) and T2 (seen at least twice), with ghost
 * lists B1/B2 of blocks recently removed from each, and a target size p for T1 adapted on ghost hits:
 * a hit in B1 grows p by max(|B2|/|B1|, 1), a hit in B2 shrinks it by max(|B1|/|B2|, 1). REPLACE
 * takes T1's LRU when |T1| > p (or = p on a B2 hit), else T2's. Ghost lists hold at most c entries
 * each side (|T1|+|B1| <= c, |T2|+|B2| <= 2c − c), c = the layer's HBM budget in blocks.
 */
export class ArcReplacer implements Replacer {
  readonly t1: LruList;
  readonly t2: LruList;
  readonly b1: LruList;
  readonly b2: LruList;
  p = 0;
  private lastMissInB2 = false;
  constructor(
    maxBlocks: number,
    readonly c: number,
  ) {
    this.t1 = new LruList(maxBlocks);
    this.t2 = new LruList(maxBlocks);
    this.b1 = new LruList(maxBlocks);
    this.b2 = new LruList(maxBlocks);
  }
  admit(b: number) {
    if (this.b1.has(b) || this.b2.has(b)) {
      this.b1.remove(b);
      this.b2.remove(b);
      this.t2.touch(b);
      return;
    }
    // a new block (case IV): trim the ghost lists to the directory size
    if (this.t1.size + this.b1.size >= this.c && this.b1.size > 0) this.b1.remove(this.b1.oldest());
    const total = this.t1.size + this.t2.size + this.b1.size + this.b2.size;
    if (total >= 2 * this.c && this.b2.size > 0) this.b2.remove(this.b2.oldest());
    this.t1.touch(b);
  }
  hit(b: number) {
    if (!this.t1.has(b) && !this.t2.has(b)) return;
    this.t1.remove(b);
    this.t2.touch(b);
  }
  miss(b: number) {
    this.lastMissInB2 = false;
    if (this.b1.has(b)) this.p = Math.min(this.c, this.p + Math.max(this.b2.size / this.b1.size, 1));
    else if (this.b2.has(b)) {
      this.p = Math.max(0, this.p - Math.max(this.b1.size / this.b2.size, 1));
      this.lastMissInB2 = true;
    }
  }
  victim() {
    const t1 = this.t1.size;
    if (t1 >= 1 && (t1 > this.p || (this.lastMissInB2 && t1 === Math.floor(this.p)))) return this.t1.oldest();
    if (this.t2.size > 0) return this.t2.oldest();
    return this.t1.oldest();
  }
  remove(b: number) {
    if (this.t1.has(b)) {
      this.t1.remove(b);
      this.b1.touch(b);
    } else if (this.t2.has(b)) {
      this.t2.remove(b);
      this.b2.touch(b);
    }
    this.lastMissInB2 = false;
  }
}
