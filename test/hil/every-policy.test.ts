// Every registered policy runs on real bytes: the HIL executor executes its plan with verification on
// (every live block's bytes checked where the plan says it ended), on the host backend, and on the
// cuda backend where a GPU is, and moves what the simulator decides: the same actions and the same
// bytes on every link direction. The list is the registry's, so a new policy is covered by registering it.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { BackendKind } from '../../hil/addon-types.js';
import { hilRun } from '../../hil/executor/hil-run.js';
import { simulate } from '../../sim/run.js';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { listPolicies } from '../../policies/registry.js';
import { backendAvailability } from './availability.js';
import { makeHilFixture } from './hil-fixtures.js';

registerBuiltinPolicies();
const policies = listPolicies().map((d) => d.name);
const host = backendAvailability('host');
const cuda = backendAvailability('cuda');
// 2 layers, 256 prompt tokens (16 blocks per layer), 4 decode steps: enough for every policy to move,
// quantize, evict and stage blocks at these budgets
const fx = makeHilFixture(256, 4);
afterAll(() => rmSync(fx.dir, { recursive: true, force: true }));

async function runAll(backend: BackendKind, budget: string): Promise<void> {
  const failures: string[] = [];
  for (const policy of policies) {
    try {
      const config = { trace: fx.trace, policy, policy_options: {}, model: fx.model, hardware: 'h100-pcie5', hbm_budget: budget, group_size: 64 };
      const x = await hilRun(config, { backend, nvmeDir: fx.dir, verify: true, seed: 5 });
      const sim = simulate(config).summary;
      expect(x.result.steps.length).toBe(4);
      expect(x.hil.verify!.checked).toBeGreaterThan(0);
      if (x.hil.verify!.mismatches !== 0) failures.push(`${policy}: ${x.hil.verify!.mismatches} of ${x.hil.verify!.checked} blocks differ (first: ${x.hil.verify!.firstMismatch})`);
      if (JSON.stringify(x.result.summary.actions) !== JSON.stringify(sim.actions)) failures.push(`${policy}: actions ${JSON.stringify(x.result.summary.actions)}, simulated ${JSON.stringify(sim.actions)}`);
      for (const [k, v] of Object.entries(sim.bytes)) if (x.result.summary.bytes[k] !== v) failures.push(`${policy}: ${k} ${x.result.summary.bytes[k]} B, simulated ${v} B`);
    } catch (e) {
      failures.push(`${policy}: ${(e as Error).message}`);
    }
  }
  expect(failures).toEqual([]);
}

describe('the registry is covered', () => {
  it('lists the built-in policies', () => {
    expect(policies.length).toBeGreaterThanOrEqual(21);
    for (const p of ['full', 'lru-offload', 'synapsevm', 'smartkv', 'dpnc', 'slep', 'ntransformer', 'kivi', 'quest', 'infinigen']) expect(policies).toContain(p);
  });
});

for (const [kind, a] of [['host', host], ['cuda', cuda]] as const) {
  describe.skipIf(!a.available)(`every registered policy under hil run --verify, ${kind} backend${a.available ? '' : ` (skipped: ${a.reason})`}`, () => {
    for (const budget of ['10%', '25%']) {
      it(`at ${budget} of the KV: every block holds the bytes it must; the simulator's actions and link bytes`, async () => {
        await runAll(kind, budget);
      }, 120_000);
    }
  });
}
