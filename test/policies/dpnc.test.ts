import { describe, expect, it } from 'vitest';
import { dpnc, offloadedEnd } from '../../policies/dpnc.js';
import seedrandom from 'seedrandom';
import { firstBitsChanged, frequencyBinHolds, frequencyFeature, KeyNormBins, keyNormFeature, pageFeatures, normStats, RECENCY_HORIZON, type PageFacts } from '../../policies/dpnc-features.js';
import { isNeeded, PrefetchAudit } from '../../policies/dpnc-prefetch-audit.js';
import type { Observation, Policy, PolicyDefinition } from '../../policies/policy.js';
import { resolveOptions } from '../../policies/registry.js';
import { replayPolicy } from './harness.js';

function capturing() {
  const box: { policy?: Policy } = {};
  const def: PolicyDefinition<any> = { ...dpnc, create: (o, s) => (box.policy = dpnc.create(o, s)) };
  return { def, box };
}

describe('dpnc rules on a hand-made trace', () => {
  // one layer, prompt 16 = blocks 0..3, block 4 at step 0; budget 2 pages; tiny machine (hbm, dram, nvme).
  // A page is needed when its mass >= 1/5 (use_factor 1, 5 blocks). The prefill observes step 0's row.
  // value = importance / (1 + steps since last use, or since created when never used); importance =
  // cumulative mass / the layer's largest.
  const m0 = [0.5, 0.1, 0.3, 0.05, 0.05];
  const m1 = [0.3, 0.05, 0.6, 0, 0.05];
  const { def, box } = capturing();
  const r = replayPolicy(def, 2, {
    prompt: 16,
    steps: 2,
    layers: 1,
    massOf: (s) => (s === 0 ? m0 : m1),
    options: { recent_steps: 2, importance_trigger: true, explore: 0, page_in: 1, dram_factor: 1, demote_max: 0 },
  });
  const report = box.policy!.report!();

  it('capacity pressure: the lowest-value resident pages go to DRAM, DRAM over its quota pushes its lowest down', () => {
    // prefill at t = 0 (used at the prefill: 0 and 2): values 0: 1/2, 1: 0.2/2, 2: 0.6/2, 3: 0.1/2 -> 3 and 1 go
    expect(r.acts('demote:dram:16', -1)).toEqual(['0:1', '0:3']);
    // step 0: room for block 4 -> 2 (0.3 < 0.5) to DRAM; DRAM holds 3 > quota 2 -> its lowest (3, 0.05) down
    expect(r.acts('demote:dram:16', 0)).toEqual(['0:2']);
    expect(r.acts('demote:nvme:16', 0)).toEqual(['0:3']); // the tiny machine has no CXL: DRAM -> SSD
    expect(r.acts('skip', 0)).toEqual(['0:1', '0:2', '0:3']);
    expect(r.acts('promote', 0)).toEqual([]);
  });

  it('page-in on recency replaces a resident page of lower value; importance ranks after it (page_in 1)', () => {
    // step 1: 2 was used at the prefill (2 steps ago: recent) value 0.3/3 = 0.1; 1 is important
    // (0.1 > block 4's 0.05) but worth 0.1/3; the victim is 4 (0.05/3 < 0.1), never used
    expect(r.acts('demote:dram:16', 1)).toEqual(['0:4']);
    expect(r.acts('promote', 1)).toEqual(['0:2']);
    expect(r.acts('skip', 1)).toEqual(['0:1', '0:3', '0:4']);
    expect(r.tiers(0)).toEqual([0, 1, 0, 2, 1]);
    expect(r.results.map((x) => x.recall[0])).toEqual([0.55, 0.9].map((v) => expect.closeTo(v, 6)));
  });

  it('reports the page-in and the predictor, counted', () => {
    // step 0 asked about 1 and 3 (neither needed), step 1 about 1, 2, 3 (2 needed); the tree predicted
    // nothing (fewer than tree_grace samples): right on 4 of 5, as the majority class is
    expect(report.predictor_examples).toBe(5);
    expect(report.predictor_needed).toBe(1);
    expect(report.predictor_predicted).toBe(0);
    expect(report.predictor_accuracy).toBe(0.8);
    expect(report.predictor_majority_accuracy).toBe(0.8);
    expect(report.prefetches).toBe(1);
    expect(report.prefetches_recent).toBe(1);
    expect(report.prefetch_used).toBe(1);
    expect(report.prefetch_precision).toBe(1);
    expect(report.prefetch_recall).toBe(1);
    expect(report.prefetch_bytes).toBe(64);
    expect(report.prefetch_bytes_wasted).toBe(0);
    // the tree trained on the pages it was asked about and saw: 0 at step 0, 0 and 2 at step 1 (all
    // used); test-then-train: the empty root answers "no" (1/2 is not above 1/2), then "yes" twice
    expect(report.training_samples).toBe(3);
    expect(report.training_accuracy).toBe(2 / 3);
    expect(report.training_majority_accuracy).toBe(1);
  });
});

