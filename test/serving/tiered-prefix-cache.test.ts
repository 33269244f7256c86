import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { readRequestTrace } from '../../traces/requests/read-request-trace.js';
import { bundledTracePath } from '../../traces/requests/bundled-traces.js';
import { getCachePolicy, listCachePolicies } from '../../serving/cache-policy-registry.js';
import { hitTokensByTier } from '../../serving/prefix-hits.js';
import { replayPrefixCache } from '../../serving/prefix-replay.js';
import { NOT_CACHED, TieredPrefixCache } from '../../serving/tiered-prefix-cache.js';

const lru = getCachePolicy('lru');

/** One request through the cache the way the fast replay does it. */
function access(c: TieredPrefixCache, ids: number[], extra = 0): { k: number; held: number } {
  const k = c.lookup(ids);
  const held = c.fitCount(ids, k, extra);
  c.acquire(ids, k, held, extra);
  return { k, held };
}

describe('TieredPrefixCache', () => {
  it('demotes evicted blocks down the tiers, promotes hits to HBM and drops from the last tier (hand trace)', () => {
    const c = new TieredPrefixCache([{ name: 'hbm', capacityTokens: 8 }, { name: 'dram', capacityTokens: 8 }], lru, 4);
    const where = () => [1, 2, 3, 5, 6, 7].map((id) => c.tierOf(id));
    // A: blocks 1, 2 into HBM; released tail first, so 2 is least recent
    let a = access(c, [1, 2]);
    c.release([1, 2], a.held, 0);
    // B: block 3 needs room: 2 goes down to DRAM
    a = access(c, [3]);
    c.release([3], a.held, 0);
    expect(where()).toEqual([0, 1, 0, NOT_CACHED, NOT_CACHED, NOT_CACHED]);
    // C: 1 hits in HBM, 2 in DRAM (promoted; 3 makes way), 5 does not fit beside them
    a = access(c, [1, 2, 5]);
    expect(a).toEqual({ k: 2, held: 2 });
    expect([...c.hitBlocks]).toEqual([1, 1]);
    expect(c.lastHitTier).toBe(1);
    c.release([1, 2, 5], a.held, 0);
    expect(where()).toEqual([0, 0, 1, NOT_CACHED, NOT_CACHED, NOT_CACHED]);
    expect([...c.promoted, ...c.demoted, c.dropped]).toEqual([0, 1, 2, 0, 0]);
    // D: 6 and 7 push 2 then 1 to DRAM, which drops its least recent block, 3
    a = access(c, [6, 7, 8]);
    expect(a.held).toBe(2);
    c.release([6, 7, 8], a.held, 0);
    expect(where()).toEqual([1, 1, NOT_CACHED, NOT_CACHED, 0, 0]);
    expect(c.dropped).toBe(1);
    expect([...c.peakTokens]).toEqual([8, 8]);
    c.checkInvariants();
  });

  it('caps the hit of a partial last block and charges it to the tier that held it', () => {
    const c = new TieredPrefixCache([{ name: 'hbm', capacityTokens: 4 }, { name: 'dram', capacityTokens: 100 }], lru, 4);
    let a = access(c, [1, 2]); // 2 blocks but HBM holds 1: only block 1 is held
    expect(a.held).toBe(1);
    c.release([1, 2], a.held, 0);
    a = access(c, [2]);
    c.release([2], a.held, 0);
    expect([c.tierOf(1), c.tierOf(2)]).toEqual([1, 0]);
    // input of 6 tokens: block 1 (dram) gives 4, block 2 (hbm) only 2
    c.fitCount([1, 2], 2, 0);
    c.acquire([1, 2], 2, 1, 0);
    const perTier = new Float64Array(2);
    expect(hitTokensByTier(c, 2, 6, perTier)).toBe(6);
    expect([...perTier]).toEqual([2, 4]);
  });

  it('never evicts pinned blocks: fitCount counts only unpinned ones and reserved tokens', () => {
    const c = new TieredPrefixCache([{ name: 'hbm', capacityTokens: 16 }], lru, 4);
    expect(c.fitCount([1, 2], 0, 20)).toBe(-1);
    c.acquire([1, 2], 0, 2, 4); // holds 2 blocks + 4 reserved = 12 tokens
    expect(c.usedTokens(0)).toBe(12);
    expect(c.fitCount([3, 4], 0, 0)).toBe(1);
    expect(c.fitCount([1, 3], 1, 0)).toBe(2); // sharing block 1 costs nothing
    expect(() => c.acquire([3, 4], 0, 2, 0)).toThrow(/full of pinned blocks/);
    const d = new TieredPrefixCache([{ name: 'hbm', capacityTokens: 16 }], lru, 4);
    d.acquire([1, 2], 0, 2, 4);
    d.acquire([1, 3], 1, 2, 0);
    expect(d.pinsOf(1)).toBe(2);
    d.release([1, 2], 2, 4);
    expect([d.pinsOf(1), d.pinsOf(2), d.pinned, d.reserved]).toEqual([1, 0, 2, 0]);
    d.checkInvariants();
  });

  it('recomputes a block cached without its ancestor: pinned in place in HBM, a stale lower-tier copy discarded', () => {
    const c = new TieredPrefixCache([{ name: 'hbm', capacityTokens: 8 }, { name: 'dram', capacityTokens: 8 }], lru, 4);
    const once = (ids: number[]) => c.release(ids, access(c, ids).held, 0);
    once([2]);
    c.markComputed(2);
    // [1, 2]: 1 is not cached, so 2 is past the matched run: it is used where it is, and recomputed
    let a = access(c, [1, 2]);
    expect(a).toEqual({ k: 0, held: 2 });
    expect([c.size, c.blocksIn[0], c.pinsOf(2), c.isComputed(2)]).toEqual([2, 2, 1, false]);
    c.release([1, 2], a.held, 0);
    c.checkInvariants();
    // push 2 down to DRAM, then ask for [5, 2]: the DRAM copy is dropped, not promoted
    once([3]);
    once([4]);
    expect([c.tierOf(1), c.tierOf(2), c.tierOf(3), c.tierOf(4)]).toEqual([1, 1, 0, 0]);
    a = access(c, [5, 2]);
    expect([c.tierOf(2), c.tierOf(5), c.promoted[1], c.blocksIn[1]]).toEqual([0, 0, 0, 2]);
    c.release([5, 2], a.held, 0);
    c.checkInvariants();
  });

  it('stays consistent under random interleaved requests (invariants after every step)', () => {
    const rng = seedrandom('tiers');
    for (const def of listCachePolicies()) {
      const c = new TieredPrefixCache([{ name: 'hbm', capacityTokens: 64 }, { name: 'dram', capacityTokens: 40 }, { name: 'cxl', capacityTokens: 0 }, { name: 'nvme', capacityTokens: 48 }], def, 8);
      const holding: { ids: number[]; held: number; extra: number }[] = [];
      for (let step = 0; step < 3000; step++) {
        if (holding.length > 0 && (rng() < 0.45 || holding.length > 4)) {
          const h = holding.splice(Math.floor(rng() * holding.length), 1)[0];
          c.release(h.ids, h.held, h.extra);
        } else {
          // chains over a small tree of prefixes: root r, then r*10 + i ...
          const len = 1 + Math.floor(rng() * 5);
          const ids: number[] = [];
          let id = 1 + Math.floor(rng() * 3);
          for (let i = 0; i < len; i++) {
            ids.push(id);
            id = id * 10 + Math.floor(rng() * 3);
          }
          const extra = Math.floor(rng() * 10);
          const k = c.lookup(ids);
          const held = c.fitCount(ids, k, extra);
          if (held < 0) continue;
          c.acquire(ids, k, held, extra);
          holding.push({ ids, held, extra });
        }
        c.checkInvariants();
      }
    }
  });

  it('an exclusive LRU hierarchy hits exactly like one LRU cache of the total size', () => {
    // holds when every request fits in HBM and sizes are whole blocks
    const reqs = readRequestTrace(bundledTracePath('conversation')).requests.slice(0, 3000);
    const B = 512;
    expect(Math.max(...reqs.map((r) => r.hash_ids.length))).toBeLessThan(300);
    const flat = replayPrefixCache(reqs, [{ name: 'all', capacityTokens: 2000 * B }], lru, B);
    for (const [hbm, dram, nvme] of [[400, 600, 1000], [300, 0, 1700], [1999, 1, 0], [1000, 1000, 0]]) {
      const tiered = replayPrefixCache(reqs, [{ name: 'hbm', capacityTokens: hbm * B }, { name: 'dram', capacityTokens: dram * B }, { name: 'nvme', capacityTokens: nvme * B }], lru, B);
      expect(tiered.hit_tokens).toBe(flat.hit_tokens);
      expect(tiered.tiers.reduce((s, t) => s + t.hit_tokens, 0)).toBe(tiered.hit_tokens);
      expect(tiered.tiers[0].hit_tokens).toBeGreaterThan(0);
    }
    // and a smaller cache hits less
    expect(replayPrefixCache(reqs, [{ name: 'all', capacityTokens: 1000 * B }], lru, B).hit_tokens).toBeLessThan(flat.hit_tokens);
  });
});
