/**
 * Per layer, a set of blocks kept in the order of their raw H2O score (AttentionScore.raw: the score
 * less the layer's offset), so that SynapseVM finds the block of least saliency in a tier (its
 * demotion victim) without scanning the tier. Saliency is fl(raw + offset), and adding the same
 * offset keeps the order (x ≤ y gives fl(x + o) ≤ fl(y + o)), so the least saliency is at the least
 * raw score; blocks whose saliencies round to the same value tie, and a tie goes to the lower id, as
 * a scan in block order gives it. The entries are kept sorted by (key, id) in one array per layer.
 *
 * Entries are checked when a query reaches them, not when something changes:
 * - an entry holds the raw score its block had when it was added: raw scores only rise while the
 *   order is valid (the caller invalidates a layer when one may fall), so that key is a lower bound,
 *   and an entry whose block's score rose moves to its new key when a query finds its block eligible
 *   (one that may not be picked now keeps its key: a query passes it over);
 * - a block that left the tier is removed then (`pass` says so); one that may not be picked now
 *   (pinned, hot, in the window) stays.
 * A block has at most one entry (`has`); the caller adds the blocks that enter the tier. Between
 * defer() and settle() a layer's new entries are appended unsorted and settle() sorts them in (one
 * sort and merge for a decision that adds many blocks; the same entries in the same order as adding
 * them one by one); the layer is queried only after settle().
 *
 * A layer's entries lie anywhere in its row (from `first`, contiguous): an entry is removed or inserted
 * by shifting the entries on its shorter side, so that a removal near the coldest end (where the
 * queries find the blocks that left the tier) or an insertion there (a demoted block) shifts few
 * entries, not the rest of the row.
 */
/** the raw scores a cold order reads (AttentionScore's, or SynapseScore's: the same numbers) */
export interface RawScores {
  raw(l: number, b: number): number;
  offsetOf(l: number): number;
}

/** what a judge's `pass` answers for a block a query reaches: not in the tier any more, eligible, or kept but not eligible now */
export const DROP = 0;
export const ELIGIBLE = 1;
export const SET_ASIDE = 2;

/** What a query asks of each block it reaches: DROP, ELIGIBLE or SET_ASIDE (`mode` as the query passes it on). */
export interface ColdJudge {
  pass(b: number, mode: number): number;
}

