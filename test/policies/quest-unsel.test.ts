/**
 * Quest's unselected HBM residents from the selection's changes (unselectedSince): after a decision
 * that left HBM holding exactly its selected pages and its newest page, a selection that stays or
 * changes at its boundary lists the residents to demote from the pages that left it, the newest
 * page before and the blocks created since, not from every resident. They are demoted in block
 * order, which the replay's copies and slots follow, so whole replays against quest listing them
 * from every resident (unselFromChanges false) must agree to the last field: generated traces with
 * one KV group (new blocks every 16 steps, selections by norm order and from the known blocks), one
 * without a recent window (the page that was the newest often left out), a needle, four groups
 * (never taken), the bundled ones, at budgets where HBM holds a few, most or nearly all of the
 * pages, and budget factors that make the selection larger or smaller than HBM; and at every
 * decision where they are taken, the same residents as listed from every resident.
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

describe('quest: unselected residents from the selection\'s changes', () => {
  registerBuiltinPolicies();
  const stats: QuestStats = { byNorm: 0, bySince: 0, sinceDiffers: 0 };
  registerPolicy({ ...quest, name: 'quest-since', create: (o, setup) => createQuest(o as never, setup, true, true, stats) }, { override: true });
  registerPolicy({ ...quest, name: 'quest-every-resident', create: (o, setup) => createQuest(o as never, setup, true, true, undefined, true, true, false) }, { override: true });
  const dir = mkdtempSync(join(tmpdir(), 'kvtier-quest-since-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const generated = (name: string, input: Record<string, unknown>) => () => {
    const t = join(dir, `${name}.kvt`);
    generateTrace(t, { model: 'llama-3-8b', layers: 32, encoding: 'topk', ...input });
    return t;
  };
  const traces: [string, () => string, boolean][] = [
    ['a generated trace', generated('g', { prompt_tokens: 6000, steps: 48, seed: 5, topk: 48 }), true],
    ['a generated trace with topic shifts', generated('t', { prompt_tokens: 4000, steps: 40, seed: 11, topk: 32 }), true],
    ['a generated needle trace', generated('n', { prompt_tokens: 3000, steps: 40, seed: 3, topk: 32, needle: {} }), true],
    // (no mass on the recent window: the page that was the newest is often left out when a new one comes)
    ['a generated trace without a recent window', generated('w', { prompt_tokens: 4000, steps: 64, seed: 9, topk: 32, window_share: 0 }), true],
    ['a generated 4-group trace', generated('k4', { prompt_tokens: 2500, steps: 32, seed: 2, kv_groups: 4 }), false],
    ['the bundled 2k trace', () => fileURLToPath(new URL('../../traces/bundled/llama-3-8b-2k-default.kvt', import.meta.url)), true],
    ['the bundled 2k needle trace', () => fileURLToPath(new URL('../../traces/bundled/llama-3-8b-2k-needle.kvt', import.meta.url)), true],
  ];
  for (const [what, make, taken] of traces) {
    it(`same replay as from every resident: ${what}`, () => {
      const trace = make();
      const before = stats.bySince!;
      for (const [hbm_budget, policy_options] of GRID) {
        const run = (policy: string) => simulate({ trace, policy, policy_options, hardware: 'h100-pcie5', hbm_budget, trace_steps: 0 });
        const since = run('quest-since');
        const every = run('quest-every-resident');
        expect(since.steps, `${hbm_budget} ${JSON.stringify(policy_options)}`).toEqual(every.steps);
        expect({ ...since.summary, policy: '' }).toEqual({ ...every.summary, policy: '' });
      }
      // (taken at many decisions with one group)
      if (taken) expect(stats.bySince! - before).toBeGreaterThan(100);
      else expect(stats.bySince! - before).toBe(0);
      // (and at each, the same residents as from every resident)
      expect(stats.sinceDiffers).toBe(0);
    });
  }
});
