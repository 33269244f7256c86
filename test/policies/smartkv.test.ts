import { describe, expect, it } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import { defaultErrorTable } from '../../sim/quality/error-table.js';
import { allocateBits, smartKv } from '../../policies/smartkv.js';
import { bringBest, rankWidths, selectTop } from '../../policies/smartkv-allocate.js';
import { GroupEma } from '../../policies/smartkv-importance.js';
import { uniformInt8 } from '../../policies/uniform-int8.js';
import { blocksFor, type TraceHeader, type TraceStep } from '../../traces/format.js';
import { tinyHeader } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';

const T = defaultErrorTable();
const e = (b: number) => T.relError(b, 128, false);
// prompt 16 = blocks 0..3, block 4 at step 0; importance after the prefill observation (decay 0.5):
// 0.5 x [0.4, 0.3, 0.15, 0.1] -> order 0, 1, 2, 3
const m = [0.4, 0.3, 0.15, 0.1, 0.05];

describe('smartkv allocation', () => {
  it('allocates {8, 4, 3, 2} greedily by importance within the average', () => {
    expect([...allocateBits([0, 1, 2, 3], 4).values()]).toEqual([8, 4, 2, 2]);
    expect([...allocateBits([0, 1, 2, 3], 3.75).values()]).toEqual([8, 3, 2, 2]);
    expect([...allocateBits([5, 6], 2).values()]).toEqual([2, 2]);
  });

  it('rankWidths: the widths of the top ranks, up to the first 2-bit rank', () => {
    const w = new Uint8Array(16);
    // 10 blocks at 4 bits: 20 extra bits = 8, 8, 8 (18), then 4 (20)
    expect(Array.from(w.subarray(0, rankWidths(10, 4, w)))).toEqual([8, 8, 8, 4]);
    // 4 blocks at 2.75: 3 extra = 4 (2), then 3 (1)
    expect(Array.from(w.subarray(0, rankWidths(4, 2.75, w)))).toEqual([4, 3]);
    // 4 blocks at 3.5: 6 extra = one 8
    expect(Array.from(w.subarray(0, rankWidths(4, 3.5, w)))).toEqual([8]);
    // 3 blocks at 8: all 8; at 2: none
    expect(Array.from(w.subarray(0, rankWidths(3, 8, w)))).toEqual([8, 8, 8]);
    expect(rankWidths(3, 2, w)).toBe(0);
    // the average is kept: sum of widths + 2 per other block <= avg * n
    for (const [n, avg] of [[7, 3.3], [100, 4.1], [33, 2.9], [5, 7.9]] as const) {
      const big = new Uint8Array(n);
      const rr = rankWidths(n, avg, big);
      let sum = 2 * (n - rr);
      for (let i = 0; i < rr; i++) sum += big[i]!;
      expect(sum).toBeLessThanOrEqual(avg * n + 1e-9);
      // and, where a block was left at 2 bits, nothing is left that would pay for one more step up (3 bits = 1 extra)
      if (rr < n) expect(avg * n - sum).toBeLessThan(1 + 1e-9);
    }
  });

  it('selectTop and bringBest give the ranking a full sort gives, ties to the lower block', () => {
    let s = 7;
    const rnd = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let trial = 0; trial < 50; trial++) {
      const n = 1 + Math.floor(rnd() * 60);
      // few distinct values: many ties
      const score = Float64Array.from({ length: n }, () => Math.floor(rnd() * 5));
      const sorted = Array.from({ length: n }, (_, i) => i).sort((a, b) => score[b]! - score[a]! || a - b);
      const k = Math.floor(rnd() * (n + 1));
      const cand = Int32Array.from({ length: n }, (_, i) => n - 1 - i);
      selectTop(cand, n, k, score);
      expect(Array.from(cand.subarray(0, k)).sort((a, b) => a - b)).toEqual(sorted.slice(0, k).sort((a, b) => a - b));
      for (let i = k; i < Math.min(n, k + 3); i++) {
        bringBest(cand, i, n, score);
        expect(cand[i]).toBe(sorted[i]);
      }
    }
  });
  it('selectTop leaves cand in the order a partition scanned one entry at a time leaves it, and its bounds narrow bringBest alike', () => {
    const before = (sc: Float64Array, a: number, b: number) => sc[a]! > sc[b]! || (sc[a] === sc[b] && a < b);
    // the reference: Hoare partitions, scans one entry at a time, middle pivot
    const reference = (cand: Int32Array, n: number, k: number, sc: Float64Array) => {
      let lo = 0;
      let hi = n - 1;
      if (k <= 0 || k >= n) return;
      while (lo < hi) {
        const pivot = cand[(lo + hi) >>> 1]!;
        let i = lo;
        let j = hi;
        while (i <= j) {
          while (before(sc, cand[i]!, pivot)) i++;
          while (before(sc, pivot, cand[j]!)) j--;
          if (i <= j) {
            const t = cand[i]!;
            cand[i] = cand[j]!;
            cand[j] = t;
            i++;
            j--;
          }
        }
        if (k - 1 <= j) hi = j;
        else if (k - 1 >= i) lo = i;
        else return;
      }
    };
    let s = 11;
    const rnd = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const bounds = new Int32Array(64);
    for (let trial = 0; trial < 400; trial++) {
      const n = 1 + Math.floor(rnd() ** 2 * 1500);
      const kind = trial % 6;
      const score = Float64Array.from({ length: n }, (_, b) =>
        kind === 0 ? rnd() : kind === 1 ? Math.floor(rnd() * 4) : kind === 2 ? b : kind === 3 ? n - b : kind === 4 ? (b % 7) + rnd() / 100 : rnd() < 0.5 ? 1 : rnd(),
      );
      if (trial % 5 === 0) for (let q = 0; q < n / 8; q++) score[Math.floor(rnd() * n)] = Number.NaN;
      const k = Math.floor(rnd() * (n + 1));
      const a = Int32Array.from({ length: n }, (_, i) => (trial % 2 ? i : n - 1 - i));
      const b = Int32Array.from(a);
      reference(a, n, k, score);
      const nb = selectTop(b, n, k, score, bounds);
      expect(b).toEqual(a);
      for (let i = k; i < Math.min(n, k + 4); i++) {
        bringBest(a, i, n, score);
        let end = n - 1;
        for (let q = 0; q < nb; q++) if (bounds[q]! >= i) end = bounds[q]!;
        bringBest(b, i, n, score, end);
        expect(b).toEqual(a);
      }
    }
  });
});