export class ColdOrder {
  /** per layer: the entries (rows of maxBlocks, size[l] of them from first[l]), ascending by (key, id) */
  private readonly ids: Int32Array;
  private readonly keys: Float64Array;
  private readonly size: Int32Array;
  private readonly first: Int32Array;
  /** per (layer, block): 1 when the block has an entry */
  private readonly member: Uint8Array;
  /** per layer: 1 while its keys are lower bounds (no raw score fell since it was built) */
  private readonly ok: Uint8Array;
  /** the layer whose additions are deferred (−1: none), and where its unsorted entries start */
  private deferred = -1;
  private sortedTo = 0;
  /** scratch of settle(): the appended entries' order, and the merged entries */
  private readonly order: Int32Array;
  private readonly mergedIds: Int32Array;
  private readonly mergedKeys: Float64Array;

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
  ) {
    this.ids = new Int32Array(layers * maxBlocks);
    this.keys = new Float64Array(layers * maxBlocks);
    this.size = new Int32Array(layers);
    this.first = new Int32Array(layers);
    this.member = new Uint8Array(layers * maxBlocks);
    this.ok = new Uint8Array(layers);
    this.order = new Int32Array(maxBlocks);
    this.mergedIds = new Int32Array(maxBlocks);
    this.mergedKeys = new Float64Array(maxBlocks);
  }

  /** from now until settle(l), layer l's additions are appended unsorted */
  defer(l: number): void {
    this.settleDeferred();
    this.deferred = l;
    this.sortedTo = this.size[l];
    // (the appended entries go after the sorted ones: room for every block the row may still take)
    if (this.first[l] !== 0) this.compact(l);
  }

  /** move layer l's entries to the start of its row */
  private compact(l: number): void {
    const base = l * this.maxBlocks;
    const at = base + this.first[l];
    const n = this.size[l];
    this.ids.copyWithin(base, at, at + n);
    this.keys.copyWithin(base, at, at + n);
    this.first[l] = 0;
  }

  /** sort layer l's appended entries in and end defer() */
  settle(l: number): void {
    if (this.deferred === l) this.settleDeferred();
  }

  private settleDeferred(): void {
    const l = this.deferred;
    this.deferred = -1;
    if (l < 0) return;
    // (the layer was compacted at defer(): its entries start at its row's start, and insert() keeps them there until this returns)
    const base = l * this.maxBlocks;
    const n = this.size[l];
    const s0 = this.sortedTo;
    if (n === s0) return;
    const ids = this.ids;
    const keys = this.keys;
    let nan = false;
    for (let i = 0; i < n && !nan; i++) nan = Number.isNaN(keys[base + i]);
    if (nan) {
      // (a key that is not a number orders nothing: the entries are inserted one by one, as add() does)
      const m = n - s0;
      for (let j = 0; j < m; j++) {
        this.mergedIds[j] = ids[base + s0 + j];
        this.mergedKeys[j] = keys[base + s0 + j];
      }
      this.size[l] = s0;
      for (let j = 0; j < m; j++) this.insert(l, base, this.mergedIds[j], this.mergedKeys[j]);
      return;
    }
    // the appended entries in (key, id) order, then merged with the sorted ones
    const m = n - s0;
    const order = this.order;
    for (let j = 0; j < m; j++) order[j] = s0 + j;
    sortPlaces(order, 0, m - 1, keys, ids, base);
    const mi = this.mergedIds;
    const mk = this.mergedKeys;
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < s0 || j < m) {
      let fromSorted: boolean;
      if (j === m) fromSorted = true;
      else if (i === s0) fromSorted = false;
      else {
        const ka = keys[base + i];
        const kb = keys[base + order[j]];
        fromSorted = ka < kb || (ka === kb && ids[base + i] < ids[base + order[j]]);
      }
      const at = fromSorted ? base + i++ : base + order[j++];
      mi[k] = ids[at];
      mk[k++] = keys[at];
    }
    ids.set(mi.subarray(0, n), base);
    keys.set(mk.subarray(0, n), base);
  }

  /** true when layer l may be queried (built, and no raw score fell since) */
  valid(l: number): boolean {
    return this.ok[l] === 1;
  }

  /** a raw score of layer l may have fallen: the layer must be rebuilt before the next query */
  invalidate(l: number): void {
    this.ok[l] = 0;
  }

  /** empty layer l and mark it valid (the caller then adds the tier's blocks) */
  reset(l: number): void {
    if (this.deferred === l) this.settleDeferred();
    const base = l * this.maxBlocks;
    const at = base + this.first[l];
    for (let i = 0; i < this.size[l]; i++) this.member[base + this.ids[at + i]] = 0;
    this.size[l] = 0;
    this.first[l] = 0;
    this.ok[l] = 1;
  }

  has(l: number, b: number): boolean {
    return this.member[l * this.maxBlocks + b] === 1;
  }

  /** entries of layer l (some of which may have left the tier) */
  count(l: number): number {
    return this.size[l];
  }

  /** add block b with key `raw` (no-op when it has an entry) */
  add(l: number, b: number, raw: number): void {
    const base = l * this.maxBlocks;
    if (this.member[base + b]) return;
    this.member[base + b] = 1;
    if (this.deferred === l) {
      // (first[l] is 0 from defer() to settle())
      const n = this.size[l]++;
      this.ids[base + n] = b;
      this.keys[base + n] = raw;
      return;
    }
    this.insert(l, base, b, raw);
  }

  /**
   * The eligible block of least (fl(raw + offset), id) among layer l's entries, or −1 (−2, the layer
   * invalidated, when an entry's raw score is found below its key or not a number). `judge.pass(b, mode)`
   * classifies a block a query reaches (DROP: its entry is removed; SET_ASIDE: kept, not picked).
   * Every eligible block must have an entry and every entry's key must be at most its raw score.
   */
  coldest(l: number, score: RawScores, judge: ColdJudge, mode = 0): number {
    if (this.deferred === l) this.settleDeferred();
    const base = l * this.maxBlocks;
    const ids = this.ids;
    const keys = this.keys;
    const off = score.offsetOf(l);
    let best = -1;
    let bestKey = 0;
    let i = 0;
    while (i < this.size[l]) {
      // (the entries' start moves when one before i is removed)
      const at = base + this.first[l];
      const key = keys[at + i];
      // every entry from here on has a saliency of at least fl(key + off)
      if (best >= 0 && key + off > bestKey) break;
      const b = ids[at + i];
      const raw = score.raw(l, b);
      if (raw !== key && !(raw > key)) {
        // a score fell (or is not a number): the order no longer holds
        this.ok[l] = 0;
        return -2;
      }
      const p = judge.pass(b, mode);
      if (p === DROP) {
        this.removeAt(l, base, i);
        this.member[base + b] = 0;
        continue;
      }
      if (p !== ELIGIBLE) {
        // (kept at its key, a lower bound of its score: it moves up when a query finds it eligible)
        i++;
        continue;
      }
      if (raw !== key) {
        // its score rose since it was added: it moves up to its new key (the entry now at i is next)
        this.rise(l, base, i, b, raw);
        continue;
      }
      const k = raw + off;
      if (best < 0 || k < bestKey || (k === bestKey && b < best)) {
        best = b;
        bestKey = k;
      }
      // the other entries of this key come after b, with higher ids: none of them can win
      i = this.after(l, base, raw);
    }
    return best;
  }

  /** first position of layer l whose key is above `key` */
  private after(l: number, base: number, key: number): number {
    const at = base + this.first[l];
    let lo = 0;
    let hi = this.size[l];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[at + mid] > key) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private insert(l: number, base: number, b: number, key: number): void {
    const keys = this.keys;
    const ids = this.ids;
    const n = this.size[l];
    const at = base + this.first[l];
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const k = keys[at + mid];
      if (k < key || (k === key && ids[at + mid] < b)) lo = mid + 1;
      else hi = mid;
    }
    this.insertAt(l, base, lo, b, key);
  }

  /** block b with key `key` becomes the entry at lo (lo <= size) */
  private insertAt(l: number, base: number, lo: number, b: number, key: number): void {
    const keys = this.keys;
    const ids = this.ids;
    const n = this.size[l];
    let at = base + this.first[l];
    // the shorter side moves by one, unless the row has no room on that side (it has on the other: n < maxBlocks)
    const roomBefore = this.first[l] > 0;
    const roomAfter = this.first[l] + n < this.maxBlocks;
    if (roomBefore && (lo < n - lo || !roomAfter)) {
      if (lo > 0) {
        move(ids, keys, at - 1, at, at + lo);
      }
      this.first[l]--;
      at--;
    } else if (lo < n) {
      move(ids, keys, at + lo + 1, at + lo, at + n);
    }
    ids[at + lo] = b;
    keys[at + lo] = key;
    this.size[l] = n + 1;
  }

  /**
   * move the entry at i (block b) to key `key` > its key, at the position `to` where it then belongs:
   * the entries between shift down by one, or, where fewer move so, the entry is removed and inserted
   * again at `to` (each shifting its shorter side)
   */
  private rise(l: number, base: number, i: number, b: number, key: number): void {
    const keys = this.keys;
    const ids = this.ids;
    const at = base + this.first[l];
    const n = this.size[l];
    // the first position after i whose entry stays above (key, b)
    let lo = i + 1;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const k = keys[at + mid];
      if (k < key || (k === key && ids[at + mid] < b)) lo = mid + 1;
      else hi = mid;
    }
    const to = lo - 1;
    if (Math.min(i, n - 1 - i) + Math.min(to, n - 1 - to) < to - i) {
      // (after the removal the entries before `to` are those that stay below it)
      this.removeAt(l, base, i);
      this.insertAt(l, base, to, b, key);
      return;
    }
    if (to > i) {
      move(ids, keys, at + i, at + i + 1, at + to + 1);
    }
    ids[at + to] = b;
    keys[at + to] = key;
  }

  /** remove the entry at i: the entries on its shorter side move by one (those before it: the start moves up) */
  private removeAt(l: number, base: number, i: number): void {
    const n = --this.size[l];
    const at = base + this.first[l];
    if (i < n - i) {
      if (i > 0) {
        move(this.ids, this.keys, at + 1, at, at + i);
      }
      this.first[l]++;
    } else if (i < n) {
      move(this.ids, this.keys, at + i, at + i + 1, at + n + 1);
    }
  }
}

