/** SynapseVM's order of a tier's blocks by saliency: the same victim as a scan in block order. */
import { describe, expect, it } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import { AttentionScore } from '../../policies/attention-score.js';
import { ColdOrder, DROP, ELIGIBLE, SET_ASIDE } from '../../policies/synapse-cold-order.js';
import type { Observation } from '../../policies/policy.js';

/** a small deterministic generator (mulberry32, hil/rng.ts) */
const rng = (seed: number): (() => number) => makeRng(seed).next;

/** a sparse observation of layer 0: every block attended, the listed ones at or above the uniform share */
function observation(n: number, listed: number[], mass: number[], uniform: number): Observation {
  return {
    layer: 0,
    step: 0,
    nBlocks: n,
    idx: Uint32Array.from(listed),
    mass: Float32Array.from(mass),
    uniform,
    attended: new Uint8Array(n).fill(1),
    attendedCount: n,
  } as unknown as Observation;
}

/** the scan it replaces: least get(), ties to the lower id, over the eligible blocks */
function scan(score: AttentionScore, n: number, eligible: (b: number) => boolean): number {
  let best = -1;
  let bestKey = 0;
  for (let b = 0; b < n; b++) {
    if (!eligible(b)) continue;
    const k = score.get(0, b);
    if (best < 0 || k < bestKey) {
      best = b;
      bestKey = k;
    }
  }
  return best;
}

/** the order's row of layer l: ids and keys of its entries, in order (from where they start in the row) */
function rows(o: ColdOrder, l: number): { ids: number[]; keys: number[] } {
  const x = o as unknown as { ids: Int32Array; keys: Float64Array; size: Int32Array; first: Int32Array; maxBlocks: number };
  const at = l * x.maxBlocks + x.first[l];
  return { ids: [...x.ids.subarray(at, at + x.size[l])], keys: [...x.keys.subarray(at, at + x.size[l])] };
}