describe('smartkv', () => {
  it('quantizes by EMA importance to real 3-bit blocks, and the quality measures see 3 bits', () => {
    const r = replayPolicy(smartKv, 10, { prompt: 16, steps: 1, layers: 1, massOf: () => m, options: { avg_bits: 3.75, decay: 0.5 } });
    expect(r.acts('demote:hbm:8', -1)).toEqual(['0:0']);
    expect(r.acts('demote:hbm:3', -1)).toEqual(['0:1']);
    expect(r.acts('demote:hbm:2', -1)).toEqual(['0:2', '0:3']);
    expect(r.bits(0)).toEqual([8, 3, 2, 2, 16]);
    // a 3-bit block is its own bucket in the cache
    expect(r.cache.countBits(0, 3)).toBe(1);
    expect(r.cache.bytesIn(0, 0)).toBe(r.cache.bytesOf(16) + r.cache.bytesOf(8) + r.cache.bytesOf(3) + 2 * r.cache.bytesOf(2));
    expect(r.qualities[0].quant_error).toBeCloseTo(0.4 * e(8) + 0.3 * e(3) + 0.25 * e(2), 6);
    expect(r.results[0].recall[0]).toBeCloseTo(1, 9);
  });

  it('avg_bits 0: the average at which the final blocks, scales and zeros included, fill the budget', () => {
    // tiny blocks: b bits take 4·b + 4 bytes (16 bits: 64); budget 2 blocks = 128 bytes over the 5
    // final blocks: 5·(4·avg + 4) = 128 -> avg 5.4; 4 prompt blocks: 13.6 extra bits = 8, 8 (1.6 left), 3
    const r = replayPolicy(smartKv, 2, { prompt: 16, steps: 1, layers: 1, massOf: () => m, options: { decay: 0.5 } });
    expect(r.acts('demote:hbm:8', -1)).toEqual(['0:0', '0:1']);
    expect(r.acts('demote:hbm:3', -1)).toEqual(['0:2']);
    expect(r.acts('demote:hbm:2', -1)).toEqual(['0:3']);
  });

  it('reallocates every 16 tokens, only ever lowering precision', () => {
    // 20 steps: contexts 17..36; reallocations at prefill (16) and at context 32 (step 15)
    const r = replayPolicy(smartKv, 10, { prompt: 16, steps: 20, layers: 1, massOf: (_s, _l, n) => Array(n).fill(1 / n), options: { avg_bits: 4, decay: 0.5 } });
    const steps = [...new Set(r.log.filter((a) => a.what.startsWith('demote')).map((a) => a.step))];
    expect(steps).toEqual([-1, 15]);
    expect(r.log.filter((a) => a.what === 'promote')).toEqual([]);
  });

  it('uniform-int8 puts every block at 8 bits', () => {
    const r = replayPolicy(uniformInt8, 10, { prompt: 16, steps: 1, layers: 1, massOf: () => m });
    expect(r.bits(0)).toEqual([8, 8, 8, 8, 16]);
    expect(r.qualities[0].quant_error).toBeCloseTo(0.95 * e(8), 6);
  });

  it('uniform allocation takes 3 bits', () => {
    const r = replayPolicy(uniformInt8, 10, { prompt: 16, steps: 1, layers: 1, massOf: () => m, options: { uniform_bits: 3 } });
    expect(r.bits(0)).toEqual([3, 3, 3, 3, 16]);
    expect(() => replayPolicy(uniformInt8, 10, { prompt: 16, steps: 1, layers: 1, options: { uniform_bits: 5 } })).toThrow('option uniform_bits must be 16, 8, 4, 3 or 2 (got 5)');
  });
});

