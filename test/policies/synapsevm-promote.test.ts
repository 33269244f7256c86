/**
 * SynapseVM's promotion back to FP16: a block below L1 whose observed mass reaches promote_ratio x the
 * layer's mean share is promoted to HBM at 16 bits at the layer's next decision, the coldest
 * unguarded L1 block making room. Hand-computed on one layer, and on a generated needle trace.
 */
import { describe, expect, it } from 'vitest';
import { synapseVm } from '../../policies/synapsevm.js';
import { generatedHeader, generateSteps } from '../../traces/generator.js';
import { needleBlock } from '../../traces/generator-params.js';
import { replayPolicy } from './harness.js';

describe('synapsevm promotion back to 16 bits', () => {
  it('promotes a demoted block the step after it turns hot, demoting the coldest unguarded L1 block', () => {
    // prompt 24 tokens = blocks 0..5, block 6 written at step 0; budget 4, window 2, anchor block 0.
    // promote_ratio 2 over 7 blocks: hot at mass >= 0.2857. Prefill demotes 2 of 1..4 (all 0.05:
    // the lowest ids, 1 and 2); step 0 makes room for block 6 with block 3 (tie with 4, lower id).
    // Step 1 observes block 2 at 0.5 (hot); step 2 promotes it at 16 bits and demotes block 4, the
    // only L1 block outside the anchor and the window.
    const s0 = [0.5, 0.05, 0.05, 0.05, 0.05, 0.1, 0.2];
    const s1 = [0.3, 0.02, 0.5, 0.02, 0.02, 0.04, 0.1];
    const r = replayPolicy(synapseVm, 4, { prompt: 24, steps: 3, layers: 1, massOf: (s) => (s === 0 ? s0 : s1), options: { promote_ratio: 2 } });
    expect(r.acts('demote:dram:4', -1)).toEqual(['0:1', '0:2']);
    expect(r.acts('demote:dram:4', 0)).toEqual(['0:3']);
    expect(r.acts('promote', 0)).toEqual([]);
    expect(r.acts('promote', 1)).toEqual([]);
    expect(r.acts('demote:dram:4', 2)).toEqual(['0:4']);
    expect(r.acts('promote', 2)).toEqual(['0:2']);
    expect(r.log.find((a) => a.what === 'promote')!.args).toEqual([0, 2, 16]);
    expect(r.tiers(0)).toEqual([0, 1, 0, 1, 1, 0, 0]);
    expect(r.bits(0)).toEqual([16, 4, 16, 4, 4, 16, 16]);
    expect(r.cache.countIn(0, 0)).toBe(4);
    // below the threshold nothing comes back: at promote_ratio 4 (0.571) block 2's 0.5 is not hot
    const cold = replayPolicy(synapseVm, 4, { prompt: 24, steps: 3, layers: 1, massOf: (s) => (s === 0 ? s0 : s1), options: { promote_ratio: 4 } });
    expect(cold.log.filter((a) => a.what === 'promote')).toEqual([]);
    expect(cold.bits(0)[2]).toBe(4);
  });

  it('brings a generated needle back to 16 bits in HBM the step after it turns hot, and keeps it there while it is', () => {
    // 4 layers, 64-token prompt in 4-token blocks (16 blocks), 24 steps; the needle at half depth is
    // ignored until step 10, then takes 0.6 of layers 2 and 3's mass for 8 steps
    const from = 10;
    const input = { layers: 4, block_size: 4, prompt_tokens: 64, steps: 24, seed: 7, encoding: 'dense' as const, needle: { depth: 0.5, from_step: from, steps: 8, mass: 0.6, layers: [2, 3] } };
    const header = generatedHeader(input);
    const trace = [...generateSteps(input)];
    const nb = needleBlock(input.needle, input);
    const seen: { step: number; tier: number; bits: number }[][] = [[], [], [], []];
    const r = replayPolicy(synapseVm, 4, {
      fullHeader: header,
      trace,
      onStep: (res, cache) => {
        for (let l = 0; l < 4; l++) seen[l].push({ step: res.step, tier: cache.tierOf(l, nb), bits: cache.bitsOf(l, nb) });
      },
    });
    for (const l of [2, 3]) {
      // quantized below L1 while ignored (so the promotion had something to undo)
      for (const x of seen[l].filter((x) => x.step <= from)) expect(x.tier > 0 && x.bits < 16, `layer ${l} step ${x.step}`).toBe(true);
      // hot from step `from`: promoted at the next step's decision, FP16 in HBM while the needle is active
      for (const x of seen[l].filter((x) => x.step > from && x.step < from + 8)) expect([x.tier, x.bits], `layer ${l} step ${x.step}`).toEqual([0, 16]);
    }
    expect(r.acts('promote', from + 1)).toEqual(expect.arrayContaining([`2:${nb}`, `3:${nb}`]));
    // the layers that never retrieve it leave it below L1
    for (const l of [0, 1]) expect(seen[l].every((x) => x.tier > 0)).toBe(true);
  });
});