/**
 * Sort the places order[lo..hi] of a row's entries (at base + place in keys and ids) by (key, id)
 * ascending, keys not NaN: the ids differ, so every pair is ordered and any sort gives this order.
 * Quicksort down to short parts, then insertion sort (the comparisons written out: no function per
 * comparison).
 */
function sortPlaces(order: Int32Array, lo: number, hi: number, keys: Float64Array, ids: Int32Array, base: number): void {
  while (hi - lo > 16) {
    // median of three as the pivot, moved to hi
    const mid = (lo + hi) >>> 1;
    if (placeBefore(order[mid], order[lo], keys, ids, base)) swapPlaces(order, mid, lo);
    if (placeBefore(order[hi], order[lo], keys, ids, base)) swapPlaces(order, hi, lo);
    if (placeBefore(order[mid], order[hi], keys, ids, base)) swapPlaces(order, mid, hi);
    const p = order[hi];
    let i = lo;
    for (let j = lo; j < hi; j++) {
      if (placeBefore(order[j], p, keys, ids, base)) {
        swapPlaces(order, i, j);
        i++;
      }
    }
    swapPlaces(order, i, hi);
    // the shorter part first (recursion depth O(log n)), the longer one in this loop
    if (i - lo < hi - i) {
      sortPlaces(order, lo, i - 1, keys, ids, base);
      lo = i + 1;
    } else {
      sortPlaces(order, i + 1, hi, keys, ids, base);
      hi = i - 1;
    }
  }
  for (let i = lo + 1; i <= hi; i++) {
    const a = order[i];
    let j = i - 1;
    while (j >= lo && placeBefore(a, order[j], keys, ids, base)) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = a;
  }
}

