/**
 * The contract every registered policy keeps, over generated traces (1 and 2 KV groups) at several
 * budgets: HBM never holds more than the budget after a step (recounted block by block), the run is
 * deterministic, and every refusal (an action the accounting turned down, a new block that found HBM
 * full) shows in the driver's counters, as every action taken does.
 */
import { describe, expect, it } from 'vitest';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { listPolicies } from '../../policies/registry.js';
import type { PolicyDefinition } from '../../policies/policy.js';
import type { KVCache } from '../../sim/kv-cache.js';
import { generatedHeader, generateSteps } from '../../traces/generator.js';
import type { TraceStep } from '../../traces/format.js';
import { replayPolicy } from './harness.js';

registerBuiltinPolicies();
const policies = listPolicies();

// 3 layers, 16-token blocks, 100-token prompt (7 blocks) + 36 steps -> 136 tokens (9 blocks)
const traces = [1, 2].map((kv_groups) => {
  const input = { preset: 'default' as const, layers: 3, kv_groups, block_size: 16, prompt_tokens: 100, steps: 36, seed: 11 + kv_groups, encoding: 'dense' as const };
  return { kv_groups, header: generatedHeader(input), steps: [...generateSteps(input)] as TraceStep[] };
});
// HBM budgets in blocks per layer: below the sinks + window, half the context, more than the context;
// and a DRAM of 2 blocks per layer, which turns down most offloading
const CONFIGS: { budget: number; dramBlocks?: number }[] = [{ budget: 2 }, { budget: 5 }, { budget: 12 }, { budget: 3, dramBlocks: 2 }];

/** HBM bytes recounted from every block's tier and precision. */
function hbmBytes(c: KVCache): number {
  let bytes = 0;
  for (let l = 0; l < c.layers; l++) for (let b = 0; b < c.created[l]; b++) if (c.tierOf(l, b) === 0) bytes += c.bytesOf(c.bitsOf(l, b));
  return bytes;
}

function run(def: PolicyDefinition<any>, t: (typeof traces)[number], budget: number, dramBlocks?: number) {
  const seen = new Int32Array(t.header.layers);
  const spills = { prefill: 0, decode: 0 };
  const hbm: number[] = [];
  /** new blocks placed below HBM since the last look (nothing acts on a block between its creation and the next decision) */
  const countSpills = (cache: KVCache, phase: 'prefill' | 'decode') => {
    for (let l = 0; l < cache.layers; l++) {
      for (let b = seen[l]; b < cache.created[l]; b++) if (cache.tierOf(l, b) !== 0) spills[phase]++;
      seen[l] = cache.created[l];
    }
  };
  const r = replayPolicy(def, budget, {
    fullHeader: t.header,
    trace: t.steps,
    dramBlocks,
    beforeDecide: (v, cache) => countSpills(cache, v.step < 0 ? 'prefill' : 'decode'),
    onStep: (_r, cache) => {
      const bytes = hbmBytes(cache);
      expect(Math.abs(bytes - cache.used[0])).toBeLessThan(1e-6);
      hbm.push(bytes);
    },
  });
  countSpills(r.cache, 'decode');
  return { ...r, spills, hbm };
}

/** A run's observable outcome, for comparing two runs. */
function outcome(r: ReturnType<typeof run>) {
  return {
    timing: r.results.map((s) => s.timing),
    recall: r.results.map((s) => [...s.recall]),
    log: r.log,
    counters: r.driver.counters,
    tiers: Array.from({ length: r.header.layers }, (_, l) => r.tiers(l)),
    bits: Array.from({ length: r.header.layers }, (_, l) => r.bits(l)),
  };
}

describe('policy contract (every registered policy)', () => {
  it('the registry holds the built-in policies', () => {
    expect(policies.length).toBeGreaterThanOrEqual(20);
    expect(policies.map((p) => p.name)).toContain('oracle');
  });

  describe.each(policies.map((p) => [p.name, p] as const))('%s', (_name, def) => {
    it.each(traces.map((t) => [t.kv_groups, t] as const))('%i KV group(s): budget held after every step, refusals counted, deterministic', (_g, t) => {
      for (const { budget, dramBlocks } of CONFIGS) {
        const a = run(def, t, budget, dramBlocks);
        const cap = a.cache.capacity[0];
        // the budget: t.header.layers x budget FP16 blocks, never exceeded after any step
        expect(cap).toBe(t.header.layers * budget * a.cache.bytesOf(16));
        expect(a.hbm.length).toBe(t.header.steps);
        for (const bytes of a.hbm) expect(bytes).toBeLessThanOrEqual(cap);

        // every action the policy asked for, as the driver answered it, against the driver's counters
        const c = a.driver.counters;
        for (const [phase, prefix] of [[(s: number) => s < 0, 'prefill_'], [(s: number) => s >= 0, '']] as const) {
          const asked = a.log.filter((x) => phase(x.step));
          const kindOf = (what: string) => (what.startsWith('demote:') ? 'demote' : what);
          for (const kind of ['evict', 'demote', 'promote', 'prefetch']) {
            const refused = asked.filter((x) => kindOf(x.what) === kind && x.ok === false).length;
            const taken = asked.filter((x) => kindOf(x.what) === kind && x.ok === true).length;
            expect(c.refused[prefix + kind] ?? 0, `${prefix}${kind} refused`).toBe(refused);
            // prefetchOffloaded counts one prefetch per tier it stages from
            if (kind === 'prefetch') expect(c.actions[prefix + kind] ?? 0).toBeGreaterThanOrEqual(taken);
            else expect(c.actions[prefix + kind] ?? 0, `${prefix}${kind} taken`).toBe(taken);
          }
        }
        // a new block that found HBM full went below it, counted as a refused allocation
        expect(c.refused.prefill_alloc ?? 0).toBe(a.spills.prefill);
        expect(c.refused.alloc ?? 0).toBe(a.spills.decode);
        // a refusal is never silent: each kind counted has an example message
        for (const kind of Object.keys(c.refused)) expect(c.refusalExamples[kind]).toMatch(/^step -?\d+: /);

        // the same inputs give the same run
        expect(outcome(run(def, t, budget, dramBlocks))).toEqual(outcome(a));
      }
    });
  });
});
