/**
 * The prefix cache alone, without timing: requests in arrival order, each looks up its leading
 * cached run, then all its blocks are held (matched ones used, new ones inserted, as many as tier 0
 * can take with the matched ones kept) and released at once. Fast enough to sweep the cache size
 * over many orders of magnitude; with unbounded capacity it gives the trace's theoretical ratio.
 */
import type { ServingRequest } from '../traces/requests/request.js';
import type { CachePolicyDefinition } from './cache-policy.js';
import { hitTokensByTier, matchedTokens } from './prefix-hits.js';
import { TieredPrefixCache, type CacheTier } from './tiered-prefix-cache.js';

export interface PrefixReplayResult {
  policy: string;
  tiers: { name: string; capacity_tokens: number; hit_tokens: number; hit_ratio: number }[];
  requests: number;
  input_tokens: number;
  /** prefix-matched tokens (all tiers) */
  hit_tokens: number;
  /** hit_tokens / input_tokens */
  prefix_hit_ratio: number;
  blocks_dropped: number;
}

export function replayPrefixCache(
  requests: readonly ServingRequest[],
  tiers: readonly CacheTier[],
  policy: CachePolicyDefinition,
  blockTokens: number,
): PrefixReplayResult {
  const cache = new TieredPrefixCache(tiers, policy, blockTokens);
  const perTier = new Float64Array(tiers.length);
  const hitPerTier = new Float64Array(tiers.length);
  let input = 0;
  let hit = 0;
  for (const r of requests) {
    const ids = r.hash_ids;
    const k = cache.lookup(ids);
    const held = Math.max(0, cache.fitCount(ids, k, 0));
    cache.acquire(ids, k, held, 0);
    hit += hitTokensByTier(cache, k, r.input_tokens, perTier);
    for (let t = 0; t < perTier.length; t++) hitPerTier[t] += perTier[t];
    cache.release(ids, held, 0);
    input += r.input_tokens;
  }
  return {
    policy: policy.name,
    tiers: tiers.map((t, i) => ({
      name: t.name,
      capacity_tokens: t.capacityTokens,
      hit_tokens: hitPerTier[i],
      hit_ratio: input > 0 ? hitPerTier[i] / input : 0,
    })),
    requests: requests.length,
    input_tokens: input,
    hit_tokens: hit,
    prefix_hit_ratio: input > 0 ? hit / input : 0,
    blocks_dropped: cache.dropped,
  };
}

/**
 * Blocks each request would match (its leading cached run) with an unbounded cache, the most any
 * cache can reuse, computed directly with a set of seen blocks, independent of the cache classes.
 */
export function unboundedMatchedBlocks(requests: readonly ServingRequest[]): Int32Array {
  const seen = new Set<number>();
  const out = new Int32Array(requests.length);
  requests.forEach((r, j) => {
    const ids = r.hash_ids;
    let k = 0;
    while (k < ids.length && seen.has(ids[k])) k++;
    out[j] = k;
    for (const id of ids) seen.add(id);
  });
  return out;
}

/** The trace's theoretical prefix-cache ratio: unbounded-cache matched tokens / input tokens. */
export function theoreticalPrefixHitRatio(requests: readonly ServingRequest[], blockTokens: number): number {
  const k = unboundedMatchedBlocks(requests);
  let hit = 0;
  let input = 0;
  requests.forEach((r, j) => {
    hit += matchedTokens(k[j], r.input_tokens, blockTokens);
    input += r.input_tokens;
  });
  return input > 0 ? hit / input : 0;
}