describe('synapse cold order', () => {
  it('by hand: least saliency first, ties to the lower id, left and set-aside blocks skipped, a risen score moved', () => {
    const score = new AttentionScore(1, 8);
    // blocks 0..5: listed masses 0.3 (0), 0.1 (2), 0.1 (4); the others carry the uniform share 0.05
    score.observe(observation(6, [0, 2, 4], [0.3, 0.1, 0.1], 0.05));
    const order = new ColdOrder(1, 8);
    order.reset(0);
    for (const b of [0, 1, 2, 3, 4, 5]) order.add(0, b, score.raw(0, b));
    const inTier = new Set([0, 1, 2, 3, 4, 5]);
    const aside = new Set<number>();
    const pass = (b: number) => (!inTier.has(b) ? DROP : aside.has(b) ? SET_ASIDE : ELIGIBLE);
    // 1, 3 and 5 tie at 0.05: the lower id
    expect(order.coldest(0, score, { pass })).toBe(1);
    inTier.delete(1);
    aside.add(3);
    expect(order.coldest(0, score, { pass })).toBe(5);
    expect(order.count(0)).toBe(5); // block 1 dropped when reached
    // block 5 listed at 0.2 (score 0.05 + 0.2 + 0.05 shares), the others get 0.05 more: 2 and 4 tie at 0.15, below 3 (set aside) and 5
    score.observe(observation(6, [5], [0.2], 0.05));
    expect(order.coldest(0, score, { pass })).toBe(2);
    aside.clear();
    expect(order.coldest(0, score, { pass })).toBe(3);
  });

  it('matches the scan over random scores, tier moves, set-asides and exact ties (raw scores only rise)', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const r = rng(seed);
      const M = 120;
      const score = new AttentionScore(1, M);
      const order = new ColdOrder(1, M);
      const inTier = new Uint8Array(M);
      const aside = new Uint8Array(M);
      let n = 30;
      score.observe(observation(n, [], [], 1 / n));
      order.reset(0);
      for (let b = 0; b < n; b++) {
        if (r() < 0.6) {
          inTier[b] = 1;
          order.add(0, b, score.raw(0, b));
        }
      }
      const pass = (b: number) => (inTier[b] === 0 ? DROP : aside[b] === 1 ? SET_ASIDE : ELIGIBLE);
      for (let step = 0; step < 200; step++) {
        // a new block now and then, in the tier or not (added once observed, as the policy adds only observed blocks)
        const grow = r() < 0.2 && n < M;
        if (grow) n++;
        // listed blocks at or above the uniform share (often exactly it, so that raw scores tie)
        const u = r() < 0.3 ? 0 : Math.fround(0.5 / n); // (a float32 value: a listed mass of u is not below it)
        const listed = [...new Set(Array.from({ length: Math.floor(r() * 5) }, () => Math.floor(r() * n)))].sort((a, b) => a - b);
        score.observe(observation(n, listed, listed.map(() => (r() < 0.3 ? u : u + r() * 0.2)), u));
        if (grow && r() < 0.5) {
          inTier[n - 1] = 1;
          order.add(0, n - 1, score.raw(0, n - 1));
        }
        // blocks leave and join the tier, some are set aside for this query
        for (let k = 0; k < 3; k++) {
          const b = Math.floor(r() * n);
          if (inTier[b]) inTier[b] = 0;
          else {
            inTier[b] = 1;
            order.add(0, b, score.raw(0, b));
          }
        }
        aside.fill(0);
        for (let k = 0; k < 2; k++) aside[Math.floor(r() * n)] = 1;
        const want = scan(score, n, (b) => inTier[b] === 1 && aside[b] === 0);
        expect(order.coldest(0, score, { pass })).toBe(want);
      }
    }
  });

  it('saliencies that round to the same value tie across raw scores: the lower id wins, as in the scan', () => {
    const score = new AttentionScore(1, 4);
    // offset 2^40: raw scores 0 (block 1) and 2^-20 (block 0) both give saliency 2^40
    score.observe(observation(2, [0], [2 ** 40], 2 ** 40));
    score.observe(observation(2, [0], [2 ** -20], 0));
    expect(score.raw(0, 0)).toBe(2 ** -20);
    expect(score.raw(0, 1) === 0).toBe(true);
    expect(score.get(0, 0)).toBe(score.get(0, 1));
    const order = new ColdOrder(1, 4);
    order.reset(0);
    order.add(0, 1, score.raw(0, 1));
    order.add(0, 0, score.raw(0, 0));
    expect(order.coldest(0, score, { pass: () => ELIGIBLE })).toBe(0);
    expect(scan(score, 2, () => true)).toBe(0);
  });

  it('answers −2 and asks for a rebuild when a raw score fell', () => {
    const score = new AttentionScore(1, 4);
    score.observe(observation(3, [0, 1], [0.4, 0.4], 0.2));
    const order = new ColdOrder(1, 4);
    order.reset(0);
    for (const b of [0, 1, 2]) order.add(0, b, score.raw(0, b));
    // block 2 listed below the uniform share: its raw score falls
    score.observe(observation(3, [2], [0.1], 0.3));
    expect(order.coldest(0, score, { pass: () => ELIGIBLE })).toBe(-2);
    expect(order.valid(0)).toBe(false);
    order.reset(0);
    for (const b of [0, 1, 2]) order.add(0, b, score.raw(0, b));
    expect(order.coldest(0, score, { pass: () => ELIGIBLE })).toBe(2);
  });

  it('entries added between defer() and settle() end where adding them one by one puts them (ties, ±0, NaN keys)', () => {
    /** the order's rows of layer l: ids and keys of its entries, in order */
    const keysOf = [0, 0, -0, 1, 1, 2, -1, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, 0.5, 0.25, Number.NaN];
    for (let seed = 1; seed <= 30; seed++) {
      const r = rng(seed);
      const M = 80;
      const L = 2;
      const one = new ColdOrder(L, M);
      const bulk = new ColdOrder(L, M);
      for (let l = 0; l < L; l++) {
        one.reset(l);
        bulk.reset(l);
      }
      const withNaN = seed % 3 === 0;
      const key = () => {
        const k = keysOf[Math.floor(r() * (withNaN ? keysOf.length : keysOf.length - 1))];
        return r() < 0.5 ? k : k + Math.floor(r() * 4) / 8;
      };
      let deferred = 0;
      for (let round = 0; round < 12; round++) {
        const l = Math.floor(r() * L);
        const d = r() < 0.7;
        if (d) {
          bulk.defer(l);
          deferred++;
        }
        const n = 1 + Math.floor(r() * 20);
        for (let i = 0; i < n; i++) {
          const b = Math.floor(r() * M);
          const k = key();
          one.add(l, b, k);
          bulk.add(l, b, k);
        }
        // a deferred layer is settled by the call, by a query, or by deferring another layer
        const how = r();
        if (how < 0.6) bulk.settle(l);
        else if (how < 0.8) bulk.defer(1 - l);
        else expect(bulk.coldest(l, new AttentionScore(L, M), { pass: () => ELIGIBLE })).toBe(one.coldest(l, new AttentionScore(L, M), { pass: () => ELIGIBLE }));
        bulk.settle(1 - l);
        bulk.settle(l);
        for (let m = 0; m < L; m++) {
          const a = rows(bulk, m);
          const b = rows(one, m);
          expect(a.ids).toEqual(b.ids);
          for (let i = 0; i < a.keys.length; i++) expect(Object.is(a.keys[i], b.keys[i])).toBe(true);
        }
      }
      expect(deferred).toBeGreaterThan(3);
    }
  });

  it('rows filled to either end: entries removed and inserted on their shorter side stay sorted and answer as the scan (3 layers)', () => {
    let walls = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const r = rng(seed);
      const M = 12;
      const L = 3;
      const score = new AttentionScore(L, M);
      const order = new ColdOrder(L, M);
      const inTier = new Uint8Array(L * M);
      const aside = new Uint8Array(L * M);
      const first = (order as unknown as { first: Int32Array }).first;
      for (let l = 0; l < L; l++) {
        score.observe({ ...observation(M, [], [], 1 / M), layer: l } as Observation);
        order.reset(l);
      }
      for (let step = 0; step < 300; step++) {
        const l = Math.floor(r() * L);
        const pass = (b: number) => (inTier[l * M + b] === 0 ? DROP : aside[l * M + b] === 1 ? SET_ASIDE : ELIGIBLE);
        // listed masses at or above the uniform share: raw scores only rise (some stay, to tie)
        const listed = [...new Set(Array.from({ length: Math.floor(r() * 4) }, () => Math.floor(r() * M)))].sort((a, b) => a - b);
        const u = Math.fround(0.25 / M);
        score.observe({ ...observation(M, listed, listed.map(() => (r() < 0.3 ? u : u + r() * 0.1)), u), layer: l } as Observation);
        // phases that fill the tier, and phases that empty it (blocks leave; the query drops their entries)
        const filling = Math.floor(step / 25) % 2 === 0;
        for (let k = 0; k < 3; k++) {
          const b = Math.floor(r() * M);
          if (filling || r() < 0.2) {
            if (inTier[l * M + b] === 0) {
              inTier[l * M + b] = 1;
              order.add(l, b, score.raw(l, b));
            }
          } else inTier[l * M + b] = 0;
        }
        // some additions deferred and settled together
        if (r() < 0.2) {
          order.defer(l);
          for (let b = 0; b < M; b++) {
            if (inTier[l * M + b] === 0 && r() < 0.3) {
              inTier[l * M + b] = 1;
              order.add(l, b, score.raw(l, b));
            }
          }
          order.settle(l);
        }
        aside.fill(0, l * M, (l + 1) * M);
        if (r() < 0.5) aside[l * M + Math.floor(r() * M)] = 1;
        // the scan of the layer's eligible blocks (least get(), ties to the lower id)
        let best = -1;
        let bestKey = 0;
        for (let b = 0; b < M; b++) {
          if (inTier[l * M + b] === 0 || aside[l * M + b] === 1) continue;
          const k = score.get(l, b);
          if (best < 0 || k < bestKey) {
            best = b;
            bestKey = k;
          }
        }
        const got = order.coldest(l, score, { pass }, 0);
        if (got !== best) expect(got).toBe(best);
        // the row: ascending by (key, id), every block of the tier in it once
        const row = rows(order, l);
        for (let i = 1; i < row.ids.length; i++) {
          const ok = row.keys[i - 1] < row.keys[i] || (row.keys[i - 1] === row.keys[i] && row.ids[i - 1] < row.ids[i]);
          if (!ok) expect([row.keys[i - 1], row.ids[i - 1]]).toEqual(['<', row.keys[i], row.ids[i]]);
        }
        expect(new Set(row.ids).size).toBe(row.ids.length);
        for (let b = 0; b < M; b++) if (inTier[l * M + b] === 1 && !row.ids.includes(b)) expect(row.ids).toContain(b);
        // (a row whose entries reach its end after its start: an insertion there must shift those before it)
        if (first[l] > 0 && first[l] + row.ids.length === M) walls++;
      }
    }
    expect(walls).toBeGreaterThan(50);
  });
});
