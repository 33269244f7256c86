/**
 * SmartKV's bit allocation under an average: blocks ranked by importance (most important first) take,
 * in turn, the widest of {8, 4, 3, 2} bits that the budget left pays for; every block costs at least
 * 2 bits, so the budget is (avg − 2) · n extra bits over all-2. The greedy rule in closed form: the
 * first floor(extra / 6) blocks take 8 bits, at most three next ones take 4 or 3 from the remainder,
 * every other block 2 — so only the top of the ranking has to be found, not the whole order.
 */

export const SMARTKV_WIDTHS = [8, 4, 3, 2] as const;

/**
 * The widths the greedy rule gives ranks 0, 1, ... for n blocks at an average of avg bits, up to the
 * first rank that gets 2 bits (every later rank gets 2 as well), written to `out`; returns how many.
 */
export function rankWidths(n: number, avg: number, out: Uint8Array): number {
  let extra = (avg - 2) * n;
  let r = 0;
  while (r < n) {
    let bits = 2;
    for (const w of SMARTKV_WIDTHS) {
      if (w - 2 <= extra + 1e-9) {
        bits = w;
        break;
      }
    }
    if (bits === 2) break;
    out[r++] = bits;
    extra -= bits - 2;
  }
  return r;
}

/** Bits per block for blocks ranked by importance (most important first) at an average of avg bits. */
export function allocateBits(order: readonly number[], avg: number): Map<number, number> {
  const widths = new Uint8Array(order.length);
  const r = rankWidths(order.length, avg, widths);
  return new Map(order.map((b, i) => [b, i < r ? widths[i] : 2]));
}

/** true when block a ranks before block b: higher score, ties to the lower block */
const before = (s: Float64Array, a: number, b: number): boolean => s[a] > s[b] || (s[a] === s[b] && a < b);

/**
 * Reorders cand[0..n) so that its first k entries are the k best-ranked blocks (by `score`, ties to
 * the lower block), in no particular order. Quickselect with a deterministic middle pivot: O(n)
 * expected, no allocation.
 */
export function selectTop(cand: Int32Array, n: number, k: number, score: Float64Array): void {
  let lo = 0;
  let hi = n - 1;
  if (k <= 0 || k >= n) return;
  while (lo < hi) {
    const pivot = cand[(lo + hi) >>> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (before(score, cand[i], pivot)) i++;
      while (before(score, pivot, cand[j])) j--;
      if (i <= j) {
        const t = cand[i];
        cand[i] = cand[j];
        cand[j] = t;
        i++;
        j--;
      }
    }
    // [lo, j] rank before or equal to the pivot, [i, hi] after or equal
    if (k - 1 <= j) hi = j;
    else if (k - 1 >= i) lo = i;
    else return;
  }
}

/** Moves the best-ranked of cand[from..n) to cand[from]. O(n − from). */
export function bringBest(cand: Int32Array, from: number, n: number, score: Float64Array): void {
  let at = from;
  for (let i = from + 1; i < n; i++) if (before(score, cand[i], cand[at])) at = i;
  const t = cand[from];
  cand[from] = cand[at];
  cand[at] = t;
}
