/**
 * Quest's state is a class whose fields are declared (`declare` fields, policies/quest.ts) and assigned
 * in its constructor: a field declared and never assigned would be missing, reading undefined in every
 * replay (TypeScript does not check `declare` fields). A new state, and one after a replay, holds every
 * declared field as an own property with a value; only the optional counters (`stats`, given by tests)
 * may be undefined.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createQuest, quest } from '../../policies/quest.js';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import type { Policy } from '../../policies/policy.js';
import { registerPolicy } from '../../policies/registry.js';
import { simulate } from '../../sim/run.js';

const trace = fileURLToPath(new URL('../../traces/bundled/llama-3-8b-2k-default.kvt', import.meta.url));

/** the fields the state class declares, read from its source */
function declaredFields(): string[] {
  const src = readFileSync(fileURLToPath(new URL('../../policies/quest.ts', import.meta.url)), 'utf8');
  const start = src.indexOf('class QuestState {');
  const end = src.indexOf('  constructor(', start);
  expect(start).toBeGreaterThan(0);
  expect(end).toBeGreaterThan(start);
  return [...src.slice(start, end).matchAll(/^ {2}declare (?:readonly )?(\w+)[?!]?:/gm)].map((m) => m[1]).sort();
}

const undefinedFields = (p: Policy): string[] => {
  const s = (p as unknown as { s: Record<string, unknown> }).s;
  return Object.keys(s).filter((k) => k !== 'stats' && s[k] === undefined);
};

describe('quest state', () => {
  registerBuiltinPolicies();
  const made: { fresh: string[]; policy: Policy }[] = [];
  registerPolicy(
    {
      ...quest,
      name: 'quest-state',
      create: (o, setup) => {
        const policy = createQuest(o as never, setup);
        made.push({ fresh: undefinedFields(policy), policy });
        return policy;
      },
    },
    { override: true },
  );

  it('has every field assigned when made and after a replay', () => {
    const declared = declaredFields();
    expect(declared.length).toBeGreaterThan(50);
    for (const policy_options of [{}, { budget_factor: 0.5, dense_layers: 1 }]) {
      simulate({ trace, policy: 'quest-state', policy_options, hardware: 'h100-pcie5', hbm_budget: '20%', trace_steps: 0 });
    }
    expect(made.length).toBe(2);
    for (const m of made) {
      expect(m.fresh).toEqual([]);
      expect(undefinedFields(m.policy)).toEqual([]);
      // every declared field is an own property of the state, and nothing else is
      expect(Object.keys((m.policy as unknown as { s: object }).s).sort()).toEqual(declared);
    }
  });
});
