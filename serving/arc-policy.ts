/**
 * Adaptive Replacement Cache (Megiddo & Modha, FAST'03). T1 holds blocks used once since they
 * entered, T2 blocks used again; ghost lists B1/B2 remember recently evicted ids of each. A ghost
 * hit on re-entry moves the target size p of T1 (B1 hit: grow, B2 hit: shrink) and puts the block in
 * T2. Eviction takes the LRU unpinned block of T1 when |T1| > p, else of T2. Pinned blocks leave
 * the recency lists and re-enter their list as most recent when released.
 *
 * The tiered cache makes room before it inserts, so p adapts when the returning block is inserted,
 * one eviction later than in the paper (where REPLACE runs after the adaptation). This is why it
 * shares only its lists (common/dense-list.ts) with the attention-level ARC replacer
 * (policies/replacers.ts), whose engine reports a miss before it makes room.
 */
import type { CachePolicy, CachePolicyDefinition } from './cache-policy.js';
import { DenseList } from '../common/dense-list.js';

export class ArcPolicy implements CachePolicy {
  private readonly t1 = new DenseList();
  private readonly t2 = new DenseList();
  private readonly b1 = new DenseList();
  private readonly b2 = new DenseList();
  /** list (1 or 2) of each pinned resident block, 0 otherwise */
  private pinnedIn = new Uint8Array(1024);
  private pinned1 = 0;
  private pinned2 = 0;
  /** target size of T1, in blocks */
  p = 0;

  constructor(private readonly c: number) {}

  private setPinned(id: number, w: number): void {
    if (id >= this.pinnedIn.length) {
      const a = new Uint8Array(Math.max(id + 1, this.pinnedIn.length * 2));
      a.set(this.pinnedIn);
      this.pinnedIn = a;
    }
    const old = this.pinnedIn[id];
    if (old === 1) this.pinned1--;
    else if (old === 2) this.pinned2--;
    if (w === 1) this.pinned1++;
    else if (w === 2) this.pinned2++;
    this.pinnedIn[id] = w;
  }

  private pinnedList(id: number): number {
    return id < this.pinnedIn.length ? this.pinnedIn[id] : 0;
  }

  insert(id: number, pinned: boolean): void {
    let w = 1;
    if (this.b1.remove(id)) {
      this.p = Math.min(this.c, this.p + Math.max(1, this.b2.size / (this.b1.size + 1)));
      w = 2;
    } else if (this.b2.remove(id)) {
      this.p = Math.max(0, this.p - Math.max(1, this.b1.size / (this.b2.size + 1)));
      w = 2;
    }
    if (pinned) this.setPinned(id, w);
    else (w === 1 ? this.t1 : this.t2).push(id);
    this.trimGhosts();
  }

  access(id: number): void {
    if (this.t1.remove(id) || this.t2.remove(id)) this.t2.push(id);
    else if (this.pinnedList(id) === 1) this.setPinned(id, 2);
  }

  pin(id: number): void {
    if (this.t1.remove(id)) this.setPinned(id, 1);
    else if (this.t2.remove(id)) this.setPinned(id, 2);
  }

  unpin(id: number): void {
    const w = this.pinnedList(id);
    if (w === 0) return;
    this.setPinned(id, 0);
    (w === 1 ? this.t1 : this.t2).push(id);
  }

  remove(id: number): void {
    if (!this.t1.remove(id) && !this.t2.remove(id)) this.setPinned(id, 0);
  }

  evict(): number {
    const fromT1 = this.t1.size > 0 && (this.t1.size + this.pinned1 > this.p || this.t2.size === 0);
    const id = (fromT1 ? this.t1 : this.t2).shift();
    if (id < 0) return -1;
    (fromT1 ? this.b1 : this.b2).push(id);
    this.trimGhosts();
    return id;
  }

  /** |T1| + |B1| <= c and |T1| + |T2| + |B1| + |B2| <= 2c, dropping the oldest ghosts. */
  private trimGhosts(): void {
    const { b1, b2, c } = this;
    const size1 = this.t1.size + this.pinned1;
    const size2 = this.t2.size + this.pinned2;
    while (b1.size > 0 && size1 + b1.size > c) b1.shift();
    while (b2.size > 0 && size1 + size2 + b1.size + b2.size > 2 * c) b2.shift();
  }
}

export const arcPolicy: CachePolicyDefinition = {
  name: 'arc',
  description: 'adaptive replacement cache: balances recency (seen once) and frequency (seen again) with ghost lists',
  options: [],
  create: (capacityBlocks) => new ArcPolicy(capacityBlocks),
};
