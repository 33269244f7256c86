/** An intrusive doubly linked list over block ids 0..n-1 (O(1) touch, remove, oldest). */
export class LruList {
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  private readonly inList: Uint8Array;
  private head = -1; // oldest
  private tail = -1; // newest
  size = 0;

  constructor(capacity: number) {
    this.prev = new Int32Array(capacity).fill(-1);
    this.next = new Int32Array(capacity).fill(-1);
    this.inList = new Uint8Array(capacity);
  }

  has(id: number): boolean {
    return this.inList[id] === 1;
  }

  /** Make `id` the most recently used (inserting it if absent). */
  touch(id: number): void {
    if (this.inList[id]) {
      if (this.tail === id) return;
      this.remove(id);
    }
    this.inList[id] = 1;
    this.prev[id] = this.tail;
    this.next[id] = -1;
    if (this.tail >= 0) this.next[this.tail] = id;
    else this.head = id;
    this.tail = id;
    this.size++;
  }

  remove(id: number): void {
    if (!this.inList[id]) return;
    const p = this.prev[id];
    const n = this.next[id];
    if (p >= 0) this.next[p] = n;
    else this.head = n;
    if (n >= 0) this.prev[n] = p;
    else this.tail = p;
    this.inList[id] = 0;
    this.size--;
  }

  /** Least recently used first; `skip` filters ids (e.g. pinned). Returns -1 if none qualifies. */
  oldest(skip?: (id: number) => boolean): number {
    for (let id = this.head; id >= 0; id = this.next[id]) if (!skip || !skip(id)) return id;
    return -1;
  }

  /** ids from least to most recently used */
  toArray(): number[] {
    const out: number[] = [];
    for (let id = this.head; id >= 0; id = this.next[id]) out.push(id);
    return out;
  }
}
