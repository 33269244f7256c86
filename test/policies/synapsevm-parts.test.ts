/** SynapseVM's parts: the copy cost and its sources, the machine facts, the audit's per-step figures. */
import { describe, expect, it } from 'vitest';
import { CopyCost } from '../../policies/synapse-copy-cost.js';
import { ForecastAudit, median } from '../../policies/synapse-forecast-audit.js';
import { SynapseForecast } from '../../policies/synapse-forecast.js';
import type { Observation } from '../../policies/policy.js';
import { policyHardware } from '../../sim/hardware/policy-hardware.js';
import { tinyHardware, tinyModel } from '../helpers/tiny.js';

describe('synapsevm copy cost', () => {
  const hardware = { toHbm_GBps: [0, 50, 10], toHbmAlpha_us: [0, 5, 90], layerCompute_us: 150 };
  const tiers = ['hbm', 'dram', 'nvme'];
  it('takes alpha, beta and the layer time from the hardware facts: alpha + bytes / beta per copy', () => {
    const c = new CopyCost({ tiers, hardware }, { link_GBps: 0, copy_alpha_us: -1, layer_us: 0 });
    expect(c.layerUs).toBe(150);
    expect(c.of(1, 50_000)).toBeCloseTo(5 + 1, 12);
    expect(c.of(2, 10_000)).toBeCloseTo(90 + 1, 12);
  });
  it('options override every tier; without facts or options the layer time is unbounded and copies cost nothing', () => {
    const c = new CopyCost({ tiers, hardware }, { link_GBps: 1, copy_alpha_us: 0, layer_us: 40 });
    expect([c.of(1, 2000), c.of(2, 2000), c.layerUs]).toEqual([2, 2, 40]);
    const bare = new CopyCost({ tiers }, { link_GBps: 0, copy_alpha_us: -1, layer_us: 0 });
    expect([bare.of(1, 1e9), bare.layerUs]).toEqual([0, Infinity]);
  });
});

describe('policy hardware facts', () => {
  it('per tier the route into HBM (narrowest hop, alphas) and a layer attending the budget by roofline', () => {
    // tiny machine: PCIe 1 B/us with alpha 10 us; NVMe -> DRAM 0.5 B/us, alpha 0; linear kernel 1000 B
    // at 1 B/us; attention over 8 tokens of FP16 KV (2 x 4 values x 2 B each) = 128 B at 1 B/us
    const f = policyHardware(tinyHardware(), tinyModel, ['hbm', 'dram', 'nvme'], 8);
    expect(f.toHbm_GBps).toEqual([0, 0.001, 0.0005]);
    expect(f.toHbmAlpha_us).toEqual([0, 10, 10]);
    expect(f.layerCompute_us).toBeCloseTo(1000 + 128, 9);
  });
});