describe('dpnc decides from what a real system knows', () => {
  it('changing the masses of pages it did not attend changes none of its actions', () => {
    const mass = (s: number, l: number, n: number) => Array.from({ length: n }, (_, b) => ((s * 7 + l * 3 + b * 5) % 11) + 1).map((x, _, a) => x / a.reduce((p, q) => p + q, 0));
    const base = replayPolicy(dpnc, 3, { prompt: 32, steps: 12, layers: 2, massOf: mass });
    // rewrite the trace: every block the kernel skipped at (step, layer) gets a different mass (from
    // step 1 on: the prefill observes step 0's row whole, as the prompt's attention)
    const trace = base.trace.map((s) => s.step === 0 ? s : ({
      ...s,
      layers: s.layers.map((la, l) => {
        const m = Float32Array.from(la.mass);
        for (const a of base.log) if (a.what === 'skip' && a.step === s.step && a.layer === l) m[a.args[1]] = m[a.args[1]] * 3 + 0.05;
        return { ...la, mass: m };
      }),
    }));
    expect(trace.some((s, i) => s.layers.some((la, l) => la.mass.some((x, b) => x !== base.trace[i].layers[l].mass[b])))).toBe(true);
    const again = replayPolicy(dpnc, 3, { fullHeader: base.header, trace });
    const key = (x: typeof base) => x.log.map((a) => `${a.step}/${a.layer} ${a.what} ${a.args.join(',')} ${a.ok}`);
    expect(base.log.filter((a) => a.what === 'skip').length).toBeGreaterThan(0);
    expect(key(again)).toEqual(key(base));
  });
});

describe('dpnc options', () => {
  it('are typed and listed, with their choices', () => {
    const names = dpnc.options.map((o) => o.name);
    expect(names).toEqual(expect.arrayContaining(['use_factor', 'page_in', 'predict_threshold', 'recent_steps', 'importance_trigger', 'explore', 'hbm_age_steps', 'age_steps', 'low_importance', 'demote_floor', 'train_on']));
    expect(() => resolveOptions(dpnc, { train_on: 'some' })).toThrow(/train_on must be one of all, offloaded/);
    expect(() => resolveOptions(dpnc, { page_in: 1.5 })).toThrow(/page_in must be an integer/);
  });
});

