/**
 * Selection across KV-head groups under one per-layer block budget. A policy defined per head picks
 * its blocks in each group; a layer's block holds every group's KV, so the layer keeps the union.
 * Taken rank by rank — every group's best block, then every group's second best, ... — the union of
 * each group's top k for the largest k that fits, then the next rank in group order. A block's
 * position in that order is its best (rank, group) over the groups: key = min_g (rank_g · G + g),
 * unique per block. Keep the smallest keys; drop the largest.
 */

let order = new Int32Array(256);

/**
 * For cand[0..n): out[i] = min over groups g of rank_g(cand[i]) · G + g, where rank_g orders the
 * candidates by score(g, block) descending, ties to the higher block. O(G · n log n).
 */
export function bestGroupRank(cand: Int32Array | number[], n: number, G: number, score: (g: number, block: number) => number, out: Float64Array): Float64Array {
  if (order.length < n) order = new Int32Array(Math.max(n, 2 * order.length));
  for (let i = 0; i < n; i++) out[i] = Infinity;
  for (let g = 0; g < G; g++) {
    const ord = order.subarray(0, n);
    for (let i = 0; i < n; i++) ord[i] = i;
    ord.sort((x, y) => score(g, cand[y]) - score(g, cand[x]) || cand[y] - cand[x]);
    for (let r = 0; r < n; r++) {
      const key = r * G + g;
      if (key < out[ord[r]]) out[ord[r]] = key;
    }
  }
  return out;
}
