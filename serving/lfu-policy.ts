/**
 * Least frequently used, ties broken by least recent use. Counts live while a block is resident in
 * the tier (a block that leaves and comes back starts at 1). A heap holds one entry per unpinned
 * block and change; stale entries are skipped on eviction and swept when they outnumber live ones.
 */
import type { CachePolicy, CachePolicyDefinition } from './cache-policy.js';
import { MinHeap } from './min-heap.js';

export class LfuPolicy implements CachePolicy {
  /** uses while resident, 0 = not resident */
  private freq = new Int32Array(1024);
  /** tick of the block's live heap entry, -1 while pinned or absent */
  private stamp = new Float64Array(1024).fill(-1);
  private live = 0;
  private readonly heap = new MinHeap();
  private tick = 0;

  private ensure(id: number): void {
    if (id < this.freq.length) return;
    const n = Math.max(id + 1, this.freq.length * 2);
    const f = new Int32Array(n);
    f.set(this.freq);
    const s = new Float64Array(n).fill(-1);
    s.set(this.stamp);
    this.freq = f;
    this.stamp = s;
  }

  private enqueue(id: number): void {
    if (this.stamp[id] < 0) this.live++;
    const t = this.tick++;
    this.stamp[id] = t;
    this.heap.push(this.freq[id], t, id);
    if (this.heap.size > 2 * this.live + 1024) this.sweep();
  }

  private dequeue(id: number): void {
    if (this.stamp[id] >= 0) {
      this.stamp[id] = -1;
      this.live--;
    }
  }

  insert(id: number, pinned: boolean): void {
    this.ensure(id);
    this.freq[id] = 1;
    if (!pinned) this.enqueue(id);
  }

  access(id: number): void {
    if (id >= this.freq.length || this.freq[id] === 0) return;
    this.freq[id]++;
    if (this.stamp[id] >= 0) this.enqueue(id);
  }

  pin(id: number): void {
    this.dequeue(id);
  }

  unpin(id: number): void {
    this.enqueue(id);
  }

  remove(id: number): void {
    if (id >= this.freq.length) return;
    this.freq[id] = 0;
    this.dequeue(id);
  }

  evict(): number {
    const h = this.heap;
    while (h.size > 0) {
      const id = h.topId();
      const isLive = this.stamp[id] === h.topTie();
      h.pop();
      if (isLive) {
        this.remove(id);
        return id;
      }
    }
    return -1;
  }

  /** Drop stale heap entries. */
  private sweep(): void {
    this.heap.filter((_key, tie, id) => this.stamp[id] === tie);
  }
}
export const lfuPolicy: CachePolicyDefinition = {
  name: 'lfu',
  description: 'least frequently used block first (uses while resident), least recent among equals',
  create: () => new LfuPolicy(),
};
