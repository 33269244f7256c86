/**
 * Prompt compression by an observation window's vote (SnapKV, shared by PyramidKV). The window's
 * attention over the prompt is pooled and the top blocks are kept; generated tokens are appended and
 * kept. Here at block granularity:
 * - the vote: the attention the driver shows at prefill (step -1: the first decode step's attention,
 *   its stand-in for the last prompt queries' attention) — the trace has no per-query prompt rows;
 * - pooling: SnapKV's avg_pool1d(kernel k, padding k/2, stride 1) over tokens, with each block's mass
 *   spread evenly over its B tokens. Summed back per block it is exactly
 *   pooled[b] = m[b] + c/B · (m[b−1] + m[b+1] − 2·m[b]),  c = h(h+1)/(2k), h = ⌊k/2⌋ (c = 0.6 for k = 5)
 *   (mass moving across each block edge; m[−1] = m[n] = 0 with zero padding);
 * - the window: the last ⌈w/B⌉ prompt blocks are always kept (they are the observation window);
 * - selection: top (cap − window) blocks by pooled score by quickselect (bottom-k of the rest evicted);
 *   with several KV groups, each group votes and pools its own scores (SnapKV selects per head) and
 *   the kept blocks are the union of the groups' top blocks, rank by rank (group-rank.ts).
 */
import { bestGroupRank } from './group-rank.js';
import { selectBottomK } from './quickselect.js';

export function pooledBlockScores(mass: Float64Array, n: number, kernel: number, blockSize: number, out: Float64Array): Float64Array {
  const h = Math.floor(kernel / 2);
  const c = (h * (h + 1)) / (2 * kernel) / blockSize;
  for (let b = 0; b < n; b++) {
    const left = b > 0 ? mass[b - 1] : 0;
    const right = b + 1 < n ? mass[b + 1] : 0;
    out[b] = mass[b] + c * (left + right - 2 * mass[b]);
  }
  return out;
}

/**
 * The prompt blocks to evict so that `keep` blocks remain: the window (last windowBlocks of the
 * prompt) is kept, the rest ranked by `score`, the lowest evicted. Returns evicted block ids.
 */
export function snapVictims(promptBlocks: number, windowBlocks: number, keep: number, score: Float64Array): number[] {
  const lo = Math.max(0, promptBlocks - windowBlocks);
  const cand = new Int32Array(lo);
  for (let b = 0; b < lo; b++) cand[b] = b;
  const keepOthers = Math.max(0, keep - (promptBlocks - lo));
  const drop = Math.max(0, lo - keepOthers);
  const k = selectBottomK(cand, lo, drop, (b) => score[b]);
  return Array.from(cand.subarray(0, k));
}

/**
 * snapVictims over several groups' scores (scores[g][b]): the window is kept, the others ranked by
 * their best (rank, group), the worst evicted. One group: snapVictims.
 */
export function snapVictimsGrouped(promptBlocks: number, windowBlocks: number, keep: number, scores: Float64Array[]): number[] {
  if (scores.length === 1) return snapVictims(promptBlocks, windowBlocks, keep, scores[0]);
  const lo = Math.max(0, promptBlocks - windowBlocks);
  const cand = new Int32Array(lo);
  for (let b = 0; b < lo; b++) cand[b] = b;
  const keepOthers = Math.max(0, keep - (promptBlocks - lo));
  const drop = Math.max(0, lo - keepOthers);
  const rank = bestGroupRank(cand, lo, scores.length, (g, b) => scores[g][b], new Float64Array(lo));
  const byBlock = new Float64Array(lo);
  for (let i = 0; i < lo; i++) byBlock[cand[i]] = rank[i];
  const k = selectBottomK(cand, lo, drop, (b) => -byBlock[b]);
  return Array.from(cand.subarray(0, k));
}

/** Decode blocks a trace adds after its prompt (reserved so that generated tokens fit the budget). */
export function decodeReserveBlocks(promptTokens: number, steps: number, blockSize: number): number {
  return Math.ceil((promptTokens + steps) / blockSize) - Math.ceil(promptTokens / blockSize);
}