/** whether the entry at place a comes before the one at place b: a lower key, or the same key and a lower id */
function placeBefore(a: number, b: number, keys: Float64Array, ids: Int32Array, base: number): boolean {
  const ka = keys[base + a];
  const kb = keys[base + b];
  return ka < kb || (!(ka > kb) && ids[base + a] < ids[base + b]);
}

function swapPlaces(order: Int32Array, i: number, j: number): void {
  const t = order[i];
  order[i] = order[j];
  order[j] = t;
}

/** entries moved by copyWithin below this many (its call costs more than a loop over so few) */
const SHORT_MOVE = 48;

/** ids and keys [start, end) copied to `target` (the ranges may overlap), as copyWithin(target, start, end) on both */
function move(ids: Int32Array, keys: Float64Array, target: number, start: number, end: number): void {
  const n = end - start;
  if (n >= SHORT_MOVE) {
    ids.copyWithin(target, start, end);
    keys.copyWithin(target, start, end);
  } else if (target < start) {
    for (let i = 0; i < n; i++) {
      ids[target + i] = ids[start + i];
      keys[target + i] = keys[start + i];
    }
  } else {
    for (let i = n - 1; i >= 0; i--) {
      ids[target + i] = ids[start + i];
      keys[target + i] = keys[start + i];
    }
  }
}