describe('smartkv importance per KV group', () => {
  // 2 groups, 1 layer, prompt 16 (blocks 0..3), one step (context 17: block 4 new). Group 0 puts 0.6
  // on block 1, group 1 puts nothing there; block 2 gets 0.35 from both.
  const g0 = [0.05, 0.6, 0.35, 0.0, 0.0];
  const g1 = [0.3, 0.0, 0.35, 0.35, 0.0];
  const h: TraceHeader = { ...tinyHeader(16, 1, 1), kv_groups: 2 };
  const n = blocksFor(17, 4);
  const row = (x: number[]) => ({ nBlocks: n, idx: null, mass: Float32Array.from(x), remainder: 0, normFrom: 0, norms: new Float32Array(n).fill(1) });
  const trace: TraceStep[] = [{ step: 0, contextTokens: 17, layers: [row(g0), row(g1)] }];
  // avg 3.5 over the 4 prompt blocks: 6 extra bits = exactly one 8-bit block, the rest 2 bits

  it('max over groups: the block one group depends on (block 1: max 0.6) keeps 8 bits', () => {
    // EMA after the prefill observation, decay 0.5: group 0 [0.025, 0.3, 0.175, 0], group 1
    // [0.15, 0, 0.175, 0.175]; max [0.15, 0.3, 0.175, 0.175] -> block 1 first
    const r = replayPolicy(smartKv, 10, { fullHeader: h, trace, options: { avg_bits: 3.5, decay: 0.5, group_importance: 'max' } });
    expect(r.bits(0)).toEqual([2, 8, 2, 2, 16]);
  });

  it('sum over groups (the default): the block both groups share (block 2: 0.35 + 0.35) keeps 8 bits', () => {
    // sum [0.175, 0.3, 0.35, 0.175] -> block 2 first
    const r = replayPolicy(smartKv, 10, { fullHeader: h, trace, options: { avg_bits: 3.5, decay: 0.5 } });
    expect(r.bits(0)).toEqual([2, 2, 8, 2, 16]);
  });

  it('GroupEma by hand: per-group decay, sparse rows (uniform share), unattended blocks gain nothing', () => {
    const ema = new GroupEma(1, 2, 3, 0.5);
    const att = (x: number[]) => Uint8Array.from(x);
    const obs = (attended: Uint8Array, groups: { idx: Uint32Array | null; mass: number[]; uniform: number }[]) =>
      ({ layer: 0, nBlocks: 3, attended, groups: groups.map((g) => ({ ...g, mass: Float32Array.from(g.mass) })) }) as never;
    // group 0 dense [0.6, 0.4, 0]; group 1 sparse: block 2 at 0.8, the others 0.1 each
    ema.observe(obs(att([1, 1, 1]), [{ idx: null, mass: [0.6, 0.4, 0], uniform: 0 }, { idx: Uint32Array.of(2), mass: [0.8], uniform: 0.1 }]));
    expect(Array.from(ema.imp).map((x) => +x.toFixed(6))).toEqual([0.3, 0.2, 0, 0.05, 0.05, 0.4]);
    // block 1 not attended: it only decays
    ema.observe(obs(att([1, 0, 1]), [{ idx: null, mass: [0, 0.2, 0.8], uniform: 0 }, { idx: null, mass: [1, 0, 0], uniform: 0 }]));
    expect(Array.from(ema.imp).map((x) => +x.toFixed(6))).toEqual([0.15, 0.1, 0.4, 0.525, 0.025, 0.2]);
    expect([0, 1, 2].map((b) => +ema.of(0, b, 'max').toFixed(6))).toEqual([0.525, 0.1, 0.4]);
    expect([0, 1, 2].map((b) => +ema.of(0, b, 'sum').toFixed(6))).toEqual([0.675, 0.125, 0.6]);
    const out = new Float64Array(3);
    ema.scoresInto(0, 3, 'max', out);
    expect(Array.from(out).map((x) => +x.toFixed(6))).toEqual([0.525, 0.1, 0.4]);
  });
});

