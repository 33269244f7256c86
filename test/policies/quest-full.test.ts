/**
 * Two shortcuts of quest's decisions that select from every block, each replayed against the
 * computation it replaces.
 *
 * A full selection (one group) selects its floor pair and boundary among the blocks whose key is at
 * least a bound taken from a sample of the keys (fullBound), the others ranking below the floor; when
 * fewer than it keeps are at or above the bound (or a key is NaN) it selects among every block, as
 * with boundFull false. Whole replays against that, on traces long enough for the bound (at least 512
 * blocks, three times the pages kept), one group, at budgets of 5 and 20% and budget factors 1, 1.5
 * and 0.5.
 *
 * Quest lists a decision's promotions and unselected HBM residents by one pass over the layer's
 * blocks when it has many pages to promote (splitByTier), in place of its lists sorted (the selected
 * pages below HBM; the resident list less the selection). The order of both is the order of the moves
 * (demotions are taken from the residents in that order), which the replay's copies and slots follow,
 * so whole replays against quest with the lists sorted (scanMoves false) must agree to the last field,
 * on traces and budgets where the pass is taken many times: generated ones with one KV group (whose
 * full selections swap most of the selection), four groups, a needle, a dense one, and the bundled
 * ones, at budgets where HBM holds a few, most or nearly all of the pages, and budget factors that
 * make the selection larger than HBM (selected pages demoted too) or smaller.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createQuest, quest, type QuestStats } from '../../policies/quest.js';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { registerPolicy } from '../../policies/registry.js';
import { simulate } from '../../sim/run.js';
import { generateTrace } from '../../traces/generator.js';
import { QUEST_REPLAY_GRID } from './quest-grid.js';

const GRID = QUEST_REPLAY_GRID;

describe('quest: a full selection among the blocks at or above a sampled bound', () => {
  registerBuiltinPolicies();
  const stats: QuestStats = { byNorm: 0, byBound: 0, boundMissed: 0 };
  registerPolicy({ ...quest, name: 'quest-bound', create: (o, setup) => createQuest(o as never, setup, true, true, stats) }, { override: true });
  registerPolicy({ ...quest, name: 'quest-every-block', create: (o, setup) => createQuest(o as never, setup, true, true, undefined, true, false) }, { override: true });
  const dir = mkdtempSync(join(tmpdir(), 'kvtier-quest-bound-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const traces: [string, Record<string, unknown>][] = [
    ['a generated trace', { prompt_tokens: 12000, steps: 32, seed: 5, topk: 48 }],
    ['a generated trace with topic shifts', { prompt_tokens: 10000, steps: 20, seed: 11, topk: 32 }],
    ['a generated needle trace', { prompt_tokens: 9000, steps: 20, seed: 3, topk: 32, needle: {} }],
    ['a generated trace with few listed blocks', { prompt_tokens: 16000, steps: 20, seed: 8, topk: 8 }],
  ];
  for (const [what, input] of traces) {
    it(`same replay as selecting among every block: ${what}`, () => {
      const trace = join(dir, `${what.replace(/ /g, '-')}.kvt`);
      generateTrace(trace, { model: 'llama-3-8b', layers: 32, encoding: 'topk', ...input });
      const before = stats.byBound!;
      for (const hbm_budget of ['5%', '20%']) {
        for (const policy_options of [{}, { budget_factor: 1.5 }, { budget_factor: 0.5, dense_layers: 1 }]) {
          const run = (policy: string) => simulate({ trace, policy, policy_options, hardware: 'h100-pcie5', hbm_budget, trace_steps: 0 });
          const bound = run('quest-bound');
          const every = run('quest-every-block');
          expect(bound.steps, `${hbm_budget} ${JSON.stringify(policy_options)}`).toEqual(every.steps);
          expect({ ...bound.summary, policy: '' }).toEqual({ ...every.summary, policy: '' });
        }
      }
      // (the bound was used, and mostly held)
      expect(stats.byBound! - before).toBeGreaterThan(20);
    });
  }
  it('the bound held at most full selections', () => {
    expect(stats.byBound!).toBeGreaterThan(100);
    expect(stats.boundMissed!).toBeLessThan(0.2 * stats.byBound!);
  });
});

describe('quest: promotions and unselected residents from one pass over the blocks', () => {
  registerBuiltinPolicies();
  const stats: QuestStats = { byNorm: 0, byScan: 0 };
  registerPolicy({ ...quest, name: 'quest-scan', create: (o, setup) => createQuest(o as never, setup, true, true, stats) }, { override: true });
  registerPolicy({ ...quest, name: 'quest-sorted', create: (o, setup) => createQuest(o as never, setup, true, true, undefined, false) }, { override: true });
  const dir = mkdtempSync(join(tmpdir(), 'kvtier-quest-scan-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const generated = (name: string, input: Record<string, unknown>) => () => {
    const t = join(dir, `${name}.kvt`);
    generateTrace(t, { model: 'llama-3-8b', layers: 32, encoding: 'topk', ...input });
    return t;
  };
  const traces: [string, () => string][] = [
    ['a generated trace', generated('g', { prompt_tokens: 6000, steps: 32, seed: 5, topk: 48 })],
    ['a generated trace with topic shifts', generated('t', { prompt_tokens: 4000, steps: 24, seed: 11, topk: 32 })],
    ['a generated 4-group trace', generated('k4', { prompt_tokens: 2500, steps: 24, seed: 2, kv_groups: 4 })],
    ['a generated needle trace', generated('n', { prompt_tokens: 3000, steps: 24, seed: 3, topk: 32, needle: {} })],
    ['a generated dense trace', generated('d', { prompt_tokens: 2000, steps: 32, seed: 7, encoding: 'dense' })],
    ['the bundled 2k trace', () => fileURLToPath(new URL('../../traces/bundled/llama-3-8b-2k-default.kvt', import.meta.url))],
    ['the bundled 2k needle trace', () => fileURLToPath(new URL('../../traces/bundled/llama-3-8b-2k-needle.kvt', import.meta.url))],
  ];
  for (const [what, make] of traces) {
    it(`same replay as with the lists sorted: ${what}`, () => {
      const trace = make();
      const before = stats.byScan!;
      for (const [hbm_budget, policy_options] of GRID) {
        const run = (policy: string) => simulate({ trace, policy, policy_options, hardware: 'h100-pcie5', hbm_budget, trace_steps: 0 });
        const scan = run('quest-scan');
        const sorted = run('quest-sorted');
        expect(scan.steps, `${hbm_budget} ${JSON.stringify(policy_options)}`).toEqual(sorted.steps);
        expect({ ...scan.summary, policy: '' }).toEqual({ ...sorted.summary, policy: '' });
      }
      // (the pass was taken: at the full selections and, with the budget factor 1.5, at decisions that demote selected pages)
      expect(stats.byScan! - before).toBeGreaterThan(20);
    });
  }
});
