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

/** positions scanned at a time by selectTop's partitions (ranges of 2 · BLOCK or more) */
const BLOCK = 64;
/** selectTop's scratch: offsets of the stops found in the current left and right blocks */
const stopsLeft = new Int32Array(BLOCK);
const stopsRight = new Int32Array(BLOCK);

/**
 * Reorders cand[0..n) so that its first k entries are the k best-ranked blocks (by `score`, ties to
 * the lower block), in no particular order. Quickselect with a deterministic middle pivot and Hoare
 * partitions: O(n) expected, no allocation.
 *
 * A partition pairs the i-th entry from the left that does not rank before the pivot (a left stop)
 * with the i-th entry from the right that does not rank after it (a right stop), and swaps each pair
 * until the two scans meet. On a range of 2 · BLOCK entries or more the stops are found a block of
 * BLOCK entries at a time, each entry's test added to a count instead of branched on (the test falls
 * either way at random, so a branch on it is mispredicted about half the time), and the pairs are
 * swapped in the same order; the scans go on one entry at a time from where the blocks leave off
 * (the same swaps, the same final scan positions, so the same order of cand as with scans alone).
 *
 * `bounds`, if given, receives the range ends the search went through (n − 1 first, then each
 * smaller one, as many as it holds) and the count is returned: every entry after a recorded end ranks after every entry
 * from k to that end (NaN scores, which rank neither before nor after anything, aside), so that the best-ranked entry of cand[from..n), for from >= k, is the best of
 * cand[from..e] for the least recorded end e >= from (see bringBest's `end`).
 */
export function selectTop(cand: Int32Array, n: number, k: number, score: Float64Array, bounds?: Int32Array): number {
  let lo = 0;
  let hi = n - 1;
  // (the scratch as locals: read once, not at every use in the loops)
  const stopL = stopsLeft;
  const stopR = stopsRight;
  let nb = 0;
  let record = bounds !== undefined;
  if (record && bounds!.length > 0) bounds![nb++] = hi;
  if (k <= 0 || k >= n) return nb;
  while (lo < hi) {
    const pivot = cand[(lo + hi) >>> 1];
    const ps = score[pivot];
    // (a NaN pivot ranks neither before nor after any entry: its partition, and so every later end, bounds nothing)
    if (ps !== ps) record = false;
    let i = lo;
    let j = hi;
    // block phase: [i, j] not yet scanned; stops found but not yet paired at i0 + stopL[sl..nl) (left)
    // and j0 - stopR[sr..nr) (right)
    let i0 = 0;
    let nl = 0;
    let sl = 0;
    let j0 = 0;
    let nr = 0;
    let sr = 0;
    // the last pair swapped (−1: none)
    let lastL = -1;
    let lastR = -1;
    if (j - i + 1 >= 2 * BLOCK) {
      for (;;) {
        if (sl === nl) {
          if (j - i + 1 < BLOCK) break;
          i0 = i;
          nl = 0;
          sl = 0;
          for (let x = 0; x < BLOCK; x++) {
            const c = cand[i0 + x];
            const s = score[c];
            stopL[nl] = x;
            // not before the pivot: neither a higher score nor the same score and a lower block
            nl += 1 - (+(s > ps) | (+(s === ps) & +(c < pivot)));
          }
          i = i0 + BLOCK;
        }
        if (sr === nr) {
          if (j - i + 1 < BLOCK) break;
          j0 = j;
          nr = 0;
          sr = 0;
          for (let x = 0; x < BLOCK; x++) {
            const c = cand[j0 - x];
            const s = score[c];
            stopR[nr] = x;
            // not after the pivot
            nr += 1 - (+(ps > s) | (+(s === ps) & +(pivot < c)));
          }
          j = j0 - BLOCK;
        }
        const m = Math.min(nl - sl, nr - sr);
        for (let q = 0; q < m; q++) {
          const a = i0 + stopL[sl + q];
          const b = j0 - stopR[sr + q];
          const t = cand[a];
          cand[a] = cand[b];
          cand[b] = t;
        }
        if (m > 0) {
          lastL = i0 + stopL[sl + m - 1];
          lastR = j0 - stopR[sr + m - 1];
        }
        sl += m;
        sr += m;
      }
    }
    // the scans one entry at a time, from the state the blocks left: after a swap at (lastL, lastR)
    // whose scans would already have crossed, the partition is done
    if (lastL >= 0 && lastL + 1 > lastR - 1) {
      i = lastL + 1;
      j = lastR - 1;
    } else {
      if (sl < nl) i = i0 + stopL[sl];
      if (sr < nr) j = j0 - stopR[sr];
      for (;;) {
        while (before(score, cand[i], pivot)) i++;
        while (before(score, pivot, cand[j])) j--;
        if (i <= j) {
          const t = cand[i];
          cand[i] = cand[j];
          cand[j] = t;
          i++;
          j--;
        }
        if (!(i <= j)) break;
      }
    }
    // [lo, j] rank before or equal to the pivot, [i, hi] after or equal
    if (k - 1 <= j) {
      hi = j;
      if (record && nb < bounds!.length) bounds![nb++] = hi;
    } else if (k - 1 >= i) lo = i;
    else return nb;
  }
  return nb;
}

/**
 * Moves the best-ranked of cand[from..n) to cand[from]. O(n − from); with `end` (from <= end < n),
 * the best of cand[from..end] only, for when every entry after end ranks after those (selectTop's
 * bounds).
 */
export function bringBest(cand: Int32Array, from: number, n: number, score: Float64Array, end = n - 1): void {
  let at = from;
  for (let i = from + 1; i <= end; i++) if (before(score, cand[i], cand[at])) at = i;
  const t = cand[from];
  cand[from] = cand[at];
  cand[at] = t;
}
