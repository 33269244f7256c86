/** Selection without sorting: the k-th largest of n values in expected linear time (quickselect). */

/**
 * The k-th largest value (k = 1 is the maximum) of a[0 .. n). Reorders a[0 .. n) in place: pass a
 * scratch copy when the order matters.
 */
export function kthLargest(a: Float64Array, n: number, k: number): number {
  if (!(k >= 1 && k <= n)) throw new Error(`kthLargest: k must be in [1, ${n}], got ${k}`);
  const target = k - 1;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    // median of three as the pivot, so sorted input stays linear
    const mid = (lo + hi) >>> 1;
    const x = a[lo]!;
    const y = a[mid]!;
    const z = a[hi]!;
    const pivot = x > y ? (y > z ? y : x > z ? z : x) : x > z ? x : y > z ? z : y;
    let i = lo;
    let j = hi;
    // descending partition: a[lo..j] >= pivot >= a[i..hi]
    while (i <= j) {
      while (a[i]! > pivot) i++;
      while (a[j]! < pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return a[target]!;
  }
  return a[target]!;
}
