/**
 * DPNC's training-sample rate (option train_rate): which samples the tree learns is a hash of seed,
 * layer, step and block; rate 1 learns every one (the runs of the policy before the option, digests
 * pinned); a rate learns its share of the stream, positives and negatives alike.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dpnc, trainingSampleKept } from '../../policies/dpnc.js';
import { DPNC_FEATURES } from '../../policies/dpnc-features.js';
import type { Policy, PolicyDefinition } from '../../policies/policy.js';
import { registerPolicy, resolveOptions } from '../../policies/registry.js';
import { simulate, type RunResult } from '../../sim/run.js';
import { generateTrace } from '../../traces/generator.js';

const F = DPNC_FEATURES.length;

/** one observation's learned samples: its layer and step, each sample's bins and label as one string */
interface Learned {
  at: string;
  samples: string[];
}

type Inspectable = Policy & { predictor: { learnBinsMany(bins: Uint8Array, count: number, labels: Uint8Array): void } };

/** dpnc under `name`, logging the samples its tree learns into `log` */
function logging(name: string, log: Learned[]): PolicyDefinition<any> {
  return {
    ...dpnc,
    name,
    create(o, setup) {
      const policy = dpnc.create(o, setup) as Inspectable;
      const tree = policy.predictor;
      const learn = tree.learnBinsMany.bind(tree);
      const observe = policy.observe!.bind(policy);
      let at = '';
      policy.observe = (obs) => {
        at = `${obs.layer}/${obs.step}`;
        observe(obs);
      };
      tree.learnBinsMany = (bins, count, labels) => {
        const samples = Array.from({ length: count }, (_, j) => `${Array.from(bins.subarray(j * F, (j + 1) * F)).join(',')}:${labels[j]}`);
        log.push({ at, samples });
        learn(bins, count, labels);
      };
      return policy;
    },
  };
}

const digest = (r: RunResult) => createHash('sha256').update(JSON.stringify(r.summary)).update(JSON.stringify(r.steps)).digest('hex').slice(0, 12);

describe('dpnc train_rate', () => {
  const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-dpnc-rate-'));
  const model = join(dir, 'four-layers.json');
  const spec = JSON.parse(fs.readFileSync(new URL('../../sim/models/presets/llama-3-8b.json', import.meta.url), 'utf8'));
  fs.writeFileSync(model, JSON.stringify({ ...spec, name: 'four-layers', layers: 4 }));
  const trace = join(dir, 't.kvt');
  generateTrace(trace, { model: 'four-layers', layers: 4, prompt_tokens: 1024, steps: 120, encoding: 'topk', topk: 16, seed: 3 }, { overwrite: true });
  const run = (options: Record<string, unknown>, budget = '20%', policy = 'dpnc') => simulate({ trace, model, policy, hardware: 'h100-pcie5', hbm_budget: budget, trace_steps: 0, policy_options: options });
  let seq = 0;
  /** the samples learned in a run, per observation */
  const learned = (options: Record<string, unknown>, budget = '20%'): Learned[] => {
    const log: Learned[] = [];
    const name = `dpnc-rate-log-${seq++}`;
    registerPolicy(logging(name, log), { override: true });
    run(options, budget, name);
    return log;
  };

  it('rate 1 learns every sample: the same runs as the policy before the option (digests of that commit)', () => {
    expect(digest(run({ train_rate: 1 }, '10%'))).toBe('53952f081f83');
    expect(digest(run({ train_rate: 1 }, '30%'))).toBe('ff560dc8f59f');
    expect(digest(run({ train_rate: 1, explore: 2, recent_steps: 20, hbm_age_steps: 3 }, '20%'))).toBe('06fc4b871ff9');
  });

  it('the same seed gives the same run and samples; another seed other samples', () => {
    const a = learned({ train_rate: 0.3, explore: 0 });
    const b = learned({ train_rate: 0.3, explore: 0 });
    expect(b).toEqual(a);
    expect(digest(run({ train_rate: 0.3 }))).toBe(digest(run({ train_rate: 0.3 })));
    const c = learned({ train_rate: 0.3, explore: 0, seed: 2 });
    expect(c.map((x) => x.samples.length)).not.toEqual(a.map((x) => x.samples.length));
  });

  // predict_threshold 1: the tree never answers "needed", so no decision reads it and every rate is
  // offered the same stream (rate 1's samples)
  it('a rate learns its share of the offered samples (binomial bound), a subset of them, positives in the same share', () => {
    const all = learned({ train_rate: 1, predict_threshold: 1, explore: 0 });
    const offered = new Map(all.map((x) => [x.at, x.samples]));
    const N = all.reduce((s, x) => s + x.samples.length, 0);
    const P = all.reduce((s, x) => s + x.samples.filter((y) => y.endsWith(':1')).length, 0);
    expect(N).toBeGreaterThan(5000);
    expect(P).toBeGreaterThan(300);
    for (const rate of [0.5, 0.1]) {
      const some = learned({ train_rate: rate, predict_threshold: 1, explore: 0 });
      let n = 0;
      let pos = 0;
      for (const x of some) {
        // every sample learned was offered at that observation (as a multiset)
        const left = [...(offered.get(x.at) ?? [])];
        for (const y of x.samples) {
          const k = left.indexOf(y);
          expect(k).toBeGreaterThanOrEqual(0);
          left.splice(k, 1);
        }
        n += x.samples.length;
        pos += x.samples.filter((y) => y.endsWith(':1')).length;
      }
      // within 4 standard deviations of the binomial's mean
      expect(Math.abs(n - rate * N)).toBeLessThanOrEqual(4 * Math.sqrt(N * rate * (1 - rate)));
      expect(Math.abs(pos - rate * P)).toBeLessThanOrEqual(4 * Math.sqrt(P * rate * (1 - rate)));
    }
  });

  it('the draw: deterministic, every sample at rate 1, the rate share of (layer, step, block) keys', () => {
    for (const rate of [0.5, 0.05]) {
      let kept = 0;
      let n = 0;
      for (let l = 0; l < 4; l++) {
        for (let s = 0; s < 250; s++) {
          for (let b = 0; b < 100; b++) {
            n++;
            if (trainingSampleKept(7, l, s, b, rate)) kept++;
          }
        }
      }
      expect(Math.abs(kept - rate * n)).toBeLessThanOrEqual(4 * Math.sqrt(n * rate * (1 - rate)));
    }
    expect(trainingSampleKept(7, 3, 11, 5, 0.5)).toBe(trainingSampleKept(7, 3, 11, 5, 0.5));
    for (let b = 0; b < 100; b++) expect(trainingSampleKept(1, 0, b, b, 1)).toBe(true);
    // another seed, another draw: the two sets of kept keys differ
    const keys = (seed: number) => Array.from({ length: 200 }, (_, b) => trainingSampleKept(seed, 1, 2, b, 0.5));
    expect(keys(1)).not.toEqual(keys(2));
  });

  it('refuses rates outside (0, 1], naming the option', () => {
    expect(() => resolveOptions(dpnc, { train_rate: 1.5 })).toThrow('policy dpnc: option train_rate must be <= 1 (got 1.5)');
    expect(() => resolveOptions(dpnc, { train_rate: -0.1 })).toThrow('policy dpnc: option train_rate must be >= 0 (got -0.1)');
    expect(() => resolveOptions(dpnc, { train_rate: 'half' })).toThrow('policy dpnc: option train_rate must be a number (got "half")');
    expect(() => run({ train_rate: 0 })).toThrow('policy dpnc: option train_rate must be in (0, 1] (got 0)');
  });
});
