/**
 * Quest's selection over many steps, against one computed from scratch at every step: top-k rows
 * whose listed blocks and masses (few levels: ties) often repeat from one step to the next, so that
 * the selection mostly stays as it was and changes at its boundary otherwise, key norms from few
 * levels (ties broken by block) of which one now and then changes, and uniform shares that move with
 * the remainder and the block count. The pages attended at each step must be the newest plus the
 * top pages by (last observed mass + 1e-9 · key norm, block).
 */
import { describe, expect, it } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import { quest } from '../../policies/quest.js';
import { denseSteps, tinyHeader } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';

describe('quest selection, step by step', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`attends the newest page and the top pages by (last mass, key norm, block), seed ${seed}`, () => {
      // one layer, block size 4, prompt 160 tokens = 40 blocks, 160 steps; budget 12 pages
      const steps = 160;
      const h = { ...tinyHeader(160, steps, 1), encoding: 'topk' as const, topk: 6 };
      const next = makeRng(seed).next;
      const norms: number[] = [];
      let idx: number[] = [];
      let mass: number[] = [];
      let remainder = 0.5;
      const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n)).map((s) => {
        const la = s.layers[0];
        const n = la.nBlocks;
        while (norms.length < n) norms.push(1 + Math.floor(next() * 4));
        // the listed blocks and masses: mostly those of the step before, else drawn anew
        if (s.step === 0 || next() < 0.3) {
          const pick = new Set<number>();
          while (pick.size < 6) pick.add(Math.floor(next() * n));
          idx = [...pick];
          mass = idx.map(() => [0.001, 0.02, 0.05, 0.1][Math.floor(next() * 4)]);
        }
        if (next() < 0.2) remainder = [0.3, 0.5, 0.7][Math.floor(next() * 3)];
        if (next() < 0.1) norms[Math.floor(next() * n)] = 1 + Math.floor(next() * 4);
        la.idx = Uint32Array.from(idx);
        la.mass = Float32Array.from(mass);
        la.remainder = remainder;
        la.normFrom = 0;
        la.norms = Float32Array.from(norms.slice(0, n));
        return s;
      });
      const K = 12;
      const r = replayPolicy(quest, K, { trace, fullHeader: h, options: { dense_layers: 0 } });
      // the row's value of block b: its listed mass, else the remainder spread over the unlisted blocks
      const valueOf = (la: (typeof trace)[number]['layers'][number], b: number): number => {
        const i = Array.from(la.idx!).indexOf(b);
        return i >= 0 ? la.mass[i] : la.remainder / (la.nBlocks - la.idx!.length);
      };
      // every block observed at prefill (step 0's row), then each where attended
      const first = trace[0].layers[0];
      const last = Array.from({ length: first.nBlocks }, (_, b) => valueOf(first, b));
      let changes = 0;
      let stays = 0;
      let prev = new Set<number>();
      for (const s of trace) {
        const la = s.layers[0];
        const n = la.nBlocks;
        const newest = n - 1;
        const key = (b: number) => last[b] + 1e-9 * la.norms[b];
        const ranked = Array.from({ length: newest }, (_, b) => b).sort((a, b) => key(b) - key(a) || b - a);
        const top = ranked.slice(0, K - 1);
        const attended = new Set([newest, ...top]);
        const skipped = Array.from({ length: n }, (_, b) => b).filter((b) => !attended.has(b)).map((b) => `0:${b}`);
        expect(r.acts('skip', s.step).sort(), `step ${s.step}`).toEqual(skipped.sort());
        const c = top.filter((b) => !prev.has(b)).length;
        changes += c;
        stays += +(c === 0);
        prev = new Set(top);
        for (const b of attended) last[b] = valueOf(la, b);
      }
      // (the scenario has both: steps whose selection stays and steps whose selection changes)
      expect(changes).toBeGreaterThan(10);
      expect(stays).toBeGreaterThan(steps / 8);
    });
  }
});
