import { describe, expect, it } from 'vitest';
import { readRequestTrace } from '../../traces/requests/read-request-trace.js';
import { bundledTracePath } from '../../traces/requests/bundled-traces.js';
import { replayBelady } from '../../serving/belady-replay.js';
import { getCachePolicy, listCachePolicies } from '../../serving/cache-policy-registry.js';
import { replayPrefixCache, theoreticalPrefixHitRatio, unboundedMatchedBlocks } from '../../serving/prefix-replay.js';
import { requests } from './helpers.js';

// block size 4 tokens; matched prefix = leading cached run, capped at the input length
const hand = requests([
  [0, 10, 1, [1, 2, 3]], // nothing cached: 0
  [1, 12, 1, [1, 2, 4]], // 1, 2 cached: 8
  [2, 5, 1, [1, 5]], // 1: 4
  [3, 9, 1, [1, 2, 3]], // all three: min(12, 9) = 9
]);
const one = (capacityTokens: number) => [{ name: 'cache', capacityTokens }];

describe('prefix-cache replay', () => {
  it('gives the hand-computed ratio with an unbounded cache, for every policy', () => {
    expect([...unboundedMatchedBlocks(hand)]).toEqual([0, 2, 1, 3]);
    expect(theoreticalPrefixHitRatio(hand, 4)).toBe(21 / 36);
    for (const p of listCachePolicies()) {
      const r = replayPrefixCache(hand, one(Infinity), p, 4);
      expect(r.hit_tokens).toBe(21);
      expect(r.input_tokens).toBe(36);
      expect(r.prefix_hit_ratio).toBe(21 / 36);
    }
  });

  it('with LRU and room for 3 blocks, evicts the leaf of the old prefix first (hand-computed)', () => {
    // A leaves 1 2 3 (3 least recent); B evicts 3 for 4; C evicts 4 for 5; D finds 1 2 but not 3,
    // and evicts 5 to bring 3 back
    const r = replayPrefixCache(hand, one(12), getCachePolicy('lru'), 4);
    expect(r.hit_tokens).toBe(0 + 8 + 4 + 8);
    expect(r.blocks_dropped).toBe(3);
  });

  it('keeps the head of a request larger than the cache', () => {
    const big = requests([
      [0, 40, 1, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
      [1, 40, 1, [1, 2, 3, 4, 5, 6, 7, 8, 9, 11]],
    ]);
    // 3 blocks of room: the first request leaves its first 3 blocks, the second reuses them
    expect(replayPrefixCache(big, one(12), getCachePolicy('lru'), 4).hit_tokens).toBe(12);
    expect(replayBelady(big, 12, 4).hit_tokens).toBe(12);
  });

  it('Belady with future knowledge beats LRU where recency misleads', () => {
    // 1 is reused at the end, 2 and 3 never: LRU keeps the recent useless blocks
    const t = requests([
      [0, 4, 1, [1]],
      [1, 4, 1, [2]],
      [2, 4, 1, [3]],
      [3, 4, 1, [1]],
    ]);
    expect(replayPrefixCache(t, one(8), getCachePolicy('lru'), 4).hit_tokens).toBe(0);
    expect(replayBelady(t, 8, 4).hit_tokens).toBe(4);
    expect(replayBelady(t, 0, 4).hit_tokens).toBe(0);
  });
});

describe('against the Mooncake paper (FAST\'25)', () => {
  const conv = readRequestTrace(bundledTracePath('conversation')).requests;
  const syn = readRequestTrace(bundledTracePath('synthetic')).requests;
  const lru = getCachePolicy('lru');

  it('unbounded prefix cache ratios near Table 2 (about 40% and 66%), equal to the unbounded replay', () => {
    const c = theoreticalPrefixHitRatio(conv, 512);
    const s = theoreticalPrefixHitRatio(syn, 512);
    // measured 37.36% and 65.12%; the conversation sample is cold-started (see serving/prefix-hit-curve.ts)
    expect(c).toBeGreaterThan(0.37);
    expect(c).toBeLessThan(0.4);
    expect(Math.abs(s - 0.66)).toBeLessThan(0.015);
    expect(replayPrefixCache(conv, one(Infinity), lru, 512).prefix_hit_ratio).toBe(c);
    expect(replayPrefixCache(syn, one(Infinity), getCachePolicy('arc'), 512).prefix_hit_ratio).toBe(s);
  });

  it('Figure 9: 3M tokens reach under half of the maximum, 50M nearly all of it (LRU)', () => {
    for (const reqs of [conv, syn]) {
      const max = theoreticalPrefixHitRatio(reqs, 512);
      expect(replayPrefixCache(reqs, one(3e6), lru, 512).prefix_hit_ratio / max).toBeLessThan(0.5);
      expect(replayPrefixCache(reqs, one(5e7), lru, 512).prefix_hit_ratio / max).toBeGreaterThan(0.98);
    }
  });

  it('the oracle bounds every policy (first 3000 conversation requests)', () => {
    const head = conv.slice(0, 3000);
    for (const cap of [1e5, 1e6, 5e6]) {
      const bound = replayBelady(head, cap, 512).hit_tokens;
      for (const p of listCachePolicies()) expect(replayPrefixCache(head, one(cap), p, 512).hit_tokens).toBeLessThanOrEqual(bound);
    }
  });
});
