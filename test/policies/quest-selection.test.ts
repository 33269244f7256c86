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

// scenarios: [seed, chance a key norm changes at a step, the norm levels, the mass levels]; the last two
// change norms at most steps among masses with many ties
const SCENARIOS: [number, number, number[], number[]][] = [
  [1, 0.1, [1, 2, 3, 4], [0.001, 0.02, 0.05, 0.1]],
  [2, 0.1, [1, 2, 3, 4], [0.001, 0.02, 0.05, 0.1]],
  [3, 0.1, [1, 2, 3, 4], [0.001, 0.02, 0.05, 0.1]],
  [4, 0.1, [1, 2, 3, 4], [0.001, 0.02, 0.05, 0.1]],
  [5, 0.9, [1, 2], [0.05, 0.1]],
  [6, 0.9, [1, 2], [0.05, 0.1]],
];

describe('quest selection, step by step', () => {
  for (const [seed, normChange, normLevels, massLevels] of SCENARIOS) {
    it(`attends the newest page and the top pages by (last mass, key norm, block), seed ${seed}, norms change at ${normChange} of the steps`, () => {
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
        const level = (xs: number[]) => xs[Math.floor(next() * xs.length)];
        while (norms.length < n) norms.push(level(normLevels));
        // the listed blocks and masses: mostly those of the step before, else drawn anew
        if (s.step === 0 || next() < 0.3) {
          const pick = new Set<number>();
          while (pick.size < 6) pick.add(Math.floor(next() * n));
          idx = [...pick];
          mass = idx.map(() => level(massLevels));
        }
        if (next() < 0.2) remainder = [0.3, 0.5, 0.7][Math.floor(next() * 3)];
        for (let c = 0; c < 4; c++) if (next() < normChange) norms[Math.floor(next() * n)] = level(normLevels);
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

// Two layers and other budget factors: configurations drawn as below, the ones among 40 draws whose
// key norms change at the selection's end (a selection kept across a norm change there must be redone)
describe('quest selection, two layers, budget factors, norms changing at the boundary', () => {
  for (const seed of [21, 22, 27]) {
    const r0 = makeRng(1000 + seed).next;
    const pick = <T>(xs: T[]): T => xs[Math.floor(r0() * xs.length)];
    const c = {
      K: 4 + Math.floor(r0() * 14),
      bf: pick([1, 1, 0.5, 1.5, 0.75]),
      pNorm: pick([0.1, 0.5, 0.9]),
      nChange: 1 + Math.floor(r0() * 4),
      pNew: pick([0.1, 0.3, 0.6]),
      masses: pick([[0.05, 0.1], [0.001, 0.02, 0.05, 0.1], [0.0125]]),
      rems: pick([[0.5], [0.3, 0.5, 0.7]]),
      topk: 2 + Math.floor(r0() * 8),
      normLv: pick([2, 4]),
    };
    it(`matches a from-scratch top-k at every step, configuration ${seed} (${JSON.stringify(c)})`, () => {
      const layers = 2;
      const steps = 160;
      const h = { ...tinyHeader(160, steps, layers), encoding: 'topk' as const, topk: c.topk };
      const next = makeRng(seed).next;
      const norms: number[][] = [[], []];
      const idx: number[][] = [[], []];
      const mass: number[][] = [[], []];
      const rem = [0.5, 0.5];
      const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n)).map((s) => {
        for (let l = 0; l < layers; l++) {
          const la = s.layers[l];
          const n = la.nBlocks;
          while (norms[l].length < n) norms[l].push(1 + Math.floor(next() * c.normLv));
          if (s.step === 0 || next() < c.pNew) {
            const chosen = new Set<number>();
            while (chosen.size < Math.min(c.topk, n)) chosen.add(Math.floor(next() * n));
            idx[l] = [...chosen];
            mass[l] = idx[l].map(() => c.masses[Math.floor(next() * c.masses.length)]);
          }
          if (next() < 0.2) rem[l] = c.rems[Math.floor(next() * c.rems.length)];
          if (next() < c.pNorm) for (let j = 0; j < c.nChange; j++) norms[l][Math.floor(next() * n)] = 1 + Math.floor(next() * c.normLv);
          la.idx = Uint32Array.from(idx[l]);
          la.mass = Float32Array.from(mass[l]);
          la.remainder = rem[l];
          la.normFrom = 0;
          la.norms = Float32Array.from(norms[l].slice(0, n));
        }
        return s;
      });
      const r = replayPolicy(quest, c.K, { trace, fullHeader: h, options: { dense_layers: 0, budget_factor: c.bf } });
      const pages = Math.max(1, Math.round(c.bf * c.K));
      type Row = (typeof trace)[number]['layers'][number];
      const valueOf = (la: Row, b: number): number => {
        const i = Array.from(la.idx!).indexOf(b);
        return i >= 0 ? la.mass[i] : la.remainder / (la.nBlocks - la.idx!.length);
      };
      const last = Array.from({ length: layers }, (_, l) => Array.from({ length: trace[0].layers[l].nBlocks }, (_, b) => valueOf(trace[0].layers[l], b)));
      for (const s of trace) {
        const skipped: string[] = [];
        for (let l = 0; l < layers; l++) {
          const la = s.layers[l];
          const n = la.nBlocks;
          const newest = n - 1;
          const key = (b: number) => last[l][b] + 1e-9 * la.norms[b];
          const ranked = Array.from({ length: newest }, (_, b) => b).sort((a, b) => key(b) - key(a) || b - a);
          const attended = new Set([newest, ...ranked.slice(0, pages - 1)]);
          for (let b = 0; b < n; b++) if (!attended.has(b)) skipped.push(`${l}:${b}`);
          for (const b of attended) last[l][b] = valueOf(la, b);
        }
        expect(r.acts('skip', s.step).sort(), `step ${s.step}`).toEqual(skipped.sort());
      }
    });
  }
});
