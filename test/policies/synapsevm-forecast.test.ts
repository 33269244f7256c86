/**
 * SynapseVM's forecast-driven staging on a hand-made 3-layer trace (4-token blocks of 64 B at FP16,
 * 20 B at INT4): which blocks are forecast and staged, the copy-time cap, and predictive mode.
 *
 * Prompt 32 tokens = blocks 0..7, block 8 written at step 0, no new block at step 1. Budget 3 blocks:
 * block 0 pinned (anchor), window round(3 x 0.5) = 2 blocks. Prefill (deciding on step 0's row of 9
 * blocks: window 7, 8) demotes 5 of blocks 1..6 to DRAM at INT4, keeping the highest score (ties go
 * to the lower id first); at step 0 that one leaves for block 8: layer 0 block 4, layer 1 block 2,
 * layer 2 block 5. From then on blocks 1..6 are below L1 and blocks 0, 7, 8 are in HBM. heavy_ratio 0.9 over 9 blocks:
 * theta = 0.1. sim_rate 1: each similarity is the latest overlap. Promotion back is off.
 */
import { describe, expect, it } from 'vitest';
import { synapseVm, type SynapsePolicy } from '../../policies/synapsevm.js';
import type { Policy } from '../../policies/policy.js';
import { replayPolicy } from './harness.js';

const MASS: number[][][] = [
  // step 0: layers 0, 1, 2
  [
    [0.3, 0.2, 0, 0, 0.2, 0, 0, 0.15, 0.15],
    [0.3, 0.2, 0.2, 0, 0, 0, 0, 0.15, 0.15],
    [0.3, 0, 0.2, 0, 0, 0.2, 0, 0.15, 0.15],
  ],
  // step 1
  [
    [0.3, 0, 0.2, 0, 0.2, 0, 0, 0.15, 0.15],
    [0.15, 0, 0.2, 0.5, 0, 0, 0, 0, 0.15],
    [0.3, 0.1, 0.2, 0.05, 0.05, 0.1, 0.05, 0.05, 0.1],
  ],
];
const BASE = { promote_blocks: 0, heavy_ratio: 0.9, sim_rate: 1, probe_blocks: 0 };

function run(options: Record<string, unknown>) {
  let inner: SynapsePolicy | undefined;
  const def = { ...synapseVm, create: (o: never, s: never): Policy => (inner = synapseVm.create(o, s) as SynapsePolicy) };
  const r = replayPolicy(def, 3, { prompt: 32, steps: 2, layers: 3, massOf: (s, l) => MASS[s][l], options: { ...BASE, ...options } });
  return { ...r, policy: inner! };
}