describe('dpnc features of one page', () => {
  it('are computed as documented', () => {
    const f: PageFacts = { recency: 4, uses: 3, seen: 4, lastMass: 0.5, keyNormZ: 0, block: 2, nBlocks: 8, layer: 1, layers: 3, tier: 2, tiers: 5, prevLayerMass: 1 };
    const x = new Float64Array(8);
    pageFeatures(f, x);
    expect(Array.from(x)).toEqual([4 / 16, 0.75, 0.5, 0.5, 0.25, 0.5, 0.5, 1]);
    expect(RECENCY_HORIZON).toBe(16);
    // never used, never attended, unknown in the layer before
    pageFeatures({ ...f, recency: Infinity, uses: 0, seen: 0, lastMass: 0, keyNormZ: Math.log(3), prevLayerMass: Number.NaN }, x);
    expect(Array.from(x)).toEqual([1, 0, 0, expect.closeTo(0.75, 12), 0.25, 0.5, 0.5, 0]);
    // a page the layer before attended with no mass is known (0.25), not unknown (0)
    pageFeatures({ ...f, prevLayerMass: 0 }, x);
    expect(x[7]).toBe(0.25);
  });

  it('key-norm bins from the edges equal the binned feature, at the edges too, for any bin count', () => {
    const rng = seedrandom('key-norm-bins');
    for (const bins of [2, 3, 7, 16, 100]) {
      const bin = (v: number) => Math.min(bins - 1, Math.max(0, Math.floor(v * bins)));
      const kb = new KeyNormBins({ bin }, bins);
      const zs = [0, -0, 1e-300, -1e-300, 39.9, -39.9, 40, -40, 1e9, -1e9, Infinity, -Infinity];
      for (let i = 0; i < 5000; i++) zs.push((rng() - 0.5) * 20);
      // around each bin edge of the logistic (z = ln(k / (bins − k))): within a few ulps, and a little wider
      for (let k = 1; k < bins; k++) {
        const edge = Math.log(k / (bins - k));
        for (let d = -40; d <= 40; d++) zs.push(edge + d * 1e-16 * Math.max(1, Math.abs(edge)), edge + d * 1e-9, edge + d * 1e-8);
      }
      const wrong = zs.filter((z) => kb.of(z) !== bin(keyNormFeature(z)));
      expect(wrong).toEqual([]);
      expect(zs.length).toBeGreaterThan(5000);
      // tried first at any bin (right, or wrong by any amount), the same answer
      const wrongNear = zs.filter((z, j) => kb.ofNear(z, j % bins) !== bin(keyNormFeature(z)) || kb.ofNear(z, kb.of(z)) !== kb.of(z));
      expect(wrongNear).toEqual([]);
      // a z at least GUARD inside bin k's edges (below, above) and within ±40 is in bin k (the test observe makes before ofNear)
      let inside = 0;
      const wrongInside = zs.filter((z, j) => {
        for (const k of [j % bins, kb.of(z)]) {
          if (!(z - kb.below[k] >= KeyNormBins.GUARD && kb.above[k] - z >= KeyNormBins.GUARD && z > -40 && z < 40)) continue;
          inside++;
          if (bin(keyNormFeature(z)) !== k) return true;
        }
        return false;
      });
      expect(wrongInside).toEqual([]);
      expect(inside).toBeGreaterThan(4000);
    }
  });

  it('a frequency bin that holds is the binned frequency, for any bin count and counts', () => {
    const rng = seedrandom('frequency-bins');
    let held = 0;
    const wrong: number[][] = [];
    for (const bins of [2, 3, 7, 10, 16, 100, 255]) {
      const bin = (v: number) => Math.min(bins - 1, Math.max(0, Math.floor(v * bins)));
      const cases: [number, number][] = [];
      // every count up to 60 attendances (every exact edge among them), and random large ones
      for (let seen = 1; seen <= 60; seen++) for (let uses = 0; uses <= seen; uses++) cases.push([uses, seen]);
      for (let j = 0; j < 3000; j++) {
        const seen = 1 + Math.floor(rng() * 2 ** 30);
        cases.push([Math.floor(rng() * (seen + 1)), seen], [seen, seen], [0, seen]);
      }
      for (const [uses, seen] of cases) {
        const exact = bin(frequencyFeature(uses, seen));
        for (let k = 0; k < bins; k++) {
          if (!frequencyBinHolds(k, uses, seen, bins)) continue;
          if (k !== exact) wrong.push([bins, uses, seen, k]);
          held++;
        }
      }
    }
    expect(wrong).toEqual([]);
    // it holds for the right bin except at an exact edge
    expect(held).toBeGreaterThan(7 * 3000);
  });

  it('the first changed key norm, compared as doubles, is the first whose bits differ', () => {
    const rng = seedrandom('first-bits-changed');
    // values whose doubles compare equal with other bits (zeros) or never equal (NaN)
    const special = [0, -0, Number.NaN, 1.5, -2, 3e-45, Infinity];
    const wrong: number[][] = [];
    for (let trial = 0; trial < 2000; trial++) {
      const len = 1 + Math.floor(rng() * 12);
      const offset = Math.floor(rng() * 3);
      const buf = new ArrayBuffer(4 * (len + 4));
      const now = new Float32Array(buf, 4 * offset, len);
      const kept = new Float32Array(len + 2);
      for (let b = 0; b < len + 2; b++) kept[b] = special[Math.floor(rng() * special.length)];
      now.set(kept.subarray(0, len));
      // a few norms changed, some to a value of equal double (0 to -0) or to another NaN's bits
      for (let k = Math.floor(rng() * 3); k > 0; k--) {
        const b = Math.floor(rng() * len);
        if (rng() < 0.3) new Int32Array(buf, now.byteOffset, len)[b] ^= 1 << Math.floor(rng() * 32);
        else now[b] = special[Math.floor(rng() * special.length)];
      }
      const nowBits = new Int32Array(buf, now.byteOffset, len);
      const keptBits = new Int32Array(kept.buffer);
      const words = now.byteOffset % 8 === 0 ? new Float64Array(buf, now.byteOffset, len >> 1) : null;
      let expected = -1;
      for (let b = 0; b < len; b++) {
        if (nowBits[b] !== keptBits[b]) {
          expected = b;
          break;
        }
      }
      const got = firstBitsChanged(nowBits, keptBits, words, new Float64Array(kept.buffer, 0, (len + 2) >> 1));
      if (got !== expected) wrong.push([trial, got, expected]);
    }
    expect(wrong).toEqual([]);
    // a pair of norms (+0, -0) against (+0, +0): equal as one double, different bits
    const a = Float32Array.from([1, 2, 0, -0]);
    const z = Float32Array.from([1, 2, 0, 0]);
    const bits = (x: Float32Array) => new Int32Array(x.buffer);
    const words = (x: Float32Array) => new Float64Array(x.buffer);
    expect(firstBitsChanged(bits(a), bits(z), words(a), words(z))).toBe(3);
    expect(firstBitsChanged(bits(z), bits(a), words(z), words(a))).toBe(3);
    expect(firstBitsChanged(bits(a), bits(a), words(a), words(a))).toBe(-1);
  });

  it('key-norm statistics are over live pages only', () => {
    expect(normStats([1, 3, 100], 3, (b) => b < 2)).toEqual({ mean: 2, sd: 1 });
  });
});

