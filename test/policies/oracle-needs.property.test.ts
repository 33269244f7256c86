/**
 * Property: the oracle's needed sets (StepNeeds, cuts found from the listed masses) equal a plain
 * reference that sorts every block of every row and every (layer, block) of the pooled order, over
 * generated steps: top-k and dense rows, one and several KV groups, masses drawn from a few levels so
 * that ties (with each other and with the rows' even remainder share) are common.
 */
import { describe, expect, it } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import { StepNeeds, WeightedNth, countBelow, nthKey } from '../../policies/oracle-needs.js';
import { denseMass } from '../../policies/dense-mass.js';
import type { LayerAttention, TraceStep } from '../../traces/format.js';

/** the sort-based definition: per layer the topK heaviest (ties: lower block), plus the pooled top layers x topK shares (ties: lower layer, then block) */
function reference(s: TraceStep, L: number, G: number, topK: number, pooled: boolean): number[][] {
  const n = s.layers[0].nBlocks;
  const sets: Set<number>[] = [];
  const all: [number, number, number][] = [];
  for (let l = 0; l < L; l++) {
    const m = new Float64Array(n);
    const g1 = new Float64Array(n);
    if (G === 1) denseMass(s.layers[l], m);
    else
      for (let g = 0; g < G; g++) {
        denseMass(s.layers[l * G + g], g1);
        let t = 0;
        for (let b = 0; b < n; b++) t += g1[b];
        if (t > 0) for (let b = 0; b < n; b++) m[b] += g1[b] / t / G;
      }
    let total = 0;
    for (let b = 0; b < n; b++) total += m[b];
    const ord = Array.from({ length: n }, (_, b) => b).sort((a, b) => m[b] - m[a] || a - b);
    sets.push(new Set(ord.slice(0, topK)));
    for (let b = 0; b < n; b++) all.push([total > 0 ? m[b] / total : 0, l, b]);
  }
  if (pooled) {
    all.sort((x, y) => y[0] - x[0] || x[1] - y[1] || x[2] - y[2]);
    for (let i = 0; i < Math.min(all.length, L * topK); i++) sets[all[i][1]].add(all[i][2]);
  }
  return sets.map((x) => [...x].sort((a, b) => a - b));
}

/** a small deterministic generator (mulberry32, hil/rng.ts) */
const rng = (seed: number): (() => number) => makeRng(seed).next;

function row(r: () => number, n: number, dense: boolean): LayerAttention {
  const levels = [0, 0.01, 0.02, 0.05, 0.1];
  if (dense) {
    const mass = Float32Array.from({ length: n }, () => levels[Math.floor(r() * levels.length)]);
    return { nBlocks: n, idx: null, mass, remainder: 0, normFrom: 0, norms: new Float32Array(0) };
  }
  const k = Math.floor(r() * (n + 1));
  const blocks = Array.from({ length: n }, (_, b) => b)
    .sort(() => r() - 0.5)
    .slice(0, k);
  // the remainder is sometimes exactly a listed level's share, so listed masses tie with it
  const unlisted = n - k;
  const remainder = unlisted > 0 && r() < 0.5 ? levels[1 + Math.floor(r() * 4)] * unlisted : r() * 0.3;
  return { nBlocks: n, idx: Uint32Array.from(blocks), mass: Float32Array.from(blocks, () => levels[Math.floor(r() * levels.length)]), remainder, normFrom: 0, norms: new Float32Array(0) };
}

