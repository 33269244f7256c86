/**
 * `trace stats` over KV groups: every per-layer statistic of a G-group trace is the mean over the
 * groups of that statistic computed on each group alone (row = layer * kv_groups + group).
 */
import { describe, expect, it } from 'vitest';
import { generateSteps } from '../../traces/generator.js';
import type { TraceStep } from '../../traces/format.js';
import { computeTraceStats, type LayerStats } from '../../traces/trace-stats.js';

const flat = (l: LayerStats) => [l.sinkMass, l.coverBlocks.p50, l.coverBlocks.p90, l.coverBlocks.p99, l.sparsity, l.persistence!, l.entropyNats, l.recentMass.last1, l.recentMass.last4, l.recentMass.last16];

describe('trace stats over KV groups', () => {
  for (const encoding of ['dense', 'topk'] as const) {
    it(`${encoding}: each layer's statistics are the mean of its groups' (3 layers x 3 groups, generated)`, () => {
      const G = 3;
      const steps = [...generateSteps({ layers: 3, kv_groups: G, prompt_tokens: 200, steps: 12, block_size: 8, encoding, topk: 6, seed: 9, model: 'llama-3-8b' })];
      const all = computeTraceStats(steps, { kvGroups: G, blockSize: 8, topBlocks: 3 });
      for (let l = 0; l < 3; l++) {
        const per = Array.from({ length: G }, (_, g) => {
          const one: TraceStep[] = steps.map((s) => ({ ...s, layers: [s.layers[l * G + g]!] }));
          return flat(computeTraceStats(one, { kvGroups: 1, blockSize: 8, topBlocks: 3 }).layers[0]!);
        });
        const mean = per[0]!.map((_, i) => per.reduce((s, p) => s + p[i]!, 0) / G);
        flat(all.layers[l]!).forEach((v, i) => expect(v).toBeCloseTo(mean[i]!, 12));
        // the groups differ (else the check says nothing)
        expect(per[0]).not.toEqual(per[1]);
      }
    });
  }
});
