import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { AttentionScore } from '../../policies/attention-score.js';
import type { Observation } from '../../policies/policy.js';

describe('AttentionScore', () => {
  it('sums hand-computed masses: sparse rows through the offset, dense rows block by block', () => {
    const s = new AttentionScore(1, 4);
    // 3 blocks, block 1 listed (0.5), the others attended at the uniform 0.25
    s.observe({ layer: 0, step: 0, nBlocks: 3, idx: Uint32Array.from([1]), mass: Float32Array.from([0.5]), uniform: 0.25, groups: [], attended: Uint8Array.from([1, 1, 1]), attendedCount: 3 });
    expect([s.get(0, 0), s.get(0, 1), s.get(0, 2), s.get(0, 3)]).toEqual([0.25, 0.5, 0.25, 0]);
    // block 0 not attended: it gets nothing
    s.observe({ layer: 0, step: 1, nBlocks: 3, idx: Uint32Array.from([2]), mass: Float32Array.from([0.5]), uniform: 0.25, groups: [], attended: Uint8Array.from([0, 1, 1]), attendedCount: 2 });
    expect([s.get(0, 0), s.get(0, 1), s.get(0, 2)]).toEqual([0.25, 0.75, 0.75]);
    s.observe({ layer: 0, step: 2, nBlocks: 4, idx: null, mass: Float32Array.from([0.5, 0, 0.25, 0.25]), uniform: 0, groups: [], attended: Uint8Array.from([1, 1, 0, 1]), attendedCount: 3 });
    expect([s.get(0, 0), s.get(0, 1), s.get(0, 2), s.get(0, 3)]).toEqual([0.75, 0.75, 0.75, 0.25]);
  });

  it('given the attended blocks in order, the same scores to the bit as reading each block mark', () => {
    const rng = seedrandom('attention-score-list');
    const L = 3;
    const M = 67;
    const plain = new AttentionScore(L, M);
    const listed = new AttentionScore(L, M);
    const nBlocks = [5, 1, 30];
    for (let step = 0; step < 400; step++) {
      const l = Math.floor(rng() * L);
      if (rng() < 0.2 && nBlocks[l] < M) nBlocks[l]++;
      const n = nBlocks[l];
      // attended: none, every block, or a random share (runs at the ends and in the middle)
      const share = [0, 1, rng()][Math.floor(rng() * 3)];
      const attended = Uint8Array.from({ length: n }, () => (rng() < share ? 1 : 0));
      const dense = rng() < 0.15;
      const k = Math.floor(rng() * Math.min(n, 6));
      const idx = dense ? null : Uint32Array.from(Array.from({ length: n }, (_, b) => b).sort(() => rng() - 0.5).slice(0, k));
      const mass = Float32Array.from({ length: dense ? n : k }, () => rng());
      const obs: Observation = { layer: l, step, nBlocks: n, idx, mass, uniform: rng() < 0.1 ? 0 : rng() / n, groups: [], attended, attendedCount: attended.reduce((a, b) => a + b, 0) };
      const list: number[] = [];
      for (let b = 0; b < n; b++) if (attended[b]) list.push(b);
      plain.observe(obs);
      listed.observe(obs, Int32Array.from(list), list.length);
    }
    const scores = (s: AttentionScore) => Array.from({ length: L * M }, (_, i) => s.get(Math.floor(i / M), i % M));
    const a = scores(plain);
    const b = scores(listed);
    // (Object.is: equal doubles, -0 apart from +0)
    expect(b.map((v, i) => Object.is(v, a[i]))).not.toContain(false);
    expect(a.filter((v) => v !== 0).length).toBeGreaterThan(L * 20);
  });

  it('the same scores to the bit as listed masses added before the uniform share is taken back (repeated listed blocks too)', () => {
    const rng = seedrandom('attention-score-order');
    const L = 2;
    const M = 41;
    const s = new AttentionScore(L, M);
    // the reference: per layer, raw scores and the offset, updated in the order of the definition
    const raw = Array.from({ length: L }, () => new Float64Array(M));
    const offset = new Float64Array(L);
    const known = new Int32Array(L);
    for (let step = 0; step < 300; step++) {
      const l = Math.floor(rng() * L);
      const n = Math.min(M, 3 + Math.floor(step / 8));
      const attended = Uint8Array.from({ length: n }, () => (rng() < 0.6 ? 1 : 0));
      const k = Math.floor(rng() * 8);
      // (listed blocks drawn with repeats, in any order)
      const idx = Uint32Array.from({ length: k }, () => Math.floor(rng() * n));
      const mass = Float32Array.from({ length: k }, () => rng());
      const uniform = rng() / n;
      const list: number[] = [];
      for (let b = 0; b < n; b++) if (attended[b]) list.push(b);
      s.observe({ layer: l, step, nBlocks: n, idx, mass, uniform, groups: [], attended, attendedCount: list.length }, Int32Array.from(list), list.length);
      for (let b = known[l]; b < n; b++) raw[l][b] = -offset[l];
      known[l] = Math.max(known[l], n);
      offset[l] += uniform;
      for (let i = 0; i < k; i++) if (attended[idx[i]]) raw[l][idx[i]] += mass[i] - uniform;
      for (let b = 0; b < n; b++) if (!attended[b]) raw[l][b] -= uniform;
    }
    const mismatched: number[] = [];
    for (let l = 0; l < L; l++) for (let b = 0; b < known[l]; b++) if (!Object.is(s.get(l, b), raw[l][b] + offset[l])) mismatched.push(l * M + b);
    expect(mismatched).toEqual([]);
    expect(known[0] + known[1]).toBeGreaterThan(M);
  });
});
