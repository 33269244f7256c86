import { describe, expect, it } from 'vitest';
import { createCachePolicy, getCachePolicy, listCachePolicies, resolveCachePolicyOptions } from '../../serving/cache-policy-registry.js';

describe('cache policy options', () => {
  it('every policy declares its typed options; s3fifo has small_share (default 0.1)', () => {
    expect(listCachePolicies().map((p) => [p.name, p.options.map((o) => `${o.name}=${o.default}`)])).toEqual([
      ['lru', []],
      ['lfu', []],
      ['arc', []],
      ['s3fifo', ['small_share=0.1']],
    ]);
    expect(resolveCachePolicyOptions(getCachePolicy('s3fifo'))).toEqual({ small_share: 0.1 });
    expect(resolveCachePolicyOptions(getCachePolicy('s3fifo'), { small_share: '0.5' })).toEqual({ small_share: 0.5 });
  });

  it('rejects unknown and out-of-range options naming the policy and what is valid', () => {
    expect(() => createCachePolicy('lru', 4, { size: 1 })).toThrow('cache policy lru: unknown option "size" (options: (none))');
    expect(() => createCachePolicy('s3fifo', 4, { small_share: 1.5 })).toThrow('cache policy s3fifo: option small_share must be <= 1 (got 1.5)');
    expect(() => createCachePolicy('fifo', 4)).toThrow('unknown cache policy "fifo" (valid: lru, lfu, arc, s3fifo)');
  });

  it("s3fifo's small_share decides which queue gives the victim", () => {
    // block 1 is evicted to the ghost FIFO and returns (to the main FIFO); 2 and 3 enter the small
    // FIFO. With 10% of 4 blocks the small FIFO is over its share and gives 2; with 100% it is not,
    // so the main FIFO gives 1.
    const victim = (raw: Record<string, unknown>) => {
      const p = createCachePolicy('s3fifo', 4, raw);
      p.insert(1, false);
      expect(p.evict()).toBe(1);
      p.insert(1, false);
      p.insert(2, false);
      p.insert(3, false);
      return p.evict();
    };
    expect(victim({})).toBe(2);
    expect(victim({ small_share: 1 })).toBe(1);
    // without options, create() takes the defaults
    const p = getCachePolicy('s3fifo').create(4);
    p.insert(1, false);
    p.evict();
    p.insert(1, false);
    p.insert(2, false);
    p.insert(3, false);
    expect(p.evict()).toBe(2);
  });
});
