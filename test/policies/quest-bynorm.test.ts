/**
 * Quest's selection when it changes at its boundary while the uniform share is held (selectByNorm:
 * the selected pages holding the share are taken in key-norm order, not passed over one by one).
 * Step by step against a top-k computed from scratch, on traces where that happens often: the rows list
 * a few blocks, the remainder (so the share) drifts up and down so that pages skipped with an older share
 * cross the band of the selected pages' share + 1e-9 · key norm, and key norms from few levels (equal
 * keys, broken by block) or from many; some traces change a norm now and then (then the selection is
 * found from every known candidate). And whole replays against quest with the selection found from
 * every known candidate (boundaryByNorm false).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import { createQuest, quest, type QuestStats } from '../../policies/quest.js';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { registerPolicy } from '../../policies/registry.js';
import { simulate } from '../../sim/run.js';
import { generateTrace } from '../../traces/generator.js';
import { denseSteps, tinyHeader } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';
import { QUEST_REPLAY_GRID } from './quest-grid.js';

const GRID = QUEST_REPLAY_GRID;

// [seed, key norms (drawn from the seed), listed blocks per row, chance a norm changes at a step, budget
// pages, budget factor]
const CASES: [number, string, number, number, number, number][] = [
  [1, 'four levels', 3, 0, 12, 1],
  [2, 'four levels', 5, 0, 12, 1],
  [3, 'two levels', 2, 0, 16, 1],
  [4, 'distinct', 3, 0, 12, 1],
  [5, 'distinct', 6, 0, 20, 1],
  [6, 'four levels', 3, 0.05, 12, 1],
  [7, 'distinct', 3, 0.05, 12, 1],
  [8, 'four levels', 4, 0, 12, 1.5],
  [9, 'two levels', 3, 0, 16, 0.75],
  // norms a few float32 steps apart: some pairs of keys equal after rounding though their norms differ
  [10, 'nearly equal', 3, 0, 12, 1],
  [11, 'nearly equal', 2, 0, 16, 1],
  [12, 'nearly equal', 4, 0.05, 12, 1.5],
  // rows that give the norms from the first one that changed (keyNormsFrom > 0): the key-norm order is
  // compared with the norms only when one below its end may have been written
  [13, 'four levels', 3, 0.05, 12, 1],
  [14, 'distinct', 4, 0.1, 16, 1],
  [15, 'nearly equal', 3, 0.05, 12, 1.5],
];
// (the cases whose rows give the norms from the first changed block on, not from block 0)
const FROM_CHANGED = new Set([13, 14, 15]);

describe('quest: a boundary selection from the pages in key-norm order', () => {
  for (const [seed, levels, topk, normChange, K, factor] of CASES) {
    it(`attends the newest page and the top pages from scratch: seed ${seed}, norms ${levels}, ${topk} listed, norm changes ${normChange}, budget ${K} x ${factor}`, () => {
      // one layer, block size 4, prompt 160 tokens = 40 blocks, 200 steps
      const steps = 200;
      const h = { ...tinyHeader(160, steps, 1), encoding: 'topk' as const, topk };
      const next = makeRng(seed).next;
      const norm = (b: number): number => {
        if (levels === 'distinct') return 1 + b * 0.37 + next();
        if (levels === 'nearly equal') return 1e-3 * (1 + Math.floor(next() * 8) * 2 ** -20);
        return 1 + Math.floor(next() * (levels === 'two levels' ? 2 : 4));
      };
      const norms: number[] = [];
      const hinted = FROM_CHANGED.has(seed);
      // every block's norm at each step (a row may give only those from its normFrom on)
      const normsAt: Float32Array[] = [];
      let idx: number[] = [];
      let mass: number[] = [];
      const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n)).map((s) => {
        const la = s.layers[0];
        const n = la.nBlocks;
        // (the first block whose norm this row writes: a new one, or one that changed)
        let from = norms.length;
        while (norms.length < n) norms.push(norm(norms.length));
        // the listed blocks: mostly those of the step before, else drawn anew
        if (s.step === 0 || next() < 0.15) {
          const pick = new Set<number>();
          while (pick.size < topk) pick.add(Math.floor(next() * n));
          idx = [...pick];
          mass = idx.map(() => [0.02, 0.05, 0.1][Math.floor(next() * 3)]);
        }
        if (next() < normChange) {
          const b = Math.floor(next() * (n - 1));
          norms[b] = norm(n);
          from = Math.min(from, b);
        }
        la.idx = Uint32Array.from(idx);
        la.mass = Float32Array.from(mass);
        // a remainder drifting up and down: the share moves a little at every step
        la.remainder = 0.4 + 0.004 * Math.abs((s.step % 50) - 25) + 0.0005 * next();
        normsAt[s.step] = Float32Array.from(norms.slice(0, n));
        la.normFrom = hinted ? Math.min(from, n - 1) : 0;
        la.norms = Float32Array.from(norms.slice(la.normFrom, n));
        return s;
      });
      const stats: QuestStats = { byNorm: 0 };
      const def = { ...quest, create: (o: never, setup: never) => createQuest(o, setup, true, true, stats) };
      const r = replayPolicy(def as typeof quest, K, { trace, fullHeader: h, options: { dense_layers: 0, budget_factor: factor } });
      const pages = Math.max(1, Math.round(factor * K));
      type Row = (typeof trace)[number]['layers'][number];
      const valueOf = (la: Row, b: number): number => {
        const i = Array.from(la.idx!).indexOf(b);
        return i >= 0 ? la.mass[i] : la.remainder / (la.nBlocks - la.idx!.length);
      };
      const first = trace[0].layers[0];
      const last = Array.from({ length: first.nBlocks }, (_, b) => valueOf(first, b));
      for (const s of trace) {
        const la = s.layers[0];
        const n = la.nBlocks;
        const newest = n - 1;
        while (last.length < n) last.push(0);
        const key = (b: number) => last[b] + 1e-9 * normsAt[s.step][b];
        const ranked = Array.from({ length: newest }, (_, b) => b).sort((a, b) => key(b) - key(a) || b - a);
        const attended = new Set([newest, ...ranked.slice(0, pages - 1)]);
        const skipped = Array.from({ length: n }, (_, b) => b).filter((b) => !attended.has(b)).map((b) => `0:${b}`);
        expect(r.acts('skip', s.step).sort(), `step ${s.step}`).toEqual(skipped.sort());
        for (const b of attended) last[b] = valueOf(la, b);
      }
      // (the boundary selections by norm order ran)
      expect(stats.byNorm).toBeGreaterThan(10);
    });
  }
});

describe('quest: boundary selections by norm order, against every known candidate', () => {
  registerBuiltinPolicies();
  const stats: QuestStats = { byNorm: 0 };
  registerPolicy({ ...quest, name: 'quest-by-norm', create: (o, setup) => createQuest(o as never, setup, true, true, stats) }, { override: true });
  registerPolicy({ ...quest, name: 'quest-every-candidate', create: (o, setup) => createQuest(o as never, setup, true, false) }, { override: true });
  const dir = mkdtempSync(join(tmpdir(), 'kvtier-quest-bynorm-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const traces: [string, () => string][] = [
    ['a generated trace', () => {
      const t = join(dir, 'g.kvt');
      generateTrace(t, { model: 'llama-3-8b', layers: 32, prompt_tokens: 3000, steps: 64, seed: 5, encoding: 'topk', topk: 48 });
      return t;
    }],
    ['a generated needle trace', () => {
      const t = join(dir, 'n.kvt');
      generateTrace(t, { model: 'llama-3-8b', layers: 32, prompt_tokens: 2500, steps: 48, seed: 3, encoding: 'topk', topk: 32, needle: {} });
      return t;
    }],
    ['the bundled 2k trace', () => fileURLToPath(new URL('../../traces/bundled/llama-3-8b-2k-default.kvt', import.meta.url))],
    ['the bundled 2k needle trace', () => fileURLToPath(new URL('../../traces/bundled/llama-3-8b-2k-needle.kvt', import.meta.url))],
  ];
  for (const [what, make] of traces) {
    it(`same replay: ${what}`, () => {
      const trace = make();
      const before = stats.byNorm;
      for (const [hbm_budget, policy_options] of GRID) {
        const run = (policy: string) => simulate({ trace, policy, policy_options, hardware: 'h100-pcie5', hbm_budget, trace_steps: 0 });
        const byNorm = run('quest-by-norm');
        const every = run('quest-every-candidate');
        expect(byNorm.steps, `${hbm_budget} ${JSON.stringify(policy_options)}`).toEqual(every.steps);
        expect({ ...byNorm.summary, policy: '' }).toEqual({ ...every.summary, policy: '' });
      }
      expect(stats.byNorm).toBeGreaterThan(before);
    });
  }
});