describe('GroupEma held-back decays', () => {
  it('give every value bit for bit as decaying every block at every observation (sparse, dense, partly attended rows, reads between)', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const r = makeRng(100 + seed).next;
      const L = 2;
      const G = seed % 2 ? 1 : 3;
      const M = 70;
      const d = 0.9;
      const w = 1 - d;
      const ema = new GroupEma(L, G, M, d);
      // the reference: every block of every group decays at every observation of its layer
      const ref = new Float64Array(L * G * M);
      const n = [4, 30];
      const out = new Float64Array(M);
      for (let step = 0; step < 140; step++) {
        for (let l = 0; l < L; l++) {
          if (r() < 0.4 && n[l]! < M) n[l]!++;
          // now and then an observation of fewer blocks
          const nb = r() < 0.03 ? Math.max(1, n[l]! - 2) : n[l]!;
          const attended = new Uint8Array(nb).fill(1);
          if (r() < 0.05) for (let b = 0; b < nb; b++) attended[b] = r() < 0.8 ? 1 : 0;
          const groups = Array.from({ length: G }, () => {
            if (r() < 0.03) return { idx: null, mass: Float32Array.from({ length: nb }, () => r() / nb), uniform: 0 };
            // recent blocks listed at most observations, others now and then
            const listed = [...new Set([nb - 1, Math.max(0, nb - 2), ...Array.from({ length: 4 }, () => Math.floor(r() * nb))])];
            return { idx: Uint32Array.from(listed), mass: Float32Array.from(listed, () => r() * 0.3), uniform: r() / nb };
          });
          const attendedCount = attended.reduce((a, x) => a + x, 0);
          // (one group: the observation carries the group's fields itself)
          ema.observe({ ...groups[0], layer: l, nBlocks: nb, attended, attendedCount, groups } as never);
          for (let g = 0; g < G; g++) {
            const row = groups[g]!;
            const base = (l * G + g) * M;
            if (row.idx === null) {
              for (let b = 0; b < nb; b++) ref[base + b] = d * ref[base + b]! + w * row.mass[b]! * attended[b]!;
              continue;
            }
            const wu = w * row.uniform;
            for (let b = 0; b < nb; b++) ref[base + b] = d * ref[base + b]! + wu * attended[b]!;
            for (let i = 0; i < row.idx.length; i++) if (attended[row.idx[i]!]) ref[base + row.idx[i]!] += w * row.mass[i]! - wu;
          }
          // reads now and then (layer 1 rarely, so that more than the held-back limit accumulate)
          if (r() < (l === 0 ? 0.08 : 0.005)) {
            ema.scoresInto(l, n[l]!, 'sum', out);
            for (let b = 0; b < n[l]!; b++) {
              let sum = ref[l * G * M + b]!;
              for (let g = 1; g < G; g++) sum += ref[(l * G + g) * M + b]!;
              expect(out[b]).toBe(sum);
            }
          }
        }
      }
      expect(Array.from(ema.imp)).toEqual(Array.from(ref));
    }
  });
});

