/**
 * A binary min-heap of (key, tie, id) triples in parallel arrays, ordered by key then tie. Entries
 * are never updated in place: callers push a fresh entry and skip stale ones when they pop.
 */
export class MinHeap {
  private keys: number[] = [];
  private ties: number[] = [];
  private ids: number[] = [];

  get size(): number {
    return this.ids.length;
  }

  push(key: number, tie: number, id: number): void {
    const { keys, ties, ids } = this;
    let i = ids.length;
    keys.push(key);
    ties.push(tie);
    ids.push(id);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (keys[p] < key || (keys[p] === key && ties[p] <= tie)) break;
      keys[i] = keys[p];
      ties[i] = ties[p];
      ids[i] = ids[p];
      i = p;
    }
    keys[i] = key;
    ties[i] = tie;
    ids[i] = id;
  }

  /** Remove the smallest entry; read it first with topKey/topTie/topId. */
  pop(): void {
    const { keys, ties, ids } = this;
    const last = ids.length - 1;
    const k = keys[last];
    const t = ties[last];
    const d = ids[last];
    keys.pop();
    ties.pop();
    ids.pop();
    if (last === 0) return;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= last) break;
      const r = c + 1;
      if (r < last && (keys[r] < keys[c] || (keys[r] === keys[c] && ties[r] < ties[c]))) c = r;
      if (k < keys[c] || (k === keys[c] && t <= ties[c])) break;
      keys[i] = keys[c];
      ties[i] = ties[c];
      ids[i] = ids[c];
      i = c;
    }
    keys[i] = k;
    ties[i] = t;
    ids[i] = d;
  }

  topKey(): number {
    return this.keys[0];
  }
  topTie(): number {
    return this.ties[0];
  }
  topId(): number {
    return this.ids[0];
  }

  /** Keep only the entries for which `keep` holds (a sorted array is a valid heap). */
  filter(keep: (key: number, tie: number, id: number) => boolean): void {
    const order: number[] = [];
    for (let i = 0; i < this.ids.length; i++) if (keep(this.keys[i], this.ties[i], this.ids[i])) order.push(i);
    order.sort((a, b) => this.keys[a] - this.keys[b] || this.ties[a] - this.ties[b]);
    this.keys = order.map((i) => this.keys[i]);
    this.ties = order.map((i) => this.ties[i]);
    this.ids = order.map((i) => this.ids[i]);
  }
}
