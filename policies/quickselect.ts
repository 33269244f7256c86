/**
 * Bottom-k selection in expected linear time (Hoare's quickselect with median-of-three pivots),
 * not a sort. Reorders `ids` in place so that ids[0..k-1] hold the k ids with the smallest keys
 * (ties broken by id, so the choice is deterministic). Returns k (clamped to ids.length).
 * Each id's key is computed once (into a scratch array that moves with the ids), not per comparison.
 */
export function selectBottomK(ids: Int32Array | number[], count: number, k: number, key: (id: number) => number): number {
  if (k <= 0) return 0;
  if (k >= count) return count;
  if (scratch.length < count) scratch = new Float64Array(Math.max(count, 2 * scratch.length));
  const keys = scratch;
  for (let i = 0; i < count; i++) keys[i] = key(ids[i]);
  return selectBottomKKeyed(ids, keys, count, k);
}

let scratch = new Float64Array(1024);

/**
 * The same selection with the keys given: keys[i] is the key of ids[i] for i < count. Both arrays
 * are reordered together.
 */
export function selectBottomKKeyed(ids: Int32Array | number[], keys: Float64Array, count: number, k: number): number {
  if (k <= 0) return 0;
  if (k >= count) return count;
  let lo = 0;
  let hi = count - 1;
  const target = k - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    // median of three to the middle
    if (less(ids, keys, mid, lo)) swap(ids, keys, mid, lo);
    if (less(ids, keys, hi, lo)) swap(ids, keys, hi, lo);
    if (less(ids, keys, hi, mid)) swap(ids, keys, hi, mid);
    const pk = keys[mid];
    const pid = ids[mid];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (keys[i] < pk || (keys[i] === pk && ids[i] < pid)) i++;
      while (pk < keys[j] || (pk === keys[j] && pid < ids[j])) j--;
      if (i <= j) {
        swap(ids, keys, i, j);
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return k;
}

/** (key, id) of position a before that of position b (a function of the module, not a closure per call) */
function less(ids: Int32Array | number[], keys: Float64Array, a: number, b: number): boolean {
  return keys[a] < keys[b] || (keys[a] === keys[b] && ids[a] < ids[b]);
}

function swap(a: Int32Array | number[], keys: Float64Array, i: number, j: number): void {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
  const u = keys[i];
  keys[i] = keys[j];
  keys[j] = u;
}

/**
 * The same set as selectBottomKKeyed (ids[0..k-1] hold the k smallest (key, id) pairs, in no set
 * order; the order within each side differs from it), by Floyd and Rivest's selection (CACM 18(3),
 * 1975, algorithm 489): on ranges over 600 it first selects within a sample-sized window around the
 * expected position, so that the final partition pass finds the k-th pair in about one pass over
 * the pairs. For callers that use the selected set only.
 */
export function selectBottomKSet(ids: Int32Array, keys: Float64Array, count: number, k: number): number {
  if (k <= 0) return 0;
  if (k >= count) return count;
  floydRivest(ids, keys, k - 1, 0, count - 1);
  return k;
}

/**
 * Within ids/keys[left..right]: ids[k] gets the pair of rank k - left, smaller pairs before it,
 * larger after (left <= k <= right), by the selection selectBottomKSet uses.
 */
export function selectAt(ids: Int32Array, keys: Float64Array, k: number, left: number, right: number): void {
  if (!(left <= k && k <= right)) throw new Error(`selectAt: position ${k} outside ${left}..${right}`);
  floydRivest(ids, keys, k, left, right);
}

/**
 * Floyd–Rivest selection: ids[k] gets the pair of rank k in [left, right], smaller pairs before it, larger after.
 * Each pass partitions around a pivot pair without branches on the keys (a Lomuto partition: every
 * pair is swapped into place and the front advances by its comparison), so that its cost does not
 * depend on how predictable the comparisons are; the pairs are distinct (ties in key are broken by
 * id). The pivot: on ranges over 600, the pair at k once the sample around it is selected; else the
 * median of the first, middle and last pairs (a Lomuto pass keeps the pairs below the pivot in their
 * order, so the pair at k alone degrades on inputs with sorted runs).
 */
function floydRivest(ids: Int32Array, keys: Float64Array, k: number, left: number, right: number): void {
  while (right > left) {
    let p = k;
    if (right - left > 600) {
      const n = right - left + 1;
      const m = k - left + 1;
      const z = Math.log(n);
      const s = 0.5 * Math.exp((2 * z) / 3);
      const sd = 0.5 * Math.sqrt((z * s * (n - s)) / n) * (m - n / 2 < 0 ? -1 : 1);
      floydRivest(ids, keys, k, Math.max(left, Math.floor(k - (m * s) / n + sd)), Math.min(right, Math.floor(k + ((n - m) * s) / n + sd)));
    } else {
      const mid = (left + right) >>> 1;
      if (less(ids, keys, left, mid)) p = less(ids, keys, mid, right) ? mid : less(ids, keys, left, right) ? right : left;
      else p = less(ids, keys, left, right) ? left : less(ids, keys, mid, right) ? right : mid;
    }
    // the pivot held at right while the pairs below it gather at [left, s)
    const tk = keys[p];
    const tid = ids[p];
    keys[p] = keys[right];
    ids[p] = ids[right];
    let s = left;
    for (let i = left; i < right; i++) {
      const x = keys[i];
      const y = ids[i];
      const below = +(x < tk) | (+(x === tk) & +(y < tid));
      keys[i] = keys[s];
      ids[i] = ids[s];
      keys[s] = x;
      ids[s] = y;
      s += below;
    }
    keys[right] = keys[s];
    ids[right] = ids[s];
    keys[s] = tk;
    ids[s] = tid;
    if (s === k) return;
    if (s < k) left = s + 1;
    else right = s - 1;
  }
}

/** a[from, to) in ascending order: insertion sort for 32 entries or fewer (lists that are short or nearly sorted), else the typed array's sort */
export function sortAscending(a: Int32Array, from: number, to: number): void {
  if (to - from > 32) {
    a.subarray(from, to).sort();
    return;
  }
  for (let i = from + 1; i < to; i++) {
    const x = a[i];
    let j = i;
    while (j > from && a[j - 1] > x) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}
