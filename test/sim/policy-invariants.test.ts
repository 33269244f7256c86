import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { getPolicy } from '../../policies/registry.js';
import type { Actions, Observation, Policy, PolicyView } from '../../policies/policy.js';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver } from '../../sim/replay-driver.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import { simulate } from '../../sim/run.js';
import { generateSteps, generateTrace } from '../../traces/generator.js';
import { blocksFor } from '../../traces/format.js';
import { tinyHardware, tinyModel } from '../helpers/tiny.js';

const dir = mkdtempSync(join(tmpdir(), 'kvtier-inv-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('policy invariants over generated traces', () => {
  const cases: [string, number, string][] = [];
  for (const seed of [1, 2, 3]) for (const preset of ['default', 'broad', 'no-sinks']) cases.push([`seed ${seed} ${preset}`, seed, preset]);

  it.each(cases)('HBM occupancy never exceeds the budget during decode, and the accounting audits clean (%s)', (_name, seed, preset) => {
    const trace = join(dir, `g-${seed}-${preset}.kvt`);
    generateTrace(trace, { preset: preset as never, prompt_tokens: 700 + 97 * seed, steps: 40, seed, layers: 32 });
    for (const policy of ['h2o', 'streaming-llm', 'lru-offload']) {
      for (const budget of ['5%', '23%', '61%']) {
        const r = simulate({ trace, policy, hardware: 'h100-pcie5', hbm_budget: budget, trace_steps: 0 });
        for (const s of r.steps) expect(s['occ.hbm']).toBeLessThanOrEqual(r.summary.hbm_budget_bytes);
        expect(r.summary.refused_actions.alloc ?? 0).toBe(0);
      }
    }
  });

  it('H2O and StreamingLLM never evict the sink block, even when the trace gives it no attention at all', () => {
    registerBuiltinPolicies();
    // adversarial: no sink mass, and block 0 never listed among the top-k
    for (const name of ['h2o', 'streaming-llm']) {
      for (const seed of [4, 5]) {
        const params = { preset: 'no-sinks' as const, layers: 2, prompt_tokens: 300, steps: 64, seed, encoding: 'dense' as const, block_size: 4 };
        const steps = [...generateSteps(params)].map((s) => ({
          ...s,
          layers: s.layers.map((l) => {
            const mass = Float32Array.from(l.mass);
            const zero = mass[0];
            mass[0] = 0;
            mass[mass.length - 1] += zero;
            return { ...l, mass };
          }),
        }));
        const maxBlocks = blocksFor(300 + 64, 4);
        const budgetBlocks = 7;
        const cache = new KVCache(tinyModel, 4, 2, maxBlocks, [
          { name: 'hbm', capacityBytes: 2 * 64 * budgetBlocks },
          { name: 'dram', capacityBytes: 1e9 },
          { name: 'nvme', capacityBytes: 1e9 },
        ]);
        const def = getPolicy(name);
        const policy = def.create(Object.fromEntries(def.options.map((o) => [o.name, o.default])), {
          layers: 2, maxBlocks, blockSize: 4, budgetBlocks, tiers: cache.tierNames, header: { kv_groups: 1 },
        } as never);
        // a spy that checks, before each decision, that the sink block is still there
        const spy: Policy = {
          name: policy.name,
          decide: (v: PolicyView, a: Actions) => {
            if (v.step >= 0) for (const l of [0, 1]) expect(cache.tierOf(l, 0)).toBe(0);
            policy.decide(v, a);
          },
          observe: (o: Observation) => policy.observe(o),
        };
        const header = { format: 'kvtier-attention-trace', version: 1, model: 'tiny', layers: 2, block_size: 4, prompt_tokens: 300, steps: 64, kv_groups: 1, encoding: 'dense', provenance: {} } as const;
        new ReplayDriver(header, cache, spy, new SimExecutor(tinyHardware(), tinyModel), budgetBlocks).run(steps, () => undefined);
        for (const l of [0, 1]) {
          expect(cache.tierOf(l, 0)).toBe(0);
          expect(cache.live(l)).toBeLessThanOrEqual(budgetBlocks);
        }
        cache.audit();
      }
    }
  });
});
