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
  // (key, id) of position a before that of position b
  const less = (a: number, b: number) => keys[a] < keys[b] || (keys[a] === keys[b] && ids[a] < ids[b]);
  let lo = 0;
  let hi = count - 1;
  const target = k - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    // median of three to the middle
    if (less(mid, lo)) swap(ids, keys, mid, lo);
    if (less(hi, lo)) swap(ids, keys, hi, lo);
    if (less(hi, mid)) swap(ids, keys, hi, mid);
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

function swap(a: Int32Array | number[], keys: Float64Array, i: number, j: number): void {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
  const u = keys[i];
  keys[i] = keys[j];
  keys[j] = u;
}
