/**
 * Quest's selection when key norms change between steps, old blocks included: with every row's mass
 * even (top-k rows listing nothing), the estimates tie and the key norm decides, so the pages attended
 * at each step must be the newest plus the top pages by (last observed mass, key norm, block) computed
 * from scratch here, step by step (blocks whose norm rose since the last selection included).
 */
import { describe, expect, it } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import { quest } from '../../policies/quest.js';
import { denseSteps, tinyHeader } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';

/** a small deterministic generator (mulberry32, hil/rng.ts) */
const rng = (seed: number): (() => number) => makeRng(seed).next;

describe('quest with changing key norms', () => {
  // rows carry every block's norm, or only those from the first that changed (the replay keeps the rest)
  // (recent: the norm that rises is one of the three blocks before the newest, at the end of what the
  // last selection read)
  const cases: [number, boolean, boolean][] = [[1, false, false], [2, false, false], [3, false, false], [1, true, false], [2, true, false], [1, true, true], [2, true, true], [3, true, true], [4, true, true]];
  for (const [seed, suffix, recent] of cases) {
    it(`attends the newest page and the top pages by (last mass, key norm, block), seed ${seed}${suffix ? ', rows with the changed norms only' : ''}${recent ? ', recent blocks' : ''}`, () => {
      // one layer, block size 4, prompt 40 tokens = 10 blocks, 16 steps; budget 6 pages = newest + top 5
      const h = { ...tinyHeader(40, 16, 1), encoding: 'topk' as const, topk: 4 };
      const r0 = rng(seed);
      // norms from few levels (ties between them too); from step 1 on, at each step a random older
      // block's norm rises above every other (the rest keep theirs), and at some steps all are redrawn
      const norms: number[] = [];
      const fullNorms: Float32Array[] = [];
      let before: number[] = [];
      const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n)).map((s) => {
        // (in top-k form with nothing listed: every block carries the even share)
        const la = s.layers[0];
        la.idx = new Uint32Array(0);
        la.mass = new Float32Array(0);
        la.remainder = 1;
        while (norms.length < la.nBlocks) norms.push(1 + Math.floor(r0() * 6));
        if (s.step > 0) norms[recent ? la.nBlocks - 2 - Math.floor(r0() * 3) : Math.floor(r0() * (la.nBlocks - 1))] = 10 + s.step;
        if (r0() < (recent ? 0.05 : 0.15)) for (let b = 0; b < norms.length; b++) norms[b] = 1 + Math.floor(r0() * 6);
        fullNorms.push(Float32Array.from(norms.slice(0, la.nBlocks)));
        let from = 0;
        if (suffix && s.step > 0) {
          from = la.nBlocks - 1;
          for (let b = 0; b < before.length; b++) if (norms[b] !== before[b]) from = Math.min(from, b);
        }
        before = norms.slice(0, la.nBlocks);
        la.normFrom = from;
        la.norms = Float32Array.from(norms.slice(from, la.nBlocks));
        return s;
      });
      const K = 6;
      const r = replayPolicy(quest, K, { trace, fullHeader: h, options: { dense_layers: 0 } });
      // the reference: every block observed at prefill (step 0's row), then each where attended
      // (the even share of n blocks: remainder 1 over n)
      const share = (n: number) => 1 / n;
      const last = Array(trace[0].layers[0].nBlocks).fill(share(trace[0].layers[0].nBlocks));
      let attendedSteps = 0;
      for (const s of trace) {
        const la = s.layers[0];
        const n = la.nBlocks;
        const newest = n - 1;
        const key = (b: number) => last[b] + 1e-9 * fullNorms[s.step][b];
        const ranked = Array.from({ length: newest }, (_, b) => b).sort((a, b) => key(b) - key(a) || b - a);
        const attended = new Set([newest, ...ranked.slice(0, K - 1)]);
        const skipped = Array.from({ length: n }, (_, b) => b).filter((b) => !attended.has(b)).map((b) => `0:${b}`);
        expect(r.acts('skip', s.step).sort(), `step ${s.step}`).toEqual(skipped.sort());
        for (const b of attended) last[b] = share(n);
        attendedSteps++;
      }
      expect(attendedSteps).toBe(16);
    });
  }
});