describe('oracle needed sets (generated steps)', () => {
  it('equal the sort-based reference', () => {
    const r = rng(12345);
    let cases = 0;
    for (let trial = 0; trial < 1000; trial++) {
      const L = 1 + Math.floor(r() * 4);
      const G = 1 + Math.floor(r() * 3);
      const n = 1 + Math.floor(r() * 24);
      const topK = Math.floor(r() * (n + 2));
      const pooled = r() < 0.7;
      const denseRows = r() < 0.2;
      const layers = Array.from({ length: L * G }, () => row(r, n, denseRows && r() < 0.5));
      const s: TraceStep = { step: 0, contextTokens: n * 16, layers };
      const got = new StepNeeds(L, G, topK, pooled).of(s).map((x) => [...x]);
      expect(got, `trial ${trial}: L ${L} G ${G} n ${n} topK ${topK} pooled ${pooled}`).toEqual(reference(s, L, G, topK, pooled));
      cases++;
    }
    expect(cases).toBe(1000);
  });

  it('equal the reference with listed blocks in ascending order (as the generator writes them), one KV group', () => {
    const r = rng(777);
    let fast = 0;
    for (let trial = 0; trial < 600; trial++) {
      const L = 1 + Math.floor(r() * 4);
      const n = 1 + Math.floor(r() * 40);
      const topK = Math.floor(r() * (n + 2));
      const pooled = r() < 0.7;
      const layers = Array.from({ length: L }, () => {
        const la = row(r, n, false);
        const order = Array.from(la.idx!.keys()).sort((a, b) => la.idx![a] - la.idx![b]);
        return { ...la, idx: Uint32Array.from(order, (i) => la.idx![i]), mass: Float32Array.from(order, (i) => la.mass[i]) };
      });
      if (topK > 0 && topK < n && layers.every((la) => la.idx.length < n)) fast++;
      const s: TraceStep = { step: 0, contextTokens: n * 16, layers };
      const got = new StepNeeds(L, 1, topK, pooled).of(s).map((x) => [...x]);
      expect(got, `trial ${trial}: L ${L} n ${n} topK ${topK} pooled ${pooled}`).toEqual(reference(s, L, 1, topK, pooled));
    }
    // most steps take the path for ascending listed blocks (0 < topK < blocks, a block unlisted in every row)
    expect(fast).toBeGreaterThan(300);
  });

  it('equal the reference when one StepNeeds serves many steps (scratch reused across both paths)', () => {
    const r = rng(4242);
    for (const [L, n, topK, pooled] of [
      [3, 30, 5, true],
      [2, 17, 9, false],
      [4, 40, 3, true],
    ] as const) {
      const of = new StepNeeds(L, 1, topK, pooled);
      for (let step = 0; step < 80; step++) {
        // mostly ascending top-k rows (the fast path), sometimes a dense or unsorted row (the general one)
        const layers = Array.from({ length: L }, () => {
          const la = row(r, n, r() < 0.1);
          if (la.idx === null || r() < 0.1) return la;
          const order = Array.from(la.idx.keys()).sort((a, b) => la.idx![a] - la.idx![b]);
          return { ...la, idx: Uint32Array.from(order, (i) => la.idx![i]), mass: Float32Array.from(order, (i) => la.mass[i]) };
        });
        const s: TraceStep = { step, contextTokens: n * 16, layers };
        expect(
          of.of(s).map((x) => [...x]),
          `L ${L} n ${n} topK ${topK} step ${step}`,
        ).toEqual(reference(s, L, 1, topK, pooled));
      }
    }
  });

  it('changes() from step to step, applied to the sets before, give the reference sets (growing and shrinking contexts, both paths, several KV groups)', () => {
    const r = rng(9090);
    for (const [L, G, n0, topK, pooled] of [
      [3, 1, 30, 5, true],
      [2, 1, 17, 9, false],
      [4, 1, 40, 3, true],
      [2, 2, 20, 4, true],
    ] as const) {
      const of = new StepNeeds(L, G, topK, pooled);
      const sets = Array.from({ length: L }, () => new Set<number>());
      let n: number = n0;
      for (let step = 0; step < 120; step++) {
        // the context mostly grows, past the changes' first room (64 more blocks) too, and sometimes shrinks
        const u = r();
        n = u < 0.05 ? Math.max(1, n - 3) : u < 0.5 ? n + 1 : u < 0.55 ? n + 40 : n;
        // mostly ascending top-k rows (the cuts' path), sometimes a dense or unsorted row (every block compared)
        const layers = Array.from({ length: L * G }, () => {
          const la = row(r, n, r() < 0.1);
          if (la.idx === null || r() < 0.1) return la;
          const order = Array.from(la.idx.keys()).sort((a, b) => la.idx![a] - la.idx![b]);
          return { ...la, idx: Uint32Array.from(order, (i) => la.idx![i]), mass: Float32Array.from(order, (i) => la.mass[i]) };
        });
        const s: TraceStep = { step, contextTokens: n * 16, layers };
        const c = of.changes(s);
        const want = reference(s, L, G, topK, pooled);
        for (let l = 0; l < L; l++) {
          const added = [...c.added.subarray(c.addFrom[l], c.addFrom[l + 1])];
          const dropped = [...c.dropped.subarray(c.dropFrom[l], c.dropFrom[l + 1])];
          const where = `L ${L} G ${G} topK ${topK} step ${step} layer ${l}`;
          expect(added, where).toEqual([...added].sort((a, b) => a - b));
          expect(dropped, where).toEqual([...dropped].sort((a, b) => a - b));
          for (const b of added) {
            expect(sets[l].has(b), `${where}: ${b} added`).toBe(false);
            sets[l].add(b);
          }
          for (const b of dropped) {
            expect(sets[l].has(b), `${where}: ${b} dropped`).toBe(true);
            sets[l].delete(b);
          }
          expect([...sets[l]].sort((a, b) => a - b), where).toEqual(want[l]);
        }
      }
    }
  });

  it('nthKey: the N-th smallest of single keys and counted groups; countBelow: how many lie below', () => {
    // multiset {-5, -3, -3 (x4 group), -2, -1 (x2 group)}: sorted singles [-5, -3, -2], groups [-3 x4, -1 x2]
    const singles = Float64Array.from([-5, -3, -2]);
    const gk = Float64Array.from([-3, -1]);
    const gc = Int32Array.from([4, 2]);
    expect([1, 2, 3, 6, 7, 8, 9].map((N) => nthKey(singles, 3, gk, gc, 2, N))).toEqual([-5, -3, -3, -3, -2, -1, -1]);
    expect(() => nthKey(singles, 3, gk, gc, 2, 10)).toThrow(/beyond/);
    expect([-5, -3, -2, -1, 0].map((v) => countBelow(singles, 3, gk, gc, 2, v))).toEqual([0, 1, 6, 7, 9]);
  });

  it('nthAmongGroups equals nthKey over generated singles and groups (keys from a few levels: ties with group keys, singles in every gap and above every key)', () => {
    const r = makeRng(23).next;
    const w = new WeightedNth();
    for (let round = 0; round < 300; round++) {
      const groups = Math.floor(r() * 7);
      const p = Math.floor(r() * 40);
      const level = () => -Math.floor(r() * 9) / 4;
      const gk = Float64Array.from({ length: groups }, level);
      const gc = Int32Array.from({ length: groups }, () => 1 + Math.floor(r() * 5));
      const singles = Float64Array.from({ length: p }, level);
      const size = p + gc.reduce((a, b) => a + b, 0);
      const order = [...gk.keys()].sort((a, b) => gk[a] - gk[b]);
      const sortedGk = Float64Array.from(order, (j) => gk[j]);
      const sortedGc = Int32Array.from(order, (j) => gc[j]);
      const sortedSingles = Float64Array.from(singles).sort();
      for (let N = 1; N <= size; N++) {
        expect(w.nthAmongGroups(singles, p, gk, gc, groups, N)).toBe(nthKey(sortedSingles, p, sortedGk, sortedGc, groups, N));
      }
    }
  });
});
