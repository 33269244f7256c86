/**
 * Property: at equal HBM budget, the oracle's recall bounds every policy that attends at most
 * top_factor x budget blocks per layer (dropping or skipping policies), at every step and layer —
 * over generated traces with different seeds, shapes and budgets.
 */
import { describe, expect, it } from 'vitest';
import { dpnc } from '../../policies/dpnc.js';
import { fifo } from '../../policies/fifo.js';
import { h2o } from '../../policies/h2o.js';
import { infiniGen } from '../../policies/infinigen.js';
import { lfu } from '../../policies/lfu.js';
import { lru } from '../../policies/lru.js';
import { oracle } from '../../policies/oracle.js';
import type { PolicyDefinition } from '../../policies/policy.js';
import { pyramidKv } from '../../policies/pyramidkv.js';
import { quest } from '../../policies/quest.js';
import { snapKv } from '../../policies/snapkv.js';
import { streamingLlm } from '../../policies/streaming-llm.js';
import { generatedHeader, generateSteps } from '../../traces/generator.js';
import { replayPolicy } from './harness.js';

const dropping: PolicyDefinition<any>[] = [h2o, streamingLlm, snapKv, pyramidKv, quest, infiniGen, fifo, lru, lfu, dpnc];

const cases = [
  { seed: 1, layers: 4, prompt_tokens: 256, steps: 24, budget: 4 },
  { seed: 7, layers: 3, prompt_tokens: 320, steps: 20, budget: 7 },
  { seed: 42, layers: 4, prompt_tokens: 192, steps: 40, budget: 3, preset: 'needle' as const },
  { seed: 'x', layers: 2, prompt_tokens: 400, steps: 16, budget: 10, encoding: 'topk' as const, topk: 8 },
];

describe('oracle bounds recall at equal budget (generated traces)', () => {
  for (const c of cases) {
    it(`seed ${c.seed}, ${c.layers} layers, prompt ${c.prompt_tokens}, budget ${c.budget} blocks`, () => {
      const input = { model: 'tiny', layers: c.layers, prompt_tokens: c.prompt_tokens, steps: c.steps, seed: c.seed, hh_count: 6, window_tokens: 32, ...(c.preset ? { preset: c.preset } : {}), ...(c.encoding ? { encoding: c.encoding, topk: c.topk } : {}) };
      const header = generatedHeader(input);
      const trace = [...generateSteps(input)];
      const bound = replayPolicy(oracle, c.budget, { fullHeader: header, trace });
      for (const def of dropping) {
        const r = replayPolicy(def, c.budget, { fullHeader: header, trace });
        // Quest's first two layers are dense (they attend everything): the bound covers its sparse layers.
        // PyramidKV splits its blocks unevenly over layers: bounded in the step's mean over layers.
        const from = def === quest ? 2 : 0;
        for (let s = 0; s < c.steps; s++) {
          if (def === pyramidKv) {
            const mean = (x: Float64Array) => x.reduce((a, b) => a + b, 0) / x.length;
            if (mean(bound.results[s].recall) < mean(r.results[s].recall) - 1e-9) throw new Error(`pyramidkv: step ${s}: oracle mean recall below`);
            continue;
          }
          for (let l = from; l < c.layers; l++) {
            if (bound.results[s].recall[l] < r.results[s].recall[l] - 1e-9) {
              throw new Error(`${def.name}: step ${s} layer ${l}: oracle ${bound.results[s].recall[l]} < ${r.results[s].recall[l]}`);
            }
          }
        }
        const sum = (x: typeof r) => x.results.reduce((a, s) => a + s.recall.slice(from).reduce((p, q) => p + q, 0), 0);
        expect(sum(bound)).toBeGreaterThanOrEqual(sum(r) - 1e-9);
      }
    });
  }
});
