import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { ArcPolicy } from '../../serving/arc-policy.js';
import type { CachePolicy } from '../../serving/cache-policy.js';
import { getCachePolicy, listCachePolicies, registerCachePolicy } from '../../serving/cache-policy-registry.js';
import { LfuPolicy } from '../../serving/lfu-policy.js';
import { LruPolicy } from '../../serving/lru-policy.js';
import { S3FifoPolicy } from '../../serving/s3fifo-policy.js';

const drain = (p: CachePolicy): number[] => {
  const out: number[] = [];
  for (let id = p.evict(); id >= 0; id = p.evict()) out.push(id);
  return out;
};

describe('cache policy registry', () => {
  it('lists lru, lfu, arc and s3fifo with descriptions and rejects duplicates', () => {
    const names = listCachePolicies().map((p) => p.name);
    expect(names).toEqual(['lru', 'lfu', 'arc', 's3fifo']);
    for (const p of listCachePolicies()) expect(p.description.length).toBeGreaterThan(10);
    expect(() => registerCachePolicy(getCachePolicy('lru'))).toThrow(/already registered/);
    expect(() => getCachePolicy('mru')).toThrow('unknown cache policy "mru" (valid: lru, lfu, arc, s3fifo)');
  });
});

describe('LRU', () => {
  it('evicts least recently used first; pinned blocks wait and come back as most recent', () => {
    const p = new LruPolicy();
    for (const id of [1, 2, 3, 4]) p.insert(id, false);
    p.access(1);
    p.pin(2);
    p.insert(5, true);
    expect(p.evict()).toBe(3);
    p.unpin(2);
    p.unpin(5);
    expect(drain(p)).toEqual([4, 1, 2, 5]);
  });

  it('forgets removed blocks', () => {
    const p = new LruPolicy();
    for (const id of [7, 8, 9]) p.insert(id, false);
    p.remove(8);
    expect(drain(p)).toEqual([7, 9]);
  });
});

describe('LFU', () => {
  it('evicts the least used, least recent among equals', () => {
    const p = new LfuPolicy();
    for (const id of [1, 2, 3]) p.insert(id, false);
    p.access(1);
    p.access(1);
    p.access(3);
    // uses: 1 -> 3, 2 -> 1, 3 -> 2
    expect(drain(p)).toEqual([2, 3, 1]);
  });

  it('counts uses while pinned and restarts at 1 after leaving', () => {
    const p = new LfuPolicy();
    p.insert(1, false);
    p.insert(2, true);
    p.access(2);
    p.access(2);
    p.unpin(2);
    expect(p.evict()).toBe(1);
    p.insert(1, false);
    p.access(1);
    expect(p.evict()).toBe(1); // 1 has 2 uses, 2 has 3
    expect(p.evict()).toBe(2);
    expect(p.evict()).toBe(-1);
  });
});

describe('ARC', () => {
  it('keeps a block used twice through a scan of blocks used once', () => {
    const p = new ArcPolicy(4);
    p.insert(100, false);
    p.access(100); // in T2
    const evicted: number[] = [];
    for (let id = 1; id <= 10; id++) {
      if (id > 3) evicted.push(p.evict()); // a cache of 4: make room before each insert
      p.insert(id, false);
    }
    expect(evicted).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(drain(p)).toEqual([8, 9, 10, 100]);
  });

  it('grows its recency target on ghost hits in B1 until it evicts from T2 (evict before insert, as the cache does)', () => {
    const p = new ArcPolicy(4);
    const evicted: number[] = [];
    const put = (id: number) => {
      evicted.push(p.evict());
      p.insert(id, false);
    };
    for (const id of [1, 2, 3, 4]) p.insert(id, false);
    p.access(4); // T1 = 1 2 3, T2 = 4
    put(5); // evicts 1 to B1
    put(1); // evicts 2 to B1; 1 is a ghost hit: p 0 -> 1, 1 goes to T2
    expect(p.p).toBe(1);
    put(2); // |T1| = 2 > p: evicts 3; 2 is a ghost hit: p -> 2
    expect(p.p).toBe(2);
    put(8); // |T1| = 1 <= p: now T2's least recent goes
    expect(evicted).toEqual([1, 2, 3, 4]);
    expect(drain(p)).toEqual([1, 2, 5, 8]); // |T1| = 2 is not > p = 2: T2 first
  });
});

describe('S3-FIFO', () => {
  it('filters one-hit blocks through the small queue and keeps reused ones in main', () => {
    const p = new S3FifoPolicy(10);
    for (let id = 1; id <= 5; id++) p.insert(id, false);
    p.access(2);
    // small holds 5 > 10% of 10: evict from it; 1 unused -> out, 2 used -> moves to main
    expect(p.evict()).toBe(1);
    expect(p.evict()).toBe(3);
    // a returning ghost goes straight to main
    p.insert(1, false);
    expect(drain(p)).toEqual([4, 5, 2, 1]);
  });
});

describe('every policy', () => {
  for (const def of listCachePolicies()) {
    it(`${def.name}: evicts only resident unpinned blocks, and -1 only when there are none (random ops)`, () => {
      const rng = seedrandom(`policy-${def.name}`);
      const p = def.create(32);
      const resident = new Set<number>();
      const pinned = new Set<number>();
      for (let step = 0; step < 20000; step++) {
        const op = rng();
        const id = Math.floor(rng() * 64);
        if (op < 0.35) {
          if (resident.has(id)) continue;
          const pin = rng() < 0.3;
          p.insert(id, pin);
          resident.add(id);
          if (pin) pinned.add(id);
        } else if (op < 0.55) {
          if (resident.has(id)) p.access(id);
        } else if (op < 0.65) {
          if (resident.has(id) && !pinned.has(id)) {
            p.pin(id);
            pinned.add(id);
          }
        } else if (op < 0.75) {
          if (pinned.has(id)) {
            p.unpin(id);
            pinned.delete(id);
          }
        } else if (op < 0.8) {
          if (resident.has(id)) {
            p.remove(id);
            resident.delete(id);
            pinned.delete(id);
          }
        } else {
          const v = p.evict();
          if (v < 0) {
            expect(resident.size - pinned.size).toBe(0);
          } else {
            expect(resident.has(v)).toBe(true);
            expect(pinned.has(v)).toBe(false);
            resident.delete(v);
          }
        }
      }
      for (const id of pinned) p.unpin(id);
      expect(drain(p).sort((a, b) => a - b)).toEqual([...resident].sort((a, b) => a - b));
    });
  }
});