describe('GroupEma retire', () => {
  /** a small deterministic generator (mulberry32, hil/rng.ts) */
  const rng = (seed: number): (() => number) => makeRng(seed).next;

  it('retiring blocks leaves every other block exactly as without (random sparse, dense and partly attended rows, 2 groups)', () => {
    for (let seed = 1; seed <= 8; seed++) {
      const r = rng(seed);
      const L = 2;
      const G = 2;
      const M = 40;
      const kept = new GroupEma(L, G, M, 0.9);
      const packed = new GroupEma(L, G, M, 0.9);
      const retired = new Set<number>();
      const n = [5, 9];
      for (let step = 0; step < 60; step++) {
        for (let l = 0; l < L; l++) {
          if (r() < 0.3 && n[l] < M) n[l]++;
          const nb = n[l];
          const attended = new Uint8Array(nb).fill(1);
          if (r() < 0.2) for (let b = 0; b < nb; b++) attended[b] = r() < 0.8 ? 1 : 0;
          const groups = Array.from({ length: G }, () => {
            if (r() < 0.15) return { idx: null, mass: Float32Array.from({ length: nb }, () => r() / nb), uniform: 0 };
            const listed = [...new Set(Array.from({ length: 3 }, () => Math.floor(r() * nb)))];
            return { idx: Uint32Array.from(listed), mass: Float32Array.from(listed, () => r() * 0.3), uniform: r() / nb };
          });
          const obs = { layer: l, nBlocks: nb, attended, attendedCount: attended.reduce((a, x) => a + x, 0), groups } as never;
          kept.observe(obs);
          packed.observe(obs);
          // retire a random block now and then (layer 1 only: layer 0 stays unpacked)
          if (l === 1 && r() < 0.25) {
            const b = Math.floor(r() * (nb + 2));
            packed.retire(l, b);
            retired.add(b);
          }
        }
      }
      expect(retired.size).toBeGreaterThan(3);
      const a = kept.imp;
      const b = packed.imp;
      for (let l = 0; l < L; l++) {
        for (let g = 0; g < G; g++) {
          for (let x = 0; x < M; x++) {
            const i = (l * G + g) * M + x;
            if (l === 1 && retired.has(x)) expect(b[i]).toBeNaN();
            else expect(b[i]).toBe(a[i]);
          }
        }
        for (let x = 0; x < M; x++) {
          if (l === 1 && retired.has(x)) continue;
          expect(packed.of(l, x, 'sum')).toBe(kept.of(l, x, 'sum'));
          expect(packed.of(l, x, 'max')).toBe(kept.of(l, x, 'max'));
        }
      }
      const out1 = new Float64Array(M);
      const out2 = new Float64Array(M);
      kept.scoresInto(1, M, 'sum', out1);
      packed.scoresInto(1, M, 'sum', out2);
      for (let x = 0; x < M; x++) if (!retired.has(x)) expect(out2[x]).toBe(out1[x]);
    }
  });
});
