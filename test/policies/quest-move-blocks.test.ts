/**
 * Quest hands its demotions and promotions over as lists (Actions.demoteBlocks, promoteBlocks). The
 * same replays with those calls hidden (every page moved by its own demote or promote call) must give
 * the same summary and per-step table, refused moves and prefetches included, on generated traces at
 * several budgets and options; the lists must carry most of the moves.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Actions, PolicyDefinition } from '../../policies/policy.js';
import { quest } from '../../policies/quest.js';
import { registerPolicy } from '../../policies/registry.js';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { simulate } from '../../sim/run.js';
import { generateTrace } from '../../traces/generator.js';

/**
 * The budgets and options replayed: at 5% (HBM holds a few pages) every budget factor; at 25% the
 * factors 1 and 1.5 (the selection larger than HBM, selected pages demoted); at 60% the factor 1.
 */
const GRID: [string, Record<string, unknown>][] = [
  ['5%', {}],
  ['5%', { budget_factor: 0.5, dense_layers: 1 }],
  ['5%', { budget_factor: 1.5 }],
  ['25%', {}],
  ['25%', { budget_factor: 1.5 }],
  ['60%', {}],
];

const dir = mkdtempSync(join(tmpdir(), 'kvtier-quest-move-blocks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * quest behind Actions that forward every call; `lists` false hides demoteBlocks and promoteBlocks.
 * refuse: a move of block b of layer l at step s is refused (not forwarded) where (s * 7 + l * 3 + b)
 * % refuse is 0, by the single calls and the lists alike (refusals quest answers with prefetches)
 */
function wrapped(name: string, lists: boolean, moved: { n: number }, refuse = 0): PolicyDefinition<any> {
  return {
    ...quest,
    name,
    create(o, setup) {
      const p = quest.create(o as never, setup);
      return {
        ...p,
        name,
        decide(v, act) {
          const no = (l: number, b: number) => refuse > 0 && v.step >= 0 && (v.step * 7 + l * 3 + b) % refuse === 0;
          const a: Actions = {
            evict: (l, b) => act.evict(l, b),
            demote: (l, b, t, bits) => !no(l, b) && act.demote(l, b, t, bits),
            promote: (l, b, bits) => !no(l, b) && act.promote(l, b, bits),
            prefetch: (l, b) => act.prefetch(l, b),
            prefetchOffloaded: (l) => act.prefetchOffloaded(l),
            pin: (l, b) => act.pin(l, b),
            unpin: (l, b) => act.unpin(l, b),
            skip: (b) => act.skip(b),
            skipExcept: (keep, scope) => act.skipExcept(keep, scope),
            skipExceptListed: (blocks, count, scope) => act.skipExceptListed(blocks, count, scope),
            skipExceptListedDelta: (added, nAdded, removed, nRemoved) => act.skipExceptListedDelta!(added, nAdded, removed, nRemoved),
          };
          if (lists) {
            // (up to the first block refused here, by the driver's lists)
            a.demoteBlocks = (l, blocks, from, count, tier, bits) => {
              let e = from;
              while (e < count && !no(l, blocks[e])) e++;
              const j = act.demoteBlocks!(l, blocks, from, e, tier, bits);
              moved.n += j - from;
              return j;
            };
            a.promoteBlocks = (l, blocks, from, count) => {
              let e = from;
              while (e < count && !(no(l, blocks[e]) && v.cache.tierOf(l, blocks[e]) > 0)) e++;
              const j = act.promoteBlocks!(l, blocks, from, e);
              moved.n += j - from;
              return j;
            };
          }
          p.decide(v, a);
        },
        observe: (obs) => p.observe(obs),
      };
    },
  };
}

describe('quest: demotions and promotions as lists', () => {
  registerBuiltinPolicies();
  const moved = { n: 0 };
  registerPolicy(wrapped('quest-single-moves', false, { n: 0 }), { override: true });
  registerPolicy(wrapped('quest-move-lists', true, moved), { override: true });
  registerPolicy(wrapped('quest-single-refused', false, { n: 0 }, 5), { override: true });
  registerPolicy(wrapped('quest-lists-refused', true, { n: 0 }, 5), { override: true });
  const traces: [string, Record<string, unknown>][] = [
    ['default', { prompt_tokens: 3000, steps: 48, seed: 3 }],
    ['topic shifts', { prompt_tokens: 2100, steps: 40, seed: 11, topk: 32 }],
    ['4 groups', { prompt_tokens: 1500, steps: 32, seed: 2, kv_groups: 4 }],
  ];
  for (const [what, input] of traces) {
    it(`same replay as with single moves: ${what}`, () => {
      const trace = join(dir, `${what.replace(/ /g, '-')}.kvt`);
      generateTrace(trace, { model: 'llama-3-8b', layers: 32, encoding: 'topk', ...input });
      let prefetched = 0;
      for (const [hbm_budget, policy_options] of GRID) {
        const run = (policy: string) => simulate({ trace, policy, policy_options, hardware: 'h100-pcie5', hbm_budget, trace_steps: 0 });
        moved.n = 0;
        const single = run('quest-single-moves');
        const lists = run('quest-move-lists');
        const at = `${hbm_budget} ${JSON.stringify(policy_options)}`;
        expect(lists.steps, at).toEqual(single.steps);
        expect({ ...lists.summary, policy: '' }, at).toEqual({ ...single.summary, policy: '' });
        expect(lists.refusalExamples, at).toEqual(single.refusalExamples);
        // (the demotions and promotions went by the lists, the prompt's too)
        const a = single.summary.actions;
        const r = single.summary.refused_actions;
        const n = (k: string) => (a[k] ?? 0) + (a[`prefill_${k}`] ?? 0);
        // (budget_factor above 1: some decisions demote selected pages, then promote them one by one)
        expect(moved.n, `${at} ${JSON.stringify(a)} ${JSON.stringify(r)}`).toBeGreaterThan(0.5 * (n('demote') + n('promote')));
        if (!('budget_factor' in policy_options)) expect(moved.n, at).toBe(n('demote') + n('promote'));
        // moves refused one in five: quest goes on after each (and prefetches a page it could not promote)
        const refusedSingle = run('quest-single-refused');
        const refusedLists = run('quest-lists-refused');
        expect(refusedLists.steps, at).toEqual(refusedSingle.steps);
        expect({ ...refusedLists.summary, policy: '' }, at).toEqual({ ...refusedSingle.summary, policy: '' });
        if ((refusedSingle.summary.actions.prefetch ?? 0) > (a.prefetch ?? 0)) prefetched++;
      }
      expect(prefetched).toBeGreaterThan(4);
    });
  }
});