describe('prefetch audit', () => {
  const obs = (step: number, mass: number[], attended: number[], idx: number[] | null = null, uniform = 0): Observation => {
    const n = idx === null ? mass.length : attended.length;
    const att = Uint8Array.from(attended);
    return { step, layer: 0, nBlocks: n, idx: idx && Uint32Array.from(idx), mass: Float32Array.from(mass), uniform, groups: [], attended: att, attendedCount: att.reduce((a, b) => a + b, 0) };
  };

  it('need is mass >= use_factor / nBlocks', () => {
    expect(isNeeded(0.25, 4, 1)).toBe(true);
    expect(isNeeded(0.2499, 4, 1)).toBe(false);
    expect(isNeeded(0, 4, 0)).toBe(false);
  });

  it('settles listed pages against the row, attended or not, dense and sparse', () => {
    const a = new PrefetchAudit(1, 8, 1);
    // step 3: pages 1, 2, 4 offloaded; the tree said 1 and 4; 1 and 2 were paged in (1 by the tree, 2 exploring)
    a.offloaded(0, 1, 3, true);
    a.offloaded(0, 2, 3, false);
    a.offloaded(0, 4, 3, true);
    a.pagedInFor(0, 1, 3, 'tree', 64);
    a.pagedInFor(0, 2, 3, 'explore', 64);
    // 5 blocks, need >= 0.2: 1 (0.3) needed, 2 (0.1) not, 4 (0.25, not attended) needed
    a.settle(obs(3, [0.3, 0.3, 0.1, 0.05, 0.25], [1, 1, 1, 1, 0]));
    // step 4, sparse: listed 0 and 4; everything else 0.05 each; page 4 listed for step 4 but not paged in
    a.offloaded(0, 4, 4, false);
    a.settle(obs(4, [0.5, 0.35], [1, 1, 1, 1, 0], [0, 4], 0.05));
    const rep = a.report();
    expect(rep.predictor_examples).toBe(4);
    expect(rep.predictor_needed).toBe(3); // 1, 4 at step 3; 4 at step 4
    expect(rep.predictor_predicted).toBe(2);
    expect(rep.predictor_true_positives).toBe(2);
    expect(rep.predictor_accuracy).toBe(0.75); // wrong only on 4 at step 4
    expect(rep.predictor_majority_accuracy).toBe(0.75);
    expect(rep.prefetches).toBe(2);
    expect(rep.prefetch_used).toBe(1);
    expect(rep.prefetch_precision).toBe(0.5);
    expect(rep.prefetch_recall).toBe(1 / 3);
    expect(rep.prefetch_bytes).toBe(128);
    expect(rep.prefetch_bytes_wasted).toBe(64);
    expect([rep.prefetches_tree, rep.prefetch_used_tree, rep.prefetches_explore, rep.prefetch_used_explore]).toEqual([1, 1, 1, 0]);
  });

  it('counts top-k rows together exactly as page by page (the same rows given dense), listings handed over or written in place', () => {
    const rng = seedrandom('audit-topk');
    const M = 40;
    const L = 2;
    const together = new PrefetchAudit(L, M, 1);
    const each = new PrefetchAudit(L, M, 1);
    // a third written in place (beginListing / endListing), as dpnc's decision pass does
    const direct = new PrefetchAudit(L, M, 1);
    for (let t = 0; t < 300; t++) {
      for (let l = 0; l < L; l++) {
        const n = 10 + Math.floor(rng() * (M - 10));
        // a listing: some pages offloaded, some answered yes, a few of them paged in
        const listed: number[] = [];
        for (let b = 0; b < n; b++) if (rng() < 0.7) listed.push(b);
        const answers = new Uint8Array(M);
        for (const b of listed) answers[b] = rng() < 0.3 ? 1 : 0;
        together.listOffloaded(l, t, Int32Array.from(listed), answers, listed.length);
        for (const b of listed) each.offloaded(l, b, t, answers[b] === 1);
        expect(direct.beginListing(l, t)).toBe(true);
        for (const b of listed) {
          direct.listedFor[l * M + b] = t;
          direct.answer[l * M + b] = answers[b];
        }
        direct.endListing(l, listed.length, listed.filter((b) => answers[b] === 1).length, listed.length ? listed[listed.length - 1] + 1 : 0);
        // page-ins, in an order other than the blocks'
        const pagedIn = listed.filter(() => rng() < 0.1).reverse();
        for (const b of pagedIn) {
          const trigger = rng() < 0.5 ? 'tree' : 'explore';
          const bytes = 64 + Math.floor(rng() * 3);
          together.pagedInFor(l, b, t, trigger, bytes);
          each.pagedInFor(l, b, t, trigger, bytes);
          direct.pagedInFor(l, b, t, trigger, bytes);
        }
        // the row: top-k listed blocks (ascending) with their masses, the rest sharing `uniform`
        // (below or above the need, exact in float32 as the dense row holds it)
        const idx: number[] = [];
        for (let b = 0; b < n; b++) if (rng() < 0.2) idx.push(b);
        const uniform = rng() < 0.5 ? 1 / 128 : 0.5;
        const masses = idx.map(() => rng() * 0.3);
        const attended = Array.from({ length: n }, () => (rng() < 0.6 ? 1 : 0));
        const dense = Array.from({ length: n }, () => uniform);
        idx.forEach((b, k) => (dense[b] = masses[k]));
        together.settle({ ...obs(t, masses, attended, idx, uniform), layer: l });
        direct.settle({ ...obs(t, masses, attended, idx, uniform), layer: l });
        each.settle({ ...obs(t, dense, attended), layer: l });
      }
    }
    expect(together.report()).toEqual(each.report());
    expect(direct.report()).toEqual(each.report());
    expect(together.report().predictor_examples).toBeGreaterThan(1000);
    expect(together.report().prefetches).toBeGreaterThan(100);
  });

  it('refuses a page-in of a page not listed as offloaded', () => {
    const a = new PrefetchAudit(1, 4, 1);
    expect(() => a.pagedInFor(0, 2, 0, 'tree', 64)).toThrow(/layer 0 block 2 paged in for step 0 but not listed/);
  });
});

