/**
 * The LFU order shared by the attention-level LFU replacer (replacers.ts, ids = block indices of one
 * layer) and the prefix-cache LFU policy (serving/lfu-policy.ts, ids = dense ids of prefix-block
 * hashes): the least frequently used unpinned id first, the least recent among equals. A use counts
 * while the id is in the order (pinned or not); an id that leaves and comes back starts at 1. Its
 * recency is its last insert, use while unpinned, or unpin.
 *
 * A heap (common/min-heap.ts) holds one entry per unpinned id and change, keyed (uses, tick) with
 * the tick in the heap's int32 column; stale entries are skipped when they reach the top and swept
 * when they outnumber live ones. Ticks are unique, so the order never depends on the heap's layout.
 * When the tick reaches `tickLimit` (2^31 − 1), the live entries are renumbered 0, 1, ... in their
 * order, which keeps the order and the ticks within int32.
 */
import { MinHeap } from '../common/min-heap.js';

export class LfuOrder {
  /** uses while present, 0 = absent */
  private freq: Int32Array;
  /** tick of the id's live heap entry, -1 while pinned or absent */
  private stamp: Float64Array;
  private live = 0;
  private readonly heap = new MinHeap<number>();
  private tick = 0;

  /**
   * `initial`: ids below it fit without growing; `tickLimit`: ticks stay below it (see above; it
   * must exceed the number of ids in the order)
   */
  constructor(
    initial = 1024,
    private readonly tickLimit = 2 ** 31 - 1,
  ) {
    const n = Math.max(1, initial);
    this.freq = new Int32Array(n);
    this.stamp = new Float64Array(n).fill(-1);
  }

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
    if (this.tick >= this.tickLimit) this.renumber();
    if (this.stamp[id] < 0) this.live++;
    const t = this.tick++;
    this.stamp[id] = t;
    this.heap.push(this.freq[id], t, 0, id);
    if (this.heap.size > 2 * this.live + 1024) this.sweep();
  }

  private dequeue(id: number): void {
    if (this.stamp[id] >= 0) {
      this.stamp[id] = -1;
      this.live--;
    }
  }

  /** `id` entered with one use; a pinned id waits outside the order until unpinned. */
  insert(id: number, pinned: boolean): void {
    this.ensure(id);
    this.freq[id] = 1;
    if (!pinned) this.enqueue(id);
  }

  /** One more use of `id` (ignored when absent); an unpinned id also becomes the most recent. */
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

  /** `id` left: its count is forgotten. */
  remove(id: number): void {
    if (id >= this.freq.length) return;
    this.freq[id] = 0;
    this.dequeue(id);
  }

  /** The next victim (least used, least recent among equals, unpinned), or -1; nothing changes. */
  peek(): number {
    const h = this.heap;
    while (h.size > 0) {
      const id = h.top();
      if (this.stamp[id] === h.topB()) return id;
      h.pop();
    }
    return -1;
  }

  /** Remove and return the next victim, or -1 when every id is pinned or none is present. */
  evict(): number {
    const id = this.peek();
    if (id >= 0) {
      this.heap.pop();
      this.remove(id);
    }
    return id;
  }

  /** Drop stale heap entries. */
  private sweep(): void {
    this.heap.filter((_uses, tick, _c, id) => this.stamp[id] === tick);
  }

  /** Give the live entries ticks 0, 1, ... in their order, and the heap only those entries. */
  private renumber(): void {
    const ids: number[] = [];
    for (let id = 0; id < this.stamp.length; id++) if (this.stamp[id] >= 0) ids.push(id);
    ids.sort((x, y) => this.stamp[x] - this.stamp[y]);
    this.heap.filter(() => false);
    for (let t = 0; t < ids.length; t++) {
      const id = ids[t];
      this.stamp[id] = t;
      this.heap.push(this.freq[id], t, 0, id);
    }
    this.tick = ids.length;
  }
}
