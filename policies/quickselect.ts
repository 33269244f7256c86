/**
 * Bottom-k selection in expected linear time (Hoare's quickselect with median-of-three pivots),
 * not a sort. Reorders `ids` in place so that ids[0..k-1] hold the k ids with the smallest keys
 * (ties broken by id, so the choice is deterministic). Returns k (clamped to ids.length).
 */
export function selectBottomK(ids: Int32Array | number[], count: number, k: number, key: (id: number) => number): number {
  if (k <= 0) return 0;
  if (k >= count) return count;
  const less = (a: number, b: number) => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb || (ka === kb && a < b);
  };
  let lo = 0;
  let hi = count - 1;
  const target = k - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    // median of three to the middle
    if (less(ids[mid], ids[lo])) swap(ids, mid, lo);
    if (less(ids[hi], ids[lo])) swap(ids, hi, lo);
    if (less(ids[hi], ids[mid])) swap(ids, hi, mid);
    const pivot = ids[mid];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (less(ids[i], pivot)) i++;
      while (less(pivot, ids[j])) j--;
      if (i <= j) {
        swap(ids, i, j);
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

function swap(a: Int32Array | number[], i: number, j: number): void {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
}