describe('dpnc offloadedEnd', () => {
  it('is one past the last block of tier above 0, as a scan of every block finds, from the HBM bitmap', () => {
    const rng = seedrandom('offloaded-end');
    for (let trial = 0; trial < 400; trial++) {
      const L = 2;
      const M = 1 + Math.floor(rng() * 200);
      const W = (M + 31) >> 5;
      const tier = new Int8Array(L * M);
      const bits = new Int32Array(L * W);
      // mostly HBM at the end (the recent tail), some offloaded and some not live anywhere
      const pHbm = [0.5, 0.95, 1][trial % 3];
      for (let l = 0; l < L; l++) {
        for (let b = 0; b < M; b++) {
          const r = rng();
          tier[l * M + b] = r < pHbm ? 0 : r < pHbm + (1 - pHbm) * 0.7 ? 1 + Math.floor(rng() * 3) : -1;
          if (tier[l * M + b] === 0) bits[l * W + (b >> 5)] |= 1 << (b & 31);
        }
      }
      const cache = { tierOf: (l: number, b: number) => tier[l * M + b] };
      for (let l = 0; l < L; l++) {
        const created = Math.floor(rng() * (M + 1));
        let end = created;
        while (end > 0 && tier[l * M + end - 1] <= 0) end--;
        expect(offloadedEnd(bits, l * W, created, cache, l)).toBe(end);
      }
    }
  });
});

