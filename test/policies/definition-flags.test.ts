import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { fullCache } from '../../policies/full-cache.js';
import { oracle } from '../../policies/oracle.js';
import type { PolicyDefinition, PolicySetup } from '../../policies/policy.js';
import { registerPolicy, resolveOptions } from '../../policies/registry.js';
import { createRunPolicy } from '../../sim/run-policy.js';
import { simulate } from '../../sim/run.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { loadModel } from '../../sim/models/load-model.js';
import { expandSweep, parseSweepSpec } from '../../studies/sweep-spec.js';
import { generateTrace } from '../../traces/generator.js';
import { readTraceHeader } from '../../traces/trace-reader.js';
import { readSteps } from './harness.js';

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-flags-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const trace = join(dir, 't.kvt');
generateTrace(trace, { prompt_tokens: 64, steps: 2 } as never);

// the quality reference under another name, and a probe that records the setup it is given (one plain, one oracle)
const reference: PolicyDefinition = { ...fullCache, name: 'flags-reference' };
const seen: Record<string, PolicySetup> = {};
const probe = (name: string, isOracle: boolean): PolicyDefinition => ({
  name,
  description: 'records its setup',
  source: 'test',
  oracle: isOracle,
  options: [],
  create: (_o, setup) => {
    seen[name] = setup;
    return { name, decide: () => undefined, observe: () => undefined };
  },
});
registerBuiltinPolicies();
registerPolicy(reference);
registerPolicy(probe('flags-plain', false));
registerPolicy(probe('flags-oracle', true));

describe('policy definition flags', () => {
  it('full: a definition with full = true runs once per trace at 100% in a sweep, whatever its name', () => {
    expect(fullCache.full).toBe(true);
    const spec = parseSweepSpec({ traces: [trace], policies: ['flags-reference', 'h2o'], budgets: ['10%', '20%'], hardware: ['h100-pcie5'] }, join(dir, 's.json'));
    expect(expandSweep(spec).map((c) => [c.policy.name, c.budget])).toEqual([
      ['flags-reference', '100%'],
      ['h2o', '10%'],
      ['h2o', '20%'],
    ]);
  });

  it('full: a run of such a policy gets the whole KV as its budget, a run of another the budget asked', () => {
    const ref = simulate({ trace, policy: 'flags-reference', hardware: 'h100-pcie5', hbm_budget: '10%', trace_steps: 0 }).resolved;
    expect(ref.budgetBytes).toBe(ref.fullKvBytes);
    const h2o = simulate({ trace, policy: 'h2o', hardware: 'h100-pcie5', hbm_budget: '50%', trace_steps: 0 }).resolved;
    expect(h2o.budgetBytes).toBe(h2o.fullKvBytes / 2);
  });

  it('oracle: only a definition with oracle = true is given the trace\'s future steps; a plain policy gets plain numbers', () => {
    const header = readTraceHeader(trace);
    const input = { model: loadModel('llama-3-8b'), header, hardware: loadHardware('h100-pcie5'), maxBlocks: 5, budgetBlocks: 2, futureSteps: () => readSteps(trace) };
    createRunPolicy('flags-plain', {}, input);
    createRunPolicy('flags-oracle', {}, input);
    expect(seen['flags-plain'].futureSteps).toBeUndefined();
    expect([...seen['flags-oracle'].futureSteps!()].map((s) => s.step)).toEqual([0, 1]);
    expect(seen['flags-plain'].model.weight_bytes_per_layer).toBe(loadModel('llama-3-8b').weight_bytes_per_layer);
    expect(seen['flags-plain'].quantRelError!(16, 128, false)).toBe(0);
  });

  it('oracle: created without future steps, it says what it needs', () => {
    const setup = { ...seen['flags-plain'], futureSteps: undefined };
    expect(() => oracle.create(resolveOptions(oracle, {}) as never, setup)).toThrow("policy oracle: needs the trace's future steps (setup.futureSteps), which the caller gives to oracle policies");
  });
});