describe('forecast audit', () => {
  it('per step precision and recall over the layers, run totals, min and median', () => {
    const a = new ForecastAudit(2, 4);
    const off = () => true;
    // step 0: layer 0 forecasts {1, 2}, heavy {1, 3}; layer 1 forecasts {0}, heavy {0}
    a.begin(0, 0, 4, off, [1, 2]);
    a.truth(0, 0, 4, 0.25, (b) => [0, 0.5, 0.1, 0.4][b]);
    a.begin(1, 0, 4, off, [0]);
    a.truth(1, 0, 4, 0.25, (b) => [0.9, 0, 0, 0.1][b]);
    // step 1: layer 0 forecasts {3}, heavy {2}; layer 1: truth for another step is ignored
    a.begin(0, 1, 4, off, [3]);
    a.truth(0, 1, 4, 0.25, (b) => [0, 0, 1, 0][b]);
    a.begin(1, 1, 4, off, [2]);
    a.truth(1, 2, 4, 0.25, () => 1);
    const r = a.report();
    expect(a.steps).toEqual([
      { step: 0, hits: 2, forecast: 3, truth: 3 },
      { step: 1, hits: 0, forecast: 1, truth: 1 },
    ]);
    expect(r.forecast_precision).toBeCloseTo(2 / 4, 12);
    expect(r.forecast_recall).toBeCloseTo(2 / 4, 12);
    expect(r.forecast_precision_step_min).toBe(0);
    expect(r.forecast_precision_step_median).toBeCloseTo(1 / 3, 12);
  });
  it('does not report recall when a block below L1 was not observed', () => {
    const a = new ForecastAudit(1, 3);
    a.begin(0, 0, 3, (b) => b > 0, [1]);
    a.truth(0, 0, 3, 0.5, (b) => (b === 2 ? null : 1));
    const r = a.report();
    expect(r.forecast_unobserved_blocks).toBe(1);
    expect(r.forecast_precision).toBe(1);
    expect(r.forecast_recall).toBeUndefined();
  });
  it('truthOf an observation counts as truth over the same masses (sparse and dense forms, skips, heavy uniform share)', () => {
    let allAttended = 0;
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + Math.floor(rnd() * 40);
      const obs = randomObservation(n, rnd);
      const theta = rnd() < 0.2 ? obs.uniform : rnd() * 0.3;
      const off = Uint8Array.from({ length: n }, () => (rnd() < 0.6 ? 1 : 0));
      const fc = Array.from({ length: Math.floor(rnd() * 6) }, () => Math.floor(rnd() * n));
      const a = new ForecastAudit(1, 64);
      const b = new ForecastAudit(1, 64);
      a.begin(0, 3, n, off, fc);
      b.begin(0, 3, n, (x) => off[x] === 1, fc);
      a.truthOf(0, 3, theta, obs);
      b.truth(0, 3, n, theta, (x) => (obs.attended[x] ? massOf(obs, x) : null));
      expect([a.steps, a.unobserved]).toEqual([b.steps, b.unobserved]);
      // the mask kept, not copied (a row of maxBlocks, 0 from n on, as the policy's mask of blocks below L1)
      const row = new Uint8Array(64);
      row.set(off);
      // (layer 1 of 2: the kept row is read from its own block 0)
      const k = new ForecastAudit(2, 64);
      k.begin(1, 3, n, row, fc, fc.length, true);
      k.truthOf(1, 3, theta, { ...obs, layer: 1 } as Observation);
      expect([k.steps, k.unobserved]).toEqual([b.steps, b.unobserved]);
      // every block attended: the same from the list of the blocks at or above theta
      if (obs.attendedCount === n) {
        const heavy = Array.from({ length: n }, (_, x) => x).filter((x) => massOf(obs, x) >= theta);
        const c = new ForecastAudit(1, 64);
        c.begin(0, 3, n, off, fc);
        c.truthOfHeavy(0, 3, n, heavy, heavy.length);
        expect([c.steps, c.unobserved]).toEqual([b.steps, b.unobserved]);
        const d = new ForecastAudit(2, 64);
        d.begin(1, 3, n, row, fc, fc.length, true);
        d.truthOfHeavy(1, 3, n, heavy, heavy.length);
        expect([d.steps, d.unobserved]).toEqual([b.steps, b.unobserved]);
        allAttended++;
      }
    }
    expect(allAttended).toBeGreaterThan(10);
  });
  it('median of odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});

/** a random observation of n blocks: sparse (ascending listed blocks) or dense, some blocks skipped */
function randomObservation(n: number, rnd: () => number): Observation {
  const attended = Uint8Array.from({ length: n }, () => (rnd() < 0.85 ? 1 : 0));
  const attendedCount = attended.reduce((x, y) => x + y, 0);
  const dense = rnd() < 0.2;
  const idx = dense ? null : Uint32Array.from(Array.from({ length: n }, (_, b) => b).filter(() => rnd() < 0.3));
  const mass = Float32Array.from({ length: dense ? n : idx!.length }, () => rnd() * 0.4);
  const uniform = dense ? 0 : rnd() * 0.1;
  return { step: 3, layer: 0, nBlocks: n, idx, mass, uniform, groups: [], attended, attendedCount };
}

/** an attended block's mass in an observation (its listed mass, else the uniform share) */
function massOf(o: Observation, b: number): number {
  if (o.idx === null) return o.mass[b];
  const i = o.idx.indexOf(b);
  return i >= 0 ? o.mass[i] : o.uniform;
}

describe('synapsevm forecast parts', () => {
  it('observe keeps masses, self scores, last-seen steps and the learned overlaps as defined (reference model; all attended or not)', () => {
    let seed = 17;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const L = 3;
    const M = 60;
    for (let trial = 0; trial < 30; trial++) {
      const w = trial % 3 === 0 ? 0.5 : 1;
      const H = 1 + rnd() * 3;
      const rho = 0.3;
      const f = new SynapseForecast(L, M, { historyWeight: w, heavyRatio: H, simRate: rho });
      // the reference: the definitions in synapse-forecast.ts, one block at a time
      const recent = Array.from({ length: L }, () => new Array<number>(M).fill(0));
      const cur = Array.from({ length: L }, () => new Array<number>(M).fill(0));
      const seen = Array.from({ length: L }, () => new Array<number>(M).fill(-2));
      const curStep = new Array<number>(L).fill(-2);
      const simC = new Array<number>(L).fill(0);
      const simS = new Array<number>(L).fill(1);
      let n = 5 + Math.floor(rnd() * 20);
      for (let step = 0; step < 8; step++) {
        for (let l = 0; l < L; l++) {
          const obs = { ...randomObservation(n, rnd), step, layer: l };
          if (rnd() < 0.6) {
            obs.attended.fill(1);
            obs.attendedCount = n;
          }
          const judged = rnd() < 0.8 ? Uint8Array.from({ length: M }, () => (rnd() < 0.7 ? 1 : 0)) : undefined;
          f.observe(obs, judged);
          const theta = H / n;
          const m = Array.from({ length: n }, (_, b) => (obs.attended[b] ? massOf(obs, b) : 0));
          const prev = l > 0 ? l - 1 : L - 1;
          const crossKnown = curStep[prev] === (l > 0 ? step : step - 1);
          if (judged) {
            let [iC, uC, iS, uS] = [0, 0, 0, 0];
            for (let b = 0; b < n; b++) {
              if (!obs.attended[b] || !judged[b]) continue;
              const h = m[b] >= theta;
              const c = crossKnown && cur[prev][b] >= theta;
              const sf = recent[l][b] >= theta;
              iC += +(h && c);
              uC += +(h || c);
              iS += +(h && sf);
              uS += +(h || sf);
            }
            if (crossKnown && uC > 0) simC[l] = (1 - rho) * simC[l] + (rho * iC) / uC;
            if (uS > 0) simS[l] = (1 - rho) * simS[l] + (rho * iS) / uS;
          }
          for (let b = 0; b < n; b++) {
            cur[l][b] = m[b];
            if (obs.attended[b]) {
              recent[l][b] = (1 - w) * recent[l][b] + w * m[b];
              seen[l][b] = step;
            }
          }
          curStep[l] = step;
          for (let j = 0; j < L; j++) {
            expect(Array.from({ length: M }, (_, b) => f.selfScore(j, b))).toEqual(recent[j]);
            expect(Array.from({ length: M }, (_, b) => f.lastMass(j, b))).toEqual(cur[j]);
            expect(Array.from({ length: M }, (_, b) => f.seen(j, b))).toEqual(seen[j]);
          }
          expect([f.simCross[l], f.simSelf[l]]).toEqual([simC[l], simS[l]]);
        }
        n += Math.floor(rnd() * 2);
      }
    }
  });
  it('candidates are the blocks of the mask scoring >= theta, with minus their score as keys (any history weight, grown block counts)', () => {
    let seed = 3;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let trial = 0; trial < 60; trial++) {
      const f = new SynapseForecast(3, 80, { historyWeight: [1, 0.5, 0.1][trial % 3], heavyRatio: 1 + rnd() * 3, simRate: 0.5 });
      let n = 5 + Math.floor(rnd() * 20);
      for (let step = 0; step < 6; step++) {
        for (let l = 0; l < 3; l++) {
          const judged = Uint8Array.from({ length: 80 }, () => (rnd() < 0.7 ? 1 : 0));
          const obs = { ...randomObservation(n, rnd), step, layer: l };
          if (rnd() < 0.6) {
            obs.attended.fill(1);
            obs.attendedCount = n;
          }
          f.observe(obs, judged);
          const nDec = n + [0, 1, 3][Math.floor(rnd() * 3)];
          const lNext = (l + 1) % 3;
          const sNext = lNext === 0 ? step + 1 : step;
          const alpha = rnd() < 0.3 ? 0 : f.alpha(lNext, sNext);
          const theta = f.threshold(nDec);
          const mask = Uint8Array.from({ length: 80 }, () => (rnd() < 0.8 ? 1 : 0));
          const ids = new Int32Array(80);
          const keys = new Float64Array(80);
          const count = f.candidates(lNext, nDec, alpha, theta, mask, ids, keys);
          const got = [...ids.subarray(0, count)].sort((x, y) => x - y);
          const want = Array.from({ length: nDec }, (_, b) => b).filter((b) => mask[b] && f.score(lNext, b, sNext, alpha) >= theta);
          expect(got).toEqual(want);
          // (each candidate's key at its place)
          for (let i = 0; i < count; i++) expect(keys[i]).toBe(-f.score(lNext, ids[i]!, sNext, alpha));
        }
        n += Math.floor(rnd() * 2);
      }
    }
  });
  it('lastAtLeast after an observation of every block (listed form): the blocks at or above theta, ties included', () => {
    // 20 blocks, theta = 2 / 20 = 0.1; listed 1, 4, 7, 9, 15, the others at 0.01
    const n = 20;
    const mass = Float32Array.from([0.3, 0.1, 0.05, 0.2, 0.1]);
    const obs = { layer: 1, step: 0, nBlocks: n, idx: Uint32Array.from([1, 4, 7, 9, 15]), mass, uniform: 0.01, attended: new Uint8Array(n).fill(1), attendedCount: n, groups: [] };
    const f = new SynapseForecast(2, 64, { historyWeight: 1, heavyRatio: 2, simRate: 0.25 });
    f.observe(obs as unknown as Observation);
    const ids = new Int32Array(64);
    const at = (theta: number) => [...ids.subarray(0, f.lastAtLeast(1, n + 1, theta, ids))];
    expect(at(mass[1])).toEqual([1, 4, 9, 15]);
    expect(at(mass[3])).toEqual([1, 9]);
    expect(at(0.25)).toEqual([1]);
    expect(at(0.31)).toEqual([]);
    expect(at(mass[2])).toEqual([1, 4, 7, 9, 15]);
    // the same from the kept high blocks, where theta is at least highFrom (2 / 21 here)
    const heavy = (theta: number) => [...ids.subarray(0, Math.max(0, f.heavyOfLatest(1, theta, ids)))];
    expect(heavy(mass[1])).toEqual([1, 4, 9, 15]);
    expect(heavy(0.25)).toEqual([1]);
    expect(f.heavyOfLatest(1, mass[2], ids)).toBe(-1);
    // (below the uniform share every block is read: the form is written out to the rows)
    expect(at(0.01)).toEqual(Array.from({ length: n }, (_, b) => b));
    expect(f.heavyOfLatest(1, mass[1], ids)).toBe(-1);
    // an observation that skipped a block is taken in row form: no list
    f.observe({ ...obs, step: 1, attended: new Uint8Array(n).fill(1).fill(0, 3, 4), attendedCount: n - 1 } as unknown as Observation);
    expect(f.heavyOfLatest(1, mass[1], ids)).toBe(-1);
  });

  it('lastAtLeast lists the blocks whose latest observed mass reaches theta (listed only or every block)', () => {
    let seed = 11;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + Math.floor(rnd() * 40);
      const f = new SynapseForecast(2, 64, { historyWeight: 1, heavyRatio: 2, simRate: 0.25 });
      const obs = randomObservation(n, rnd);
      f.observe({ ...obs, layer: 1 });
      // (the last choice: exactly a listed block's mass, a tie at theta)
      const listedMass = obs.idx !== null && obs.idx.length > 0 ? obs.mass[Math.floor(rnd() * obs.idx.length)] : 0;
      const theta = [0, obs.uniform, rnd() * 0.3, listedMass][Math.floor(rnd() * 4)];
      const created = n + Math.floor(rnd() * 3);
      const ids = new Int32Array(64);
      const got = [...ids.subarray(0, f.lastAtLeast(1, created, theta, ids))].sort((x, y) => x - y);
      const want = Array.from({ length: created }, (_, b) => b).filter((b) => (b < n && obs.attended[b] ? massOf(obs, b) : 0) >= theta);
      expect(got).toEqual(want);
      for (const b of want) expect(f.lastMass(1, b)).toBe(b < n && obs.attended[b] ? massOf(obs, b) : 0);
    }
  });
});
