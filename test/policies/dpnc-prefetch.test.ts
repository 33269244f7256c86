/**
 * DPNC's prefetcher learns a predictable need and prefetches it; its report is recounted here from
 * the actions it took and the trace's masses, page by page.
 */
import { describe, expect, it } from 'vitest';
import { dpnc } from '../../policies/dpnc.js';
import { DPNC_FEATURES } from '../../policies/dpnc-features.js';
import type { Policy, PolicyDefinition } from '../../policies/policy.js';
import { replayPolicy } from './harness.js';

type Inspectable = Policy & {
  predictor: { structure(): { feature: number; threshold: number; depth: number }[]; learnBinsMany(bins: Uint8Array, count: number, labels: Uint8Array): void };
};

/** one observation's training samples as the tree learned them: its layer and step, each sample's bins and label */
interface Learned {
  layer: number;
  step: number;
  bins: number[][];
  labels: number[];
}

/** dpnc, keeping a handle on the policy it creates and on the samples its tree learns */
function capturing() {
  const box: { policy?: Inspectable; learned: Learned[] } = { learned: [] };
  const def: PolicyDefinition<any> = {
    ...dpnc,
    create: (o, s) => {
      const policy = dpnc.create(o, s) as Inspectable;
      const tree = policy.predictor;
      const learn = tree.learnBinsMany.bind(tree);
      const observe = policy.observe!.bind(policy);
      let at = { layer: -1, step: 0 };
      policy.observe = (obs) => {
        at = { layer: obs.layer, step: obs.step };
        observe(obs);
      };
      tree.learnBinsMany = (bins, count, labels) => {
        const F = DPNC_FEATURES.length;
        box.learned.push({ ...at, bins: Array.from({ length: count }, (_, j) => Array.from(bins.subarray(j * F, (j + 1) * F))), labels: Array.from(labels.subarray(0, count)) });
        learn(bins, count, labels);
      };
      return (box.policy = policy);
    },
  };
  return { def, box };
}

// Three layers, 128-token blocks: prompt 384 tokens = blocks 0..2, block 3 is created at step 0 and the
// context stays within 4 blocks. Budget 3 pages per layer. Page P = block 1. At active steps
// (s = 2 mod 3) layers 0 and 1 give P 0.4 and layer 2 gives it 0.3; at other steps layers 0 and 1
// give P 0.26 and layer 2 nothing. Needed: mass >= 1/4 (use_factor 1, 4 blocks): blocks 0 and 3
// everywhere, P always in layers 0 and 1, P in layer 2 at active steps only; block 2 never.
// Layer 2 is decided one layer ahead, while layer 1 computes: the last layer observed then is layer 0
// at the same step, whose mass on P tells an active step (near_layer 1.0) from another (0.69).
const STEPS = 96;
const L = 3;
const active = (s: number) => s % 3 === 2;
const massOf = (s: number, l: number): number[] =>
  l < 2 ? (active(s) ? [0.3, 0.4, 0, 0.3] : [0.3, 0.26, 0, 0.44]) : active(s) ? [0.3, 0.3, 0, 0.4] : [0.3, 0, 0, 0.7];
const needed = (t: number, l: number, b: number) => massOf(t, l)[b] >= 0.25;
const BLOCK_BYTES = 2 * 2 * 1 * 4 * 128; // K and V, FP16, 1 KV head of dim 4, 128 tokens

