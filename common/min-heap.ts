/**
 * A binary min-heap of entries (a, b, c, item) in parallel typed arrays, ordered by a, then b, then
 * c. a and c are float64; b is stored as a 32-bit integer (a small integer rank such as an event
 * priority; the engine's event loop is measurably slower with a float64 column there). Entries with equal
 * keys keep no particular order among themselves, so callers that need a deterministic order make
 * the keys unique (the event engine's c is a sequence number). Entries are never updated in place:
 * a caller that changes an entry's keys pushes a fresh one and skips stale ones when they reach the
 * top (lazy deletion), sweeping them with `filter` when they pile up.
 *
 * Users: the event heap of sim/engine.ts (time, priority, sequence -> callback), LFU's order
 * (uses, tick, 0 -> id) and the Belady oracle of the prefix cache (next use, depth, 0 -> block).
 */
import { holeyObjectArray } from './array-kinds.js';
export class MinHeap<T> {
  private ka: Float64Array;
  private kb: Int32Array;
  private kc: Float64Array;
  private items: (T | undefined)[];
  private n = 0;

  constructor(initialCapacity = 1024) {
    const cap = Math.max(1, initialCapacity);
    this.ka = new Float64Array(cap);
    this.kb = new Int32Array(cap);
    this.kc = new Float64Array(cap);
    this.items = holeyObjectArray<T>(cap);
  }

  get size(): number {
    return this.n;
  }

  /** `b` must be an integer in the int32 range (it is stored as one). */
  push(a: number, b: number, c: number, item: T): void {
    if (this.n === this.ka.length) this.grow();
    const { ka, kb, kc, items } = this;
    let i = this.n++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pa = ka[p];
      if (pa < a || (pa === a && (kb[p] < b || (kb[p] === b && kc[p] <= c)))) break;
      ka[i] = pa;
      kb[i] = kb[p];
      kc[i] = kc[p];
      items[i] = items[p];
      i = p;
    }
    ka[i] = a;
    kb[i] = b;
    kc[i] = c;
    items[i] = item;
  }

  /** Keys and item of the smallest entry (undefined behaviour when empty: check `size`). */
  topA(): number {
    return this.ka[0];
  }
  topB(): number {
    return this.kb[0];
  }
  topC(): number {
    return this.kc[0];
  }
  top(): T {
    return this.items[0] as T;
  }

  /** Remove the smallest entry and return its item (undefined when empty). */
  pop(): T | undefined {
    if (this.n === 0) return undefined;
    const { ka, kb, kc, items } = this;
    const out = items[0];
    const last = --this.n;
    if (last > 0) {
      const a = ka[last];
      const b = kb[last];
      const c = kc[last];
      const item = items[last];
      let i = 0;
      const half = last >> 1;
      while (i < half) {
        let ch = 2 * i + 1;
        const r = ch + 1;
        if (r < last && (ka[r] < ka[ch] || (ka[r] === ka[ch] && (kb[r] < kb[ch] || (kb[r] === kb[ch] && kc[r] < kc[ch]))))) ch = r;
        const ca = ka[ch];
        if (a < ca || (a === ca && (b < kb[ch] || (b === kb[ch] && c <= kc[ch])))) break;
        ka[i] = ca;
        kb[i] = kb[ch];
        kc[i] = kc[ch];
        items[i] = items[ch];
        i = ch;
      }
      ka[i] = a;
      kb[i] = b;
      kc[i] = c;
      items[i] = item;
    }
    items[last] = undefined;
    return out;
  }

  /** Keep only the entries for which `keep` holds (the survivors, sorted, are a valid heap). */
  filter(keep: (a: number, b: number, c: number, item: T) => boolean): void {
    const { ka, kb, kc, items } = this;
    const order: number[] = [];
    for (let i = 0; i < this.n; i++) if (keep(ka[i], kb[i], kc[i], items[i] as T)) order.push(i);
    order.sort((x, y) => ka[x] - ka[y] || kb[x] - kb[y] || kc[x] - kc[y]);
    const a = new Float64Array(ka.length);
    const b = new Int32Array(kb.length);
    const c = new Float64Array(kc.length);
    const it: (T | undefined)[] = new Array(items.length);
    for (let j = 0; j < order.length; j++) {
      const i = order[j];
      a[j] = ka[i];
      b[j] = kb[i];
      c[j] = kc[i];
      it[j] = items[i];
    }
    this.ka = a;
    this.kb = b;
    this.kc = c;
    this.items = it;
    this.n = order.length;
  }

  private grow(): void {
    const n = this.ka.length * 2;
    const a = new Float64Array(n);
    a.set(this.ka);
    const b = new Int32Array(n);
    b.set(this.kb);
    const c = new Float64Array(n);
    c.set(this.kc);
    this.ka = a;
    this.kb = b;
    this.kc = c;
    this.items.length = n;
  }
}
