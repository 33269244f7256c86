/**
 * DPNC when the machine refuses some of its moves (a demotion or page-in answered false): it tries
 * each page at most once per backing tier and decision, and its results are pinned (these counts were
 * checked equal to valuing every page at every decision, as DPNC did before its decisions followed
 * the pages that changed).
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dpnc } from '../../policies/dpnc.js';
import type { Actions, PolicyDefinition, PolicyView } from '../../policies/policy.js';
import { registerPolicy } from '../../policies/registry.js';
import { simulate } from '../../sim/run.js';
import { generateTrace } from '../../traces/generator.js';

/** dpnc whose demotions and page-ins of some (layer, block, step) are refused, every try logged */
function refusing(name: string, tries: string[]): PolicyDefinition<any> {
  const refused = (l: number, b: number, step: number, what: number) => {
    let x = Math.imul(l + 7, 0x9e3779b1) ^ Math.imul(b + 13, 0x85ebca6b) ^ Math.imul(step + 101, 0xc2b2ae35) ^ Math.imul(what + 3, 0x27d4eb2f);
    x ^= x >>> 15;
    x = Math.imul(x, 0x2c1b3c6d);
    x ^= x >>> 12;
    return (x >>> 0) % 5 === 0;
  };
  return {
    ...dpnc,
    name,
    create(o, setup) {
      const p = dpnc.create(o, setup);
      return {
        ...p,
        name,
        decide(v: PolicyView, act: Actions) {
          const wrapped: Actions = {
            ...act,
            skip: (b) => act.skip(b),
            skipExcept: (keep, scope) => act.skipExcept(keep, scope),
            skipExceptListed: (blocks, count, scope) => act.skipExceptListed(blocks, count, scope),
            demote: (l, b, tier, bits) => {
              tries.push(`${v.step}/${v.layer} ${l}:${b} ${tier}`);
              return refused(l, b, v.step, tier.length) ? false : act.demote(l, b, tier, bits);
            },
            promote: (l, b, bits) => (refused(l, b, v.step, 99) ? false : act.promote(l, b, bits)),
          };
          p.decide(v, wrapped);
        },
      };
    },
  };
}

describe('dpnc with refused moves', () => {
  const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-dpnc-refused-'));
  const model = join(dir, 'four-layers.json');
  const spec = JSON.parse(fs.readFileSync(new URL('../../sim/models/presets/llama-3-8b.json', import.meta.url), 'utf8'));
  fs.writeFileSync(model, JSON.stringify({ ...spec, name: 'four-layers', layers: 4 }));
  const trace = join(dir, 't.kvt');
  generateTrace(trace, { model: 'four-layers', layers: 4, prompt_tokens: 1024, steps: 120, encoding: 'topk', topk: 16, seed: 3 }, { overwrite: true });

  // per case: predictor examples, needed, predicted, true positives; prefetches, used, by tree,
  // recent, explore; training samples, tree splits
  it.each([
    [{}, '10%', [29333, 4288, 3384, 520, 11, 10, 0, 9, 2, 3318, 1]],
    [{ dram_factor: 0.5, cxl_factor: 1, demote_max: 10, age_steps: 2, hbm_age_steps: 3, recent_steps: 20, explore: 2 }, '30%', [27069, 2427, 552, 47, 317, 46, 19, 264, 34, 5539, 1]],
  ])('options %j at %s: each page tried once per backing tier and decision; results pinned', (options, budget, counts) => {
    const tries: string[] = [];
    const name = `dpnc-refused-${JSON.stringify(options).length}`;
    registerPolicy(refusing(name, tries), { override: true });
    const r = simulate({ trace, model, policy: name, hardware: 'h100-pcie5', hbm_budget: budget, trace_steps: 0, policy_options: options });
    // (a page-in whose victim's demotion from HBM is refused may ask for that victim again)
    const down = tries.filter((t) => !t.endsWith(' dram'));
    expect(down.length).toBeGreaterThan(100);
    expect(new Set(down).size).toBe(down.length);
    const report = r.summary.policy_report as Record<string, number>;
    const keys = ['predictor_examples', 'predictor_needed', 'predictor_predicted', 'predictor_true_positives', 'prefetches', 'prefetch_used', 'prefetches_tree', 'prefetches_recent', 'prefetches_explore', 'training_samples', 'tree_splits'];
    expect(keys.map((k) => report[k])).toEqual(counts);
  });
});