describe('dpnc prefetch: a page the layer before tells needed', () => {
  const { def, box } = capturing();
  // per (step decided for, layer decided): the pages offloaded when the decision began
  const offloaded = new Map<string, number[]>();
  const r = replayPolicy(def, 3, {
    prompt: 384,
    steps: STEPS,
    layers: L,
    header: (h) => ({ ...h, block_size: 128 }),
    massOf: (s, l) => massOf(s, l),
    beforeDecide: (v, cache) => {
      if (v.step < 0) return;
      // decide(l, s) takes layer l + 1's decision for step s (layer 0's for s + 1)
      const nl = (v.layer + 1) % L;
      const t = v.layer + 1 < L ? v.step : v.step + 1;
      if (t < STEPS) offloaded.set(`${t}:${nl}`, Array.from({ length: cache.created[nl] }, (_, b) => b).filter((b) => cache.tierOf(nl, b) > 0));
    },
    options: { recent_steps: 0, hbm_age_steps: 1, explore: 1, explore_max_tier: 'nvme', tree_grace: 10, tree_delta: 0.01, tree_tau: 0.5 },
  });
  const report = box.policy!.report!();

  it('learns it and prefetches P one layer ahead at every active step from step 23 on', () => {
    // before step 23 P comes in by exploration (steps 1, 6, 10, 15, 19: one exploration page-in
    // every fourth or fifth step) and is missed at steps 5, 8, 14, 17
    for (const s of [5, 8, 14, 17]) expect(r.results[s].recall[2]).toBeCloseTo(0.7, 6);
    for (let s = 23; s < STEPS; s++) {
      // the page-in of layer 2's P is asked for while layer 1 decides
      expect(r.acts('promote', s, 1).includes('2:1'), `step ${s}`).toBe(active(s));
      expect(r.results[s].recall[2], `step ${s}`).toBeCloseTo(1, 6);
    }
    expect(report.prefetches_tree).toBe(25);
    expect(report.prefetch_used_tree).toBe(25);
    expect(box.policy!.predictor.structure().length).toBeGreaterThan(0);
  });

  it('counts precision, recall, bytes and the predictor next to the majority class exactly', () => {
    let examples = 0;
    let need = 0;
    let pagedIn = 0;
    let used = 0;
    let neededIn = 0;
    for (const [key, pages] of offloaded) {
      const [t, l] = key.split(':').map(Number);
      // page-ins for (t, l): asked by the layer before (layer L - 1 at t - 1 for layer 0)
      const by = l > 0 ? { step: t, layer: l - 1 } : { step: t - 1, layer: L - 1 };
      const ins = r.log.filter((a) => a.what === 'promote' && a.ok && a.step === by.step && a.layer === by.layer && a.args[0] === l).map((a) => a.args[1]);
      examples += pages.length;
      need += pages.filter((b) => needed(t, l, b)).length;
      pagedIn += ins.length;
      used += ins.filter((b) => needed(t, l, b)).length;
      neededIn += ins.filter((b) => needed(t, l, b) && pages.includes(b)).length;
      for (const b of ins) expect(pages, `step ${t} layer ${l}: paged in ${b} was offloaded`).toContain(b);
    }
    expect(report.predictor_examples).toBe(examples);
    expect(report.predictor_needed).toBe(need);
    expect(report.predictor_majority_accuracy).toBe(Math.max(need, examples - need) / examples);
    expect(report.prefetches).toBe(pagedIn);
    expect(report.prefetch_used).toBe(used);
    expect(report.prefetch_precision).toBe(used / pagedIn);
    expect(report.prefetch_recall).toBe(neededIn / need);
    expect(report.prefetch_bytes).toBe(pagedIn * BLOCK_BYTES);
    expect(report.prefetch_bytes_wasted).toBe((pagedIn - used) * BLOCK_BYTES);
    expect(report.prefetches_tree + report.prefetches_explore + report.prefetches_recent + report.prefetches_important).toBe(pagedIn);
    // the numbers of this run: 285 offloaded pages asked about, 27 of them needed; the tree said
    // "needed" 25 times, all right, and was wrong on 2 pages (needed, not predicted)
    expect([examples, need, pagedIn, used]).toEqual([285, 27, 59, 25]);
    expect(report.predictor_predicted).toBe(25);
    expect(report.predictor_true_positives).toBe(25);
    expect(report.predictor_accuracy).toBe(283 / 285);
    expect(report.predictor_majority_accuracy).toBe(258 / 285);
    expect(report.predictor_accuracy).toBeGreaterThan(report.predictor_majority_accuracy);
  });

  it('learns block 0 with the bins it had when decided for: used at the step before, always used, its last mass, its place and layer', () => {
    // block 0 is needed at every step and layer (0.3 >= 1/4): recency 1 step (bin 1 of 16), frequency
    // 1 (bin 15), position 0, layer l of 3 (bins 0, 8, 15), resident (tier 0); its last mass is 0.3
    // over its row's largest attended mass, at most 0.7 (bins 6 to 15)
    const bin = (v: number) => Math.min(15, Math.floor(v * 16));
    const block0 = box.learned.filter((x) => x.step >= 2).flatMap((x) => x.bins.filter((f) => f[4] === 0).map((f) => ({ ...x, f })));
    expect(block0.length).toBeGreaterThan(200);
    for (const { layer, step, f } of block0) {
      expect([f[0], f[1], f[5], f[6]], `step ${step} layer ${layer}`).toEqual([1, 15, bin(layer / 2), 0]);
      expect(f[2], `step ${step} layer ${layer}`).toBeGreaterThanOrEqual(bin(0.3 / 0.7));
    }
    // (a row whose largest attended mass is not block 0's: its last mass below 1)
    expect(block0.some(({ f }) => f[2] < 15)).toBe(true);
    // every sample's label: used at its step
    const samples = box.learned.reduce((n, x) => n + x.labels.length, 0);
    expect(samples).toBe(report.training_samples);
  });

  it('the tree splits on features that tell P apart', () => {
    const used = new Set(box.policy!.predictor.structure().map((n) => DPNC_FEATURES[n.feature]));
    expect(used.size).toBeGreaterThan(0);
    for (const f of used) expect(DPNC_FEATURES).toContain(f);
  });
});
