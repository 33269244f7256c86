/**
 * Quest holds the uniform share of the pages an observation attended without listing them as one
 * value per layer while its selection stays (written out before it changes). Traces where that
 * matters: the rows list a few fixed old blocks, the even share grows from step to step (the pages
 * attended now rank above those skipped), and each new block's key norm is the largest so far, so that
 * a page that stops being the newest (attended, not listed: the share) enters the selection by its
 * norm at a step whose selection otherwise stays. The pages attended at each step must be the newest
 * plus the top pages by (last observed mass + 1e-9 · key norm, block), computed from scratch, and the
 * pages demoted the resident ones of least estimate (the unselected ones first). Two of the traces
 * also raise the norm of the block before the newest now and then, in rows that carry only the norms
 * that changed (the replay says which were written: quest compares the others only then). And whole replays
 * against quest writing the share to every page at every observation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createQuest, quest } from '../../policies/quest.js';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { registerPolicy } from '../../policies/registry.js';
import { simulate } from '../../sim/run.js';
import { generateTrace } from '../../traces/generator.js';
import { QUEST_REPLAY_GRID } from './quest-grid.js';
import { selectBottomKKeyed } from '../../policies/quickselect.js';
import { denseSteps, tinyHeader } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';

describe('quest: the even share held as one value', () => {
  // [what, the blocks the rows list, a new block's norm, the rows' remainder by step, budget factor,
  // whether now and then the block before the newest takes the largest norm, the rows then carrying
  // only the norms from the first that changed on (the replay keeps the others)]
  const cases: [string, number[], (b: number) => number, (s: number) => number, number, boolean?][] = [
    ['new norms largest, share growing', [0, 1, 2], (b) => b, (s) => 0.3 + 0.004 * s, 1],
    ['new norms largest, share growing', [3, 9, 17, 20], (b) => b, (s) => 0.3 + 0.002 * s, 1],
    ['new norms least, share up and down', [0, 1, 2], () => 0.5, (s) => 0.3 + 0.02 * Math.abs((s % 24) - 12), 1],
    ['new norms mixed, share up and down', [5, 6], (b) => (b % 3 === 0 ? 0.5 : b), (s) => 0.3 + 0.01 * Math.abs((s % 30) - 15), 1],
    ['nothing listed, share up and down', [], (b) => b % 5, (s) => 0.3 + 0.03 * Math.abs((s % 16) - 8), 1],
    // more pages than HBM holds: selected pages demoted too
    ['new norms mixed, share up and down, budget factor 1.5', [5, 6], (b) => (b % 3 === 0 ? 0.5 : b), (s) => 0.3 + 0.01 * Math.abs((s % 30) - 15), 1.5],
    ['nothing listed, share up and down, budget factor 1.25', [], (b) => b % 5, (s) => 0.3 + 0.03 * Math.abs((s % 16) - 8), 1.25],
    ['new norms least, share growing, the block before the newest rising', [0, 1, 2], () => 0.5, (s) => 0.3 + 0.004 * s, 1, true],
    ['new norms mixed, share up and down, the block before the newest rising', [5, 6], (b) => (b % 3 === 0 ? 0.5 : b), (s) => 0.3 + 0.01 * Math.abs((s % 30) - 15), 1, true],
  ];
  for (const [what, listed, newNorm, remainder, factor, rise] of cases) {
    it(`attends the newest page and the top pages from scratch: ${what}, rows listing [${listed}]`, () => {
      // one layer, block size 4, prompt 160 tokens = 40 blocks, 120 steps; budget 12 pages
      const steps = 120;
      const h = { ...tinyHeader(160, steps, 1), encoding: 'topk' as const, topk: Math.max(1, listed.length) };
      const norms: number[] = [];
      const fullNorms: Float32Array[] = [];
      let before: number[] = [];
      const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n)).map((s) => {
        const la = s.layers[0];
        const n = la.nBlocks;
        // old blocks' norms from 1 to 4; each later block's above every one before
        while (norms.length < n) norms.push(norms.length < 40 ? 1 + (norms.length % 4) : newNorm(norms.length));
        if (rise && s.step % 5 === 2) norms[n - 2] = 1e6 + s.step;
        la.idx = Uint32Array.from(listed);
        la.mass = Float32Array.from(listed.map((b) => 0.05 + 0.01 * (b % 3)));
        la.remainder = remainder(s.step);
        fullNorms.push(Float32Array.from(norms.slice(0, n)));
        let from = 0;
        if (rise && s.step > 0) {
          from = n - 1;
          for (let b = 0; b < before.length; b++) if (norms[b] !== before[b]) from = Math.min(from, b);
        }
        before = norms.slice(0, n);
        la.normFrom = from;
        la.norms = Float32Array.from(norms.slice(from, n));
        return s;
      });
      const K = 12;
      // the HBM blocks before each decision
      const resident: number[][] = [];
      const r = replayPolicy(quest, K, {
        trace,
        fullHeader: h,
        options: { dense_layers: 0, budget_factor: factor },
        beforeDecide: (v, cache) => {
          if (v.step >= 0) resident[v.step] = Array.from({ length: cache.created[0] }, (_, b) => b).filter((b) => cache.tierOf(0, b) === 0);
        },
      });
      const pages = Math.round(factor * K);
      const valueOf = (la: (typeof trace)[number]['layers'][number], b: number): number => {
        const i = listed.indexOf(b);
        return i >= 0 ? la.mass[i] : la.remainder / (la.nBlocks - listed.length);
      };
      const first = trace[0].layers[0];
      const last = Array.from({ length: first.nBlocks }, (_, b) => valueOf(first, b));
      let entered = 0;
      let demotedSelected = 0;
      let prev = new Set<number>();
      for (const s of trace) {
        const la = s.layers[0];
        const n = la.nBlocks;
        const newest = n - 1;
        while (last.length < n) last.push(0);
        const key = (b: number) => last[b] + 1e-9 * fullNorms[s.step][b];
        const ranked = Array.from({ length: newest }, (_, b) => b).sort((a, b) => key(b) - key(a) || b - a);
        const top = ranked.slice(0, pages - 1);
        const attended = new Set([newest, ...top]);
        const skipped = Array.from({ length: n }, (_, b) => b).filter((b) => !attended.has(b)).map((b) => `0:${b}`);
        expect(r.acts('skip', s.step).sort(), `step ${s.step}`).toEqual(skipped.sort());
        // demoted, in order: the resident pages of least estimate but the newest, the unselected ones
        // first (in block order, then the selected ones), as the policy's selection orders them
        const demoted = r.log.filter((a) => a.step === s.step && a.what === 'demote:dram:16').map((a) => a.args[1]);
        const chosen = new Set(top);
        const unselected = resident[s.step].filter((b) => b !== newest && !chosen.has(b));
        const pool = demoted.length > unselected.length ? [...unselected, ...resident[s.step].filter((b) => chosen.has(b))] : unselected;
        const ids = Int32Array.from(pool);
        const k = selectBottomKKeyed(ids, Float64Array.from(pool, key), pool.length, demoted.length);
        expect(demoted, `step ${s.step}`).toEqual(Array.from(ids.subarray(0, k)));
        if (pool !== unselected) demotedSelected++;
        // pages past the prompt entering the selection
        entered += top.filter((b) => b >= 40 && !prev.has(b)).length;
        prev = new Set(top);
        for (const b of attended) last[b] = valueOf(la, b);
      }
      expect(entered).toBeGreaterThan(5);
      if (factor > 1) expect(demotedSelected).toBeGreaterThan(5);
    });
  }
});

describe('quest: the even share held as one value, against writing it to every page', () => {
  registerBuiltinPolicies();
  registerPolicy({ ...quest, name: 'quest-shares-written', create: (o, setup) => createQuest(o as never, setup, false) }, { override: true });
  const dir = mkdtempSync(join(tmpdir(), 'kvtier-quest-lazy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const traces: [string, () => string][] = [
    ['a generated trace', () => {
      const t = join(dir, 'g.kvt');
      generateTrace(t, { model: 'llama-3-8b', layers: 32, prompt_tokens: 2500, steps: 32, seed: 9, encoding: 'topk', topk: 48 });
      return t;
    }],
    ['the bundled 2k trace', () => fileURLToPath(new URL('../../traces/bundled/llama-3-8b-2k-default.kvt', import.meta.url))],
    ['the bundled 2k needle trace', () => fileURLToPath(new URL('../../traces/bundled/llama-3-8b-2k-needle.kvt', import.meta.url))],
  ];
  for (const [what, make] of traces) {
    it(`same replay: ${what}`, () => {
      const trace = make();
      // (budget factor 1.5: layers above their share of HBM demote selected pages at steps whose selection stays)
      for (const [hbm_budget, policy_options] of QUEST_REPLAY_GRID) {
        const run = (policy: string) => simulate({ trace, policy, policy_options, hardware: 'h100-pcie5', hbm_budget, trace_steps: 0 });
        const held = run('quest');
        const written = run('quest-shares-written');
        expect(held.steps, `${hbm_budget} ${JSON.stringify(policy_options)}`).toEqual(written.steps);
        expect({ ...held.summary, policy: '' }).toEqual({ ...written.summary, policy: '' });
      }
    });
  }
});