describe('synapsevm forecast (3 layers, hand-computed)', () => {
  it('lossless: forecasts exactly the hand-computed blocks, highest score first, and attends everything', () => {
    const r = run({});
    for (const l of [0, 1, 2]) expect(r.tiers(l)).toEqual([0, 1, 1, 1, 1, 1, 1, 0, 0]);
    // step 0: cross weights start at 0, so f = self = the prefill stand-in (step 0's attention):
    // the heavy blocks below L1 are layer 0 {1, 4}, layer 1 {1, 2}, layer 2 {2, 5}
    expect(r.acts('prefetch', 0, 0)).toEqual(['0:1', '0:4']);
    expect(r.acts('prefetch', 0, 1)).toEqual(['1:1', '1:2']);
    expect(r.acts('prefetch', 0, 2)).toEqual(['2:2', '2:5']);
    // learned at step 0 over blocks 1..6: self matched exactly (overlap 1) in every layer; cross:
    // layer 0 reads layer 2 {2, 5} against {1, 4}: 0; layer 1 reads layer 0 {1, 4} against {1, 2}:
    // 1/3; layer 2 reads layer 1 {1, 2} against {2, 5}: 1/3. alpha = 0, 0.25, 0.25.
    // step 1, f = alpha * (previous layer at step 1) + (1 - alpha) * (own step 0):
    // layer 0: {1: 0.2, 4: 0.2}; layer 1: 1: 0.75*0.2 = 0.15, 2: 0.25*0.2 + 0.75*0.2 = 0.2,
    // 4: 0.25*0.2 = 0.05 (< 0.1); layer 2: 2: 0.2, 5: 0.75*0.2 = 0.15, 3: 0.25*0.5 = 0.125
    expect(r.policy.forecastOf(0)).toEqual([1, 4]);
    expect(r.policy.forecastOf(1)).toEqual([2, 1]);
    expect(r.policy.forecastOf(2)).toEqual([2, 5, 3]);
    expect(r.acts('prefetch', 1, 2)).toEqual(['2:2', '2:3', '2:5']);
    expect(r.acts('skip', 1)).toEqual([]);
    for (const x of r.results) for (const rec of x.recall) expect(rec).toBeCloseTo(1, 6);
    // precision/recall over blocks 1..6 (truth: mass >= 0.1). Step 0: every forecast block heavy,
    // every heavy one forecast: 6/6, 6/6. Step 1: layer 0 {1,4} vs heavy {2,4}: 1 hit; layer 1
    // {1,2} vs {2,3}: 1; layer 2 {2,3,5} vs {1,2,5}: 2 -> precision 4/7, recall 4/7
    const rep = r.policy.report!();
    expect(rep.forecast_precision).toBeCloseTo(10 / 13, 12);
    expect(rep.forecast_recall).toBeCloseTo(10 / 13, 12);
    expect(rep.forecast_precision_step_min).toBeCloseTo(4 / 7, 12);
    expect(rep.forecast_precision_step_median).toBeCloseTo((1 + 4 / 7) / 2, 12);
    expect(rep.forecast_recall_step_min).toBeCloseTo(4 / 7, 12);
    expect(rep.forecast_recall_step_median).toBeCloseTo((1 + 4 / 7) / 2, 12);
    expect(rep.forecast_steps).toBe(2);
    // lossless: what is not staged is fetched: step 0 4 + 4 + 4 blocks, step 1 4 + 4 + 3, at INT4 (20 B)
    expect(rep['fetched_on_demand_blocks.dram']).toBe(23);
    expect(rep['fetched_on_demand_bytes.dram']).toBe(23 * 20);
  });

  it('caps the staged bytes at link bandwidth x layer time, after the layer\'s own demotions', () => {
    // 1 B/us, no per-copy alpha, 50 us per layer: 50 B, i.e. two INT4 blocks (20 B each)
    const r = run({ link_GBps: 0.001, copy_alpha_us: 0, layer_us: 50 });
    // step 0: each layer's demotion (20 B at INT4) leaves 30 B: one block, the first of the forecast
    expect(r.acts('demote:dram:4', 0)).toEqual(['0:4', '1:2', '2:5']);
    expect(r.acts('prefetch', 0)).toEqual(['0:1', '1:1', '2:2']);
    // step 1: no moves; layer 2's forecast [2, 5, 3] is 60 B: blocks 2 and 5 fit, 3 does not
    expect(r.acts('prefetch', 1, 2)).toEqual(['2:2', '2:5']);
    expect(r.policy.forecastOf(2)).toEqual([2, 5]);
    for (const l of [0, 1, 2]) expect(r.log.filter((a) => a.step === 1 && a.layer === l && a.what === 'prefetch').length * 20).toBeLessThanOrEqual(50);
  });

  it('predictive: skips exactly the blocks below L1 it did not stage; recall is the attended share', () => {
    const r = run({ mode: 'predictive' });
    // step 0 as in lossless (alpha 0): staged layer 0 {1, 4}, layer 1 {1, 2}, layer 2 {2, 5}; the rest of 1..6 skipped
    expect(r.acts('skip', 0, 0)).toEqual(['0:2', '0:3', '0:5', '0:6']);
    expect(r.acts('skip', 0, 1)).toEqual(['1:3', '1:4', '1:5', '1:6']);
    expect(r.acts('skip', 0, 2)).toEqual(['2:1', '2:3', '2:4', '2:6']);
    // learned over the attended blocks below L1 only: layer 1 over {1, 2}: cross {1} vs heavy {1, 2}
    // = 1/2 -> alpha 1/3; layer 2 over {2, 5}: cross (layer 1 attended 2, not 5) {2} vs {2, 5} = 1/2
    // -> alpha 1/3; layer 0: 0. Step 1 (cross reads attended blocks only; the others count 0):
    // layer 0: {1, 4}; layer 1: 1: 2/3*0.2, 2: 2/3*0.2 (layer 0 did not attend 2), 4: 1/3*0.2 < 0.1;
    // layer 2: 2: 1/3*0.2 + 2/3*0.2, 5: 2/3*0.2, 3: 0 (layer 1 did not attend 3)
    expect(r.policy.forecastOf(0)).toEqual([1, 4]);
    expect(r.policy.forecastOf(1)).toEqual([1, 2]);
    expect(r.policy.forecastOf(2)).toEqual([2, 5]);
    expect(r.acts('skip', 1, 0)).toEqual(['0:2', '0:3', '0:5', '0:6']);
    expect(r.acts('skip', 1, 1)).toEqual(['1:3', '1:4', '1:5', '1:6']);
    expect(r.acts('skip', 1, 2)).toEqual(['2:1', '2:3', '2:4', '2:6']);
    // recall = 1 - skipped mass: step 1 layer 0: 1 - 0.2; layer 1: 1 - 0.5; layer 2: 1 - (0.1 + 0.05 + 0.05 + 0.05)
    expect(r.results[1].recall[0]).toBeCloseTo(0.8, 6);
    expect(r.results[1].recall[1]).toBeCloseTo(0.5, 6);
    expect(r.results[1].recall[2]).toBeCloseTo(0.75, 6);
    // step 0: layer 0 skips 0 mass, layer 1 skips 0, layer 2 skips 0
    expect(Array.from(r.results[0].recall)).toEqual([1, 1, 1].map((x) => expect.closeTo(x, 6)));
    // skipped blocks are not observed: recall of the forecast is not reported, precision is
    const rep = r.policy.report!();
    expect(rep.forecast_recall).toBeUndefined();
    expect(rep.forecast_unobserved_blocks).toBe(24);
    expect(rep.skipped_blocks).toBe(24);
    expect(rep.predictive).toBe(1);
  });

  it('predictive: probes the blocks unattended the longest with the copy time left', () => {
    // 1 B/us, no alpha, 60 us. Step 0: demotion 20 B + forecast 40 B: nothing left to probe.
    // Step 1, layer 0: forecast [1, 4] (40 B), 20 B left: one probe of the two asked, among 2, 3, 5, 6
    // (last attended at prefill, step -1) the lowest id: 2. Layer 1: forecast [1, 2], probe 3, which
    // carries 0.5 of layer 1's mass. Layer 2: its cross predictor now sees block 3 (alpha 1/3: 0.5/3 =
    // 0.167 >= 0.1): forecast [2 (0.2), 3 (0.167), 5 (0.133)] = 60 B, nothing left to probe.
    const r = run({ mode: 'predictive', probe_blocks: 2, link_GBps: 0.001, copy_alpha_us: 0, layer_us: 60 });
    expect(r.acts('prefetch', 0)).toEqual(['0:1', '0:4', '1:1', '1:2', '2:2', '2:5']);
    expect(r.acts('prefetch', 1, 0)).toEqual(['0:1', '0:2', '0:4']);
    expect(r.acts('prefetch', 1, 1)).toEqual(['1:1', '1:2', '1:3']);
    expect(r.policy.forecastOf(2)).toEqual([2, 3, 5]);
    expect(r.acts('skip', 1, 2)).toEqual(['2:1', '2:4', '2:6']);
    expect(r.policy.report!().probe_blocks).toBe(2);
    // layer 1 attends all its mass at step 1 (the probe found the heavy block)
    expect(r.results[1].recall[1]).toBeCloseTo(1, 6);
  });
});
