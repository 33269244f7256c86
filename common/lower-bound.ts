/** The first index i in 0..n with list[base + i] >= x, where list[base .. base + n) is ascending (binary search). */
export function lowerBound(list: ArrayLike<number>, base: number, n: number, x: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[base + mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
