/**
 * Prefix tokens a request reuses, per tier: its matched prefix is the leading run of its blocks
 * that is cached, `blockTokens` tokens each, capped at its input length (the last block of an input
 * is usually partial). The cap is taken off the tier that held the last matched block.
 */
import type { TieredPrefixCache } from './tiered-prefix-cache.js';

export function matchedTokens(matchedBlocks: number, inputTokens: number, blockTokens: number): number {
  return Math.min(matchedBlocks * blockTokens, inputTokens);
}

/** Fill `out[t]` with the tokens hit in tier t by the last `acquire` of `cache`; returns the total. */
export function hitTokensByTier(cache: TieredPrefixCache, matchedBlocks: number, inputTokens: number, out: Float64Array): number {
  const bt = cache.blockTokens;
  for (let t = 0; t < out.length; t++) out[t] = cache.hitBlocks[t] * bt;
  const total = matchedTokens(matchedBlocks, inputTokens, bt);
  if (matchedBlocks > 0) out[cache.lastHitTier] -= matchedBlocks * bt - total;
  return total;
}
