/**
 * Selection across KV-head groups under one per-layer block budget. A policy defined per head picks
 * its blocks in each group; a layer's block holds every group's KV, so the layer keeps the union.
 * Taken rank by rank — every group's best block, then every group's second best, ... — the union of
 * each group's top k for the largest k that fits, then the next rank in group order. A block's
 * position in that order is its best (rank, group) over the groups: key = min_g (rank_g · G + g),
 * unique per block. Keep the smallest keys; drop the largest.
 *
 * Each group's order comes without comparisons: a radix sort (least significant byte first, stable) of
 * the candidates, taken in descending block order, by the upper 32 bits of their score's IEEE-754
 * pattern, mapped so that a higher score has a smaller unsigned number; a run of candidates with
 * equal upper bits whose lower 32 bits differ is then put in order by the lower bits (the higher
 * block first on equal bits), by insertion where the run is short, else by a comparator sort of that
 * run alone.
 */

const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
const HI = LITTLE_ENDIAN ? 1 : 0;
const LO = 1 - HI;
/** runs of equal upper bits up to this long are put in order by insertion sort */
const SHORT_RUN = 16;

let size = 0;
let bits = new Float64Array(0);
// (as int32: bit patterns at or above 2^31 would be doubles in a Uint32Array's reads)
let words = new Int32Array(0);
let upper = new Int32Array(0);
let lower = new Int32Array(0);
let start = new Int32Array(0);
let order = new Int32Array(0);
let spare = new Int32Array(0);
let indexOf = new Int32Array(0);
const counts = new Int32Array(256);

function room(n: number): void {
  if (size >= n) return;
  size = Math.max(n, 2 * size, 256);
  bits = new Float64Array(size);
  words = new Int32Array(bits.buffer);
  upper = new Int32Array(size);
  lower = new Int32Array(size);
  start = new Int32Array(size);
  order = new Int32Array(size);
  spare = new Int32Array(size);
}

/**
 * For cand[0..n) (distinct blocks, none negative, no score NaN): out[i] = min over groups g of
 * rank_g(cand[i]) · G + g, where rank_g orders the candidates by score(g, block) descending, ties
 * (−0 and 0 among them) to the higher block. O(G · n + the largest block) but for runs of scores
 * that share their upper 32 bits, which are sorted among themselves.
 */
export function bestGroupRank(cand: Int32Array | number[], n: number, G: number, score: (g: number, block: number) => number, out: Float64Array): Float64Array {
  room(n);
  let top = 0;
  for (let i = 0; i < n; i++) {
    out[i] = Infinity;
    if (cand[i] > top) top = cand[i];
  }
  if (indexOf.length <= top) indexOf = new Int32Array(Math.max(top + 1, 2 * indexOf.length));
  for (let i = 0; i < n; i++) indexOf[cand[i]] = i;
  // the candidates in descending block order (indexOf may hold entries of earlier calls: checked)
  let m = 0;
  for (let b = top; b >= 0 && m < n; b--) {
    const i = indexOf[b];
    if (i < n && cand[i] === b) start[m++] = i;
  }
  const byLower = (x: number, y: number) => lower[x] - lower[y] || cand[y] - cand[x];
  for (let g = 0; g < G; g++) {
    for (let i = 0; i < n; i++) {
      // (+ 0 makes −0 into 0: they compare equal)
      bits[i] = score(g, cand[i]) + 0;
      const hi = words[2 * i + HI];
      const lo = words[2 * i + LO];
      // descending as unsigned 32-bit patterns: a negative score's as it is (at or above 2^31), a positive
      // one's with every bit flipped but the sign (below 2^31); the lower word with its top bit flipped,
      // so that int32 order is that unsigned order
      const neg = hi < 0;
      upper[i] = neg ? hi : ~hi & 0x7fffffff;
      lower[i] = (neg ? lo : ~lo) ^ 0x80000000;
    }
    // stable radix sort by the upper bits, a byte at a time (a byte every candidate shares is skipped)
    let src = order;
    let dst = spare;
    src.set(start.subarray(0, n));
    for (let shift = 0; shift < 32; shift += 8) {
      counts.fill(0);
      for (let r = 0; r < n; r++) counts[(upper[src[r]] >>> shift) & 255]++;
      if (counts[(upper[src[0]] >>> shift) & 255] === n) continue;
      let sum = 0;
      for (let d = 0; d < 256; d++) {
        const c = counts[d];
        counts[d] = sum;
        sum += c;
      }
      for (let r = 0; r < n; r++) {
        const i = src[r];
        dst[counts[(upper[i] >>> shift) & 255]++] = i;
      }
      const t = src;
      src = dst;
      dst = t;
    }
    // runs of equal upper bits: in order of the lower bits where those differ
    for (let r = 0; r < n; ) {
      const u = upper[src[r]];
      let e = r + 1;
      let mixed = false;
      while (e < n && upper[src[e]] === u) {
        if (lower[src[e]] !== lower[src[r]]) mixed = true;
        e++;
      }
      if (mixed) {
        if (e - r > SHORT_RUN) src.subarray(r, e).sort(byLower);
        else {
          // a short run (most are a few candidates): insertion sort in place
          for (let a = r + 1; a < e; a++) {
            const x = src[a];
            let z = a - 1;
            while (z >= r && byLower(src[z], x) > 0) {
              src[z + 1] = src[z];
              z--;
            }
            src[z + 1] = x;
          }
        }
      }
      r = e;
    }
    for (let r = 0; r < n; r++) {
      const i = src[r];
      const key = r * G + g;
      if (key < out[i]) out[i] = key;
    }
  }
  return out;
}
