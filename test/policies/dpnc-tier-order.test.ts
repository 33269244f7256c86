/**
 * DPNC's tier order visits a tier's pages in the order computing every value would give, while the
 * pages' raw scores move as unattended blocks' do (one subtraction for all, which can merge raws).
 */
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { NONE, TierOrder } from '../../policies/dpnc-tier-order.js';

describe('dpnc tier order', () => {
  it('visits in order of (value, block) as pages arrive, leave and their raws merge', () => {
    const rng = seedrandom('tier-order');
    let visits = 0;
    for (let trial = 0; trial < 30; trial++) {
      const M = 40 + Math.floor(rng() * 60);
      const order = new TierOrder(2, M, 3);
      const l = 1;
      // raw scores (coarse, so that ties and merges happen), offset, and per page its tier and u
      const raw = new Float64Array(M);
      // even trials: raws a few ulps above -0.5 (once they pass it their ulp doubles and neighbours
      // merge), scores (raw + offset) of a few ulps; odd trials: many scores at or below 0 (value 0)
      const merging = trial % 2 === 0;
      const ulp = merging ? 2 ** -54 : 2 ** -50;
      let offset = merging ? 0.5 + ulp : 0.5;
      const tier = new Int32Array(M);
      const u = new Int32Array(M);
      const rawOf = (b: number) => raw[b];
      const move = (b: number, to: number) => {
        tier[b] = to;
        if (to > 0) order.place(l, b, to, u[b], rawOf);
        else order.leave(l, b, rawOf);
      };
      for (let b = 0; b < M; b++) {
        raw[b] = -0.5 + (Math.floor(rng() * 8) - (merging ? 0 : 4)) * ulp;
        u[b] = rng() < 0.2 ? NONE : Math.floor(rng() * 4);
        move(b, rng() < 0.7 ? 1 + Math.floor(rng() * 2) : 0);
      }
      for (let t = 4; t < 24; t++) {
        // an observation: every page below HBM loses the same share (raws can merge); a page in HBM is attended
        const share = Math.floor(rng() * 3) * ulp;
        offset += share;
        for (let b = 0; b < M; b++) {
          if (tier[b] > 0) raw[b] -= share;
          else if (rng() < 0.5) {
            raw[b] += Math.floor(rng() * 8) * ulp;
            u[b] = t;
          }
        }
        // pages move: to HBM, and down from it
        for (let b = 0; b < M; b++) if (rng() < 0.05) move(b, tier[b] > 0 ? 0 : 1 + Math.floor(rng() * 2));
        const mx = 16 * ulp;
        const score = (b: number) => raw[b] + offset;
        const due = rng() < 0.5 ? { ageSteps: 8, lowImportance: 0.03 } : null;
        const value = (b: number) => Math.max(0, score(b)) / mx / (1 + Math.max(0, u[b] === NONE ? 0 : t - u[b]));
        const isDue = (b: number) => due === null || (u[b] === NONE ? 0 : t - u[b]) >= due.ageSteps || Math.max(0, score(b)) / mx < due.lowImportance;
        for (const k of [1, 2]) {
          const want = [...Array(M).keys()].filter((b) => tier[b] === k && isDue(b)).sort((a, b) => value(a) - value(b) || a - b);
          // visit up to take + 1 pages, moving each; with `stay`, the last one stays where it is
          const take = Math.floor(rng() * 5);
          const stay = rng() < 0.3;
          const got: number[] = [];
          const stuck = order.visit(
            l,
            k,
            { t, mx, score, raw: rawOf, due },
            (list, b) => {
              list.push(b);
              if (stay && list.length === take + 1) return true;
              move(b, k === 1 ? 2 : 0);
              return list.length < take + 1;
            },
            got,
          );
          expect(got).toEqual(want.slice(0, Math.min(want.length, take + 1)));
          expect(stuck).toBe(stay && got.length === take + 1 ? got[take] : -1);
          visits += got.length;
        }
      }
    }
    expect(visits).toBeGreaterThan(1000);
  });
});
