/**
 * An intrusive doubly linked list over dense ids 0, 1, 2, ... (oldest at the head, newest at the
 * tail) in typed arrays that grow as larger ids arrive. O(1) append, touch, remove and pop of the
 * oldest. The recency and FIFO queues of every replacement policy (attention-level replacers in
 * policies/, prefix-cache policies in serving/) are this list.
 */
export class DenseList {
  private prev = new Int32Array(0);
  private next = new Int32Array(0);
  private member = new Uint8Array(0);
  private head = -1;
  private tail = -1;
  size = 0;

  /** `initial`: ids below it fit without growing */
  constructor(initial = 1024) {
    this.ensure(initial - 1);
  }

  private ensure(id: number): void {
    if (id < this.member.length) return;
    const n = Math.max(id + 1, this.member.length * 2, 16);
    const prev = new Int32Array(n);
    prev.set(this.prev);
    const next = new Int32Array(n);
    next.set(this.next);
    const member = new Uint8Array(n);
    member.set(this.member);
    this.prev = prev;
    this.next = next;
    this.member = member;
  }

  has(id: number): boolean {
    return id < this.member.length && this.member[id] === 1;
  }

  /** Append `id` as the newest (it must not be in the list). */
  push(id: number): void {
    this.ensure(id);
    this.member[id] = 1;
    this.prev[id] = this.tail;
    this.next[id] = -1;
    if (this.tail >= 0) this.next[this.tail] = id;
    else this.head = id;
    this.tail = id;
    this.size++;
  }

  /** Make `id` the newest, moving it if present and appending it if not. */
  touch(id: number): void {
    if (this.has(id)) {
      if (this.tail === id) return;
      this.remove(id);
    }
    this.push(id);
  }

  /** Remove `id` if present; returns whether it was. */
  remove(id: number): boolean {
    if (!this.has(id)) return false;
    const p = this.prev[id];
    const n = this.next[id];
    if (p >= 0) this.next[p] = n;
    else this.head = n;
    if (n >= 0) this.prev[n] = p;
    else this.tail = p;
    this.member[id] = 0;
    this.size--;
    return true;
  }

  /** Remove and return the oldest id, or -1 when empty. */
  shift(): number {
    const id = this.head;
    if (id >= 0) this.remove(id);
    return id;
  }

  /** The oldest id for which `skip` (if given) is false, or -1; the list is unchanged. */
  oldest(skip?: (id: number) => boolean): number {
    for (let id = this.head; id >= 0; id = this.next[id]) if (!skip || !skip(id)) return id;
    return -1;
  }

  /** the id after `id` towards the newest, or -1 (id must be in the list) */
  newer(id: number): number {
    return this.next[id];
  }

  /** ids from oldest to newest */
  toArray(): number[] {
    const out: number[] = [];
    for (let id = this.head; id >= 0; id = this.next[id]) out.push(id);
    return out;
  }
}
