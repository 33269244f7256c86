/**
 * Classic replacement orders over one layer's HBM-resident blocks (page replacement applied to KV
 * blocks). A "use" of a block is an attention mass >= the threshold share of its row maximum.
 * Each replacer keeps its own bookkeeping; the cache engine (classic-cache.ts) asks it for victims.
 * The structures are common/'s, shared with the prefix-cache policies of serving/: the queues are
 * DenseLists, and LFU's order is LfuOrder, the same core as serving's LFU policy.
 */
import { DenseList } from '../common/dense-list.js';
import { LfuOrder } from './lfu-order.js';

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
  private readonly q: DenseList;
  constructor(maxBlocks: number) {
    this.q = new DenseList(maxBlocks);
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
  private readonly q: DenseList;
  constructor(maxBlocks: number) {
    this.q = new DenseList(maxBlocks);
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
  private readonly order: LfuOrder;
  constructor(maxBlocks: number) {
    this.order = new LfuOrder(maxBlocks);
  }
  admit(b: number) {
    this.order.insert(b, false);
  }
  hit(b: number) {
    this.order.access(b);
  }
  miss() {}
  victim() {
    return this.order.peek();
  }
  remove(b: number) {
    this.order.remove(b);
  }
}

/**
 * ARC (Megiddo & Modha, FAST 2003): T1 (seen once recently) and T2 (seen at least twice), with ghost
 * lists B1/B2 of blocks recently removed from each, and a target size p for T1 adapted on ghost hits:
 * a hit in B1 grows p by max(|B2|/|B1|, 1), a hit in B2 shrinks it by max(|B1|/|B2|, 1). REPLACE
 * takes T1's LRU when |T1| > p (or = p on a B2 hit), else T2's. Ghost lists hold at most c entries
 * each side (|T1|+|B1| <= c, |T2|+|B2| <= 2c − c), c = the layer's HBM budget in blocks.
 *
 * Not the same core as serving/arc-policy.ts: here the engine reports a miss before it makes room,
 * so p adapts before REPLACE as in the paper (with the paper's B2-hit tie rule), while the prefix
 * cache makes room first and inserts after, so its ARC adapts p at insertion, counts pinned blocks
 * in T1/T2 and trims ghosts in a loop. Both use the same lists (common/dense-list.ts).
 */
export class ArcReplacer implements Replacer {
  readonly t1: DenseList;
  readonly t2: DenseList;
  readonly b1: DenseList;
  readonly b2: DenseList;
  p = 0;
  private lastMissInB2 = false;
  constructor(
    maxBlocks: number,
    readonly c: number,
  ) {
    this.t1 = new DenseList(maxBlocks);
    this.t2 = new DenseList(maxBlocks);
    this.b1 = new DenseList(maxBlocks);
    this.b2 = new DenseList(maxBlocks);
  }
  admit(b: number) {
    if (this.b1.has(b) || this.b2.has(b)) {
      this.b1.remove(b);
      this.b2.remove(b);
      this.t2.touch(b);
      return;
    }
    // a new block (case IV): trim the ghost lists to the directory size
    if (this.t1.size + this.b1.size >= this.c && this.b1.size > 0) this.b1.shift();
    const total = this.t1.size + this.t2.size + this.b1.size + this.b2.size;
    if (total >= 2 * this.c && this.b2.size > 0) this.b2.shift();
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
