/**
 * Quest hands a decision's pages over as changes of the layer's previous list
 * (Actions.skipExceptListedDelta) where its selection stayed or changed at its boundary only. The same
 * replays with that call hidden (every decision hands over its whole list) must give the same summary
 * and per-step table, on generated traces at several budgets, and the changes must be taken at most
 * decisions.
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

const dir = mkdtempSync(join(tmpdir(), 'kvtier-quest-delta-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** quest behind Actions that forward every call; `delta` false hides skipExceptListedDelta */
function wrapped(name: string, delta: boolean, answers: number[]): PolicyDefinition<any> {
  return {
    ...quest,
    name,
    create(o, setup) {
      const p = quest.create(o as never, setup);
      return {
        ...p,
        name,
        decide(v, act) {
          const a: Actions = {
            evict: (l, b) => act.evict(l, b),
            demote: (l, b, t, bits) => act.demote(l, b, t, bits),
            promote: (l, b, bits) => act.promote(l, b, bits),
            prefetch: (l, b) => act.prefetch(l, b),
            prefetchOffloaded: (l) => act.prefetchOffloaded(l),
            pin: (l, b) => act.pin(l, b),
            unpin: (l, b) => act.unpin(l, b),
            skip: (b) => act.skip(b),
            skipExcept: (keep, scope) => act.skipExcept(keep, scope),
            skipExceptListed: (blocks, count, scope) => act.skipExceptListed(blocks, count, scope),
          };
          if (delta) {
            a.skipExceptListedDelta = (added, nAdded, removed, nRemoved) => {
              const n = act.skipExceptListedDelta!(added, nAdded, removed, nRemoved);
              answers.push(n);
              return n;
            };
          }
          p.decide(v, a);
        },
        observe: (obs) => p.observe(obs),
      };
    },
  };
}

describe('quest: a decision\'s list as changes of the one before', () => {
  registerBuiltinPolicies();
  const answers: number[] = [];
  registerPolicy(wrapped('quest-whole-lists', false, []), { override: true });
  registerPolicy(wrapped('quest-list-changes', true, answers), { override: true });
  const traces: [string, Record<string, unknown>][] = [
    ['default', { prompt_tokens: 3000, steps: 48, seed: 3 }],
    ['topic shifts', { prompt_tokens: 2100, steps: 40, seed: 11, topk: 32 }],
    ['4 groups', { prompt_tokens: 1500, steps: 32, seed: 2, kv_groups: 4 }],
  ];
  for (const [what, input] of traces) {
    it(`same replay as with whole lists: ${what}`, () => {
      const trace = join(dir, `${what.replace(/ /g, '-')}.kvt`);
      generateTrace(trace, { model: 'llama-3-8b', layers: 32, encoding: 'topk', ...input });
      for (const hbm_budget of ['5%', '25%', '60%']) {
        for (const policy_options of [{}, { budget_factor: 0.5, dense_layers: 1 }]) {
          const run = (policy: string) => simulate({ trace, policy, policy_options, hardware: 'h100-pcie5', hbm_budget, trace_steps: 0 });
          const before = answers.length;
          const whole = run('quest-whole-lists');
          const changes = run('quest-list-changes');
          expect(changes.steps, `${hbm_budget} ${JSON.stringify(policy_options)}`).toEqual(whole.steps);
          expect({ ...changes.summary, policy: '' }).toEqual({ ...whole.summary, policy: '' });
          // one group: many decisions hand over changes, each taken (quest offers them only after a list of
          // its own); several groups select from scratch: none
          const offered = answers.length - before;
          expect(answers.slice(before).filter((n) => n >= 0).length).toBe(offered);
          if (input.kv_groups === undefined) expect(offered).toBeGreaterThan(0.2 * 32 * Number(input.steps));
          else expect(offered).toBe(0);
        }
      }
    });
  }
});
