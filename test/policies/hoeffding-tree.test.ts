import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { entropy, entropyBelow, gainCapAfter, gainGrowth, hoeffdingBound, HoeffdingTree } from '../../policies/hoeffding-tree.js';

describe('Hoeffding tree (streaming prefetch predictor)', () => {
  it('learns a learnable access pattern: prequential accuracy rises above 0.9', () => {
    const rng = seedrandom('learnable');
    const t = new HoeffdingTree({ features: 3 });
    // a block is accessed next step when it was used recently (x0 < 0.3) or is important (x1 > 0.8); x2 is noise
    for (let i = 0; i < 20000; i++) {
      const x = [rng(), rng(), rng()];
      t.learn(x, x[0] < 0.3 || x[1] > 0.8);
    }
    expect(t.splits).toBeGreaterThan(0);
    expect(t.accuracy).toBeGreaterThan(0.9);
    expect(t.accuracy).toBeGreaterThan(t.baseRate + 0.2);
    // and it generalizes to fresh samples
    let ok = 0;
    for (let i = 0; i < 2000; i++) {
      const x = [rng(), rng(), rng()];
      if (t.predict(x) === (x[0] < 0.3 || x[1] > 0.8)) ok++;
    }
    expect(ok / 2000).toBeGreaterThan(0.9);
  });

  it('does not pretend on a random stream: accuracy stays at the base rate, no spurious splits', () => {
    const rng = seedrandom('random');
    const t = new HoeffdingTree({ features: 3 });
    for (let i = 0; i < 20000; i++) t.learn([rng(), rng(), rng()], rng() < 0.5);
    expect(Math.abs(t.accuracy - 0.5)).toBeLessThan(0.03);
    expect(t.accuracy).toBeLessThan(t.baseRate + 0.02);
    expect(t.splits).toBe(0);
  });
});

describe('Hoeffding tree split decision, by hand', () => {
  // 2 features, 2 bins (edge at 0.5), a check every 8 samples. Feature 0 separates the classes
  // (x0 = 0.25 -> yes, x0 = 0.75 -> no); feature 1 says nothing (each value twice in each class).
  // At the root: H = 1 bit, gain(f0) = 1, gain(f1) = 0. Hoeffding bound with delta = 1e-7, R = 1:
  // n = 8: sqrt(ln(1e7) / 16) = 1.00368 > 1 - 0 -> no split; n = 16: sqrt(ln(1e7) / 32) = 0.70971 -> split.
  const stream = (t: HoeffdingTree, rounds: number) => {
    for (let r = 0; r < rounds; r++) {
      for (const x1 of [0.25, 0.75, 0.25, 0.75]) t.learn([0.25, x1], true);
      for (const x1 of [0.25, 0.75, 0.25, 0.75]) t.learn([0.75, x1], false);
    }
  };

  it('computes the bound and the entropy', () => {
    expect(hoeffdingBound(1, 1e-7, 8)).toBeCloseTo(Math.sqrt(Math.log(1e7) / 16), 12);
    expect(hoeffdingBound(1, 1e-7, 8)).toBeCloseTo(1.003684, 6);
    expect(hoeffdingBound(1, 1e-7, 16)).toBeCloseTo(0.709712, 6);
    expect(entropy(4, 8)).toBe(1);
    expect(entropy(2, 8)).toBeCloseTo(0.811278, 6);
    expect(entropy(0, 8)).toBe(0);
  });

  it('waits while the gain gap is within the bound, splits once it is not', () => {
    const t = new HoeffdingTree({ features: 2, bins: 2, grace: 8 });
    stream(t, 1);
    expect(t.splits).toBe(0);
    expect(t.lastCheck).toEqual({ n: 8, feature: 0, gain: 1, threshold: 0.5, second: 0, epsilon: expect.closeTo(1.003684, 6), split: false, reason: 'no-gap' });
    stream(t, 1);
    expect(t.splits).toBe(1);
    expect(t.lastCheck).toEqual({ n: 16, feature: 0, gain: 1, threshold: 0.5, second: 0, epsilon: expect.closeTo(0.709712, 6), split: true, reason: 'bound' });
    expect(t.structure()).toEqual([{ feature: 0, threshold: 0.5, depth: 0 }]);
    // new leaves start empty: Laplace 1/2 is not a "yes"; after one sample each they answer by it
    expect(t.predict([0.25, 0.25])).toBe(false);
    t.learn([0.25, 0.9], true);
    t.learn([0.75, 0.9], false);
    expect(t.predict([0.1, 0])).toBe(true);
    expect(t.predict([0.9, 0])).toBe(false);
    // a value on the edge goes where its bin went: 0.5 is in bin 1 (right)
    expect(t.predict([0.5, 0])).toBe(false);
  });

  it('two equally good features: no gap ever; the tie rule splits once the bound falls below tau', () => {
    // x0 = x1: both gain 1 bit, gap 0. tau = 0.75: n = 8 (eps 1.0037) waits, n = 16 (eps 0.7097) splits on the first
    const t = new HoeffdingTree({ features: 2, bins: 2, grace: 8, tau: 0.75 });
    const twin = (rounds: number) => {
      for (let i = 0; i < rounds * 4; i++) t.learn([0.25, 0.25], true);
      for (let i = 0; i < rounds * 4; i++) t.learn([0.75, 0.75], false);
    };
    twin(1);
    expect(t.lastCheck).toMatchObject({ n: 8, gain: 1, second: 1, split: false, reason: 'no-gap' });
    twin(1);
    expect(t.lastCheck).toMatchObject({ n: 16, feature: 0, gain: 1, second: 1, split: true, reason: 'tie' });
    // with the default tau 0.05 the same stream waits: eps < 0.05 needs n > ln(1e7) / (2 x 0.0025) = 3223.6
    const d = new HoeffdingTree({ features: 2, bins: 2, grace: 8 });
    for (let i = 0; i < 200; i++) d.learn(i % 2 ? [0.25, 0.25] : [0.75, 0.75], i % 2 === 1);
    expect(d.splits).toBe(0);
    expect(d.lastCheck?.reason).toBe('no-gap');
  });

  it('a pure leaf and a gain below minGain do not split', () => {
    const pure = new HoeffdingTree({ features: 1, bins: 2, grace: 4 });
    for (let i = 0; i < 4; i++) pure.learn([i / 4], true);
    expect(pure.lastCheck).toMatchObject({ n: 4, split: false, reason: 'pure' });
    // y independent of x in the counts: gain exactly 0 < minGain
    const flat = new HoeffdingTree({ features: 1, bins: 2, grace: 4, tau: 10 });
    for (const [x, y] of [[0.25, true], [0.25, false], [0.75, true], [0.75, false]] as const) flat.learn([x], y);
    expect(flat.lastCheck).toMatchObject({ n: 4, gain: 0, split: false, reason: 'min-gain' });
  });
  it('entropyBelow bounds the binary entropy from below: within 2e-4 bit, 1e-5 for p in [0.01, 0.99]', () => {
    const rng = seedrandom('below');
    for (let i = 0; i < 20000; i++) {
      const n = 1 + Math.floor(rng() * (i % 3 === 0 ? 100 : 1e7));
      const pos = i % 3 === 2 ? Math.floor(rng() * Math.min(n + 1, 3000)) : Math.floor(rng() * (n + 1));
      const p = pos / n;
      const h = entropy(pos, n);
      expect(entropyBelow(p)).toBeLessThanOrEqual(h);
      expect(h - entropyBelow(p)).toBeLessThan(p >= 0.01 && p <= 0.99 ? 1e-5 : 2e-4);
    }
  });

  it('each split check finds the best and second gains that computing every edge finds', () => {
    // the checks' gains recomputed here from the leaf counts at every edge, with the same formula
    const rng = seedrandom('split-checks');
    let checks = 0;
    for (let trial = 0; trial < 12; trial++) {
      const features = 1 + (trial % 6);
      const bins = 2 + ((trial * 5) % 17);
      const t = new HoeffdingTree({ features, bins, grace: 50, tau: 0.01 * (trial % 4), minGain: trial % 2 ? 0.01 : 1e-4 });
      const weights = Array.from({ length: features }, () => (rng() < 0.5 ? rng() : 0));
      const counts = Array.from({ length: features * bins * 2 }, () => 0);
      let n = 0;
      let pos = 0;
      let last = t.lastCheck;
      for (let k = 0; k < 4000 && t.splits === 0; k++) {
        const x = Array.from({ length: features }, () => (trial % 3 ? Math.floor(rng() * 4) / 4 : rng()));
        const z = x.reduce((a, v, f) => a + weights[f] * (v > 0.5 ? 1 : -1), 0);
        const y = rng() < 1 / (1 + Math.exp(-2 * z));
        t.learn(x, y);
        n++;
        if (y) pos++;
        for (let f = 0; f < features; f++) counts[(f * bins + t.bin(x[f])) * 2 + (y ? 1 : 0)]++;
        if (t.lastCheck === last) continue;
        last = t.lastCheck;
        checks++;
        if (last!.reason === 'pure') continue;
        const h = entropy(pos, n);
        const perFeature = Array.from({ length: features }, (_, f) => {
          let best = -1;
          let edge = -1;
          let ln = 0;
          let lp = 0;
          for (let b = 0; b < bins - 1; b++) {
            const inBin = counts[(f * bins + b) * 2] + counts[(f * bins + b) * 2 + 1];
            ln += inBin;
            lp += counts[(f * bins + b) * 2 + 1];
            if (ln === 0 || n - ln === 0 || (inBin === 0 && b > 0)) continue;
            const g = h - (ln / n) * entropy(lp, ln) - ((n - ln) / n) * entropy(pos - lp, n - ln);
            if (g > best) [best, edge] = [g, b];
          }
          return { best, edge };
        });
        const top = perFeature.reduce((a, c, f) => (c.best > perFeature[a].best ? f : a), 0);
        const second = Math.max(-1, ...perFeature.filter((_, f) => f !== top).map((c) => c.best));
        expect(last).toMatchObject({ n, feature: perFeature[top].best < 0 ? -1 : top, gain: Math.max(0, perFeature[top].best), second: Math.max(0, second) });
        if (perFeature[top].best >= 0) expect(last!.threshold).toBe((perFeature[top].edge + 1) / bins);
      }
    }
    expect(checks).toBeGreaterThan(100);
  });
  it('learnBinsMany learns as learnBins one sample after another (same checks, splits and counters), for any feature count', () => {
    // (fewer than eight features, eight as DPNC has, and eight and more)
    for (const F of [4, 8, 19]) {
      const rng = seedrandom(`many-${F}`);
      const o = { features: F, bins: 8, grace: 40, tau: 0.1 };
      const one = new HoeffdingTree(o);
      const many = new HoeffdingTree(o);
      for (let batch = 0; batch < 60; batch++) {
        const count = Math.floor(rng() * 200);
        const bins = new Uint8Array(count * F);
        const labels = new Uint8Array(count);
        for (let j = 0; j < count; j++) {
          for (let f = 0; f < F; f++) bins[j * F + f] = Math.floor(rng() * 8);
          labels[j] = rng() < (bins[j * F + (batch % F)] < 3 ? 0.8 : 0.1) ? 1 : 0;
          one.learnBins(bins, j * F, labels[j] === 1);
        }
        many.learnBinsMany(bins, count, labels);
        expect([many.seen, many.correct, many.positives, many.splits]).toEqual([one.seen, one.correct, one.positives, one.splits]);
        expect(many.lastCheck).toEqual(one.lastCheck);
      }
      expect(many.splits).toBeGreaterThan(0);
      expect(many.structure()).toEqual(one.structure());
      for (let j = 0; j < 200; j++) {
        const x = Uint8Array.from({ length: F }, () => Math.floor(rng() * 8));
        expect(many.probabilityOfBins(x, 0)).toBe(one.probabilityOfBins(x, 0));
      }
    }
  });
});

describe('Hoeffding tree: reachesAbove', () => {
  it('answers whether some sample with feature f in bin v reaches a leaf above the threshold (every sample enumerated)', () => {
    const F = 3;
    const B = 4;
    const rng = seedrandom('reaches-above');
    const tree = new HoeffdingTree({ features: F, bins: B, grace: 30, tau: 0.2 });
    const x = new Uint8Array(F);
    for (let j = 0; j < 20000; j++) {
      for (let f = 0; f < F; f++) x[f] = Math.floor(rng() * B);
      tree.learnBins(x, 0, rng() < (x[0] < 2 ? (x[1] === 3 ? 0.9 : 0.6) : x[2] > 1 ? 0.45 : 0.05));
    }
    expect(tree.structure().length).toBeGreaterThan(1);
    let yes = 0;
    let no = 0;
    for (const threshold of [0, 0.05, 0.3, 0.5, 0.55, 0.7, 0.95, 1]) {
      for (let f = 0; f < F; f++) {
        for (let v = 0; v < B; v++) {
          let any = false;
          for (let k = 0; k < B ** F; k++) {
            for (let g = 0, r = k; g < F; g++, r = Math.floor(r / B)) x[g] = r % B;
            if (x[f] !== v) continue;
            if (tree.probabilityOfBins(x, 0) > threshold) any = true;
          }
          expect(tree.reachesAbove(f, v, threshold)).toBe(any);
          if (any) yes++;
          else no++;
        }
      }
    }
    expect(yes).toBeGreaterThan(0);
    expect(no).toBeGreaterThan(0);
  });
});

describe('Hoeffding tree: split checks skipped by the gain bound', () => {
  /** n·I of a 2x2 table (class y, side s), in bits */
  const nI = (t: number[][]) => {
    const g = (x: number) => (x > 0 ? x * Math.log2(x) : 0);
    const ny = [t[0][0] + t[0][1], t[1][0] + t[1][1]];
    const ns = [t[0][0] + t[1][0], t[0][1] + t[1][1]];
    return g(t[0][0]) + g(t[0][1]) + g(t[1][0]) + g(t[1][1]) - g(ny[0]) - g(ny[1]) - g(ns[0]) - g(ns[1]) + g(ny[0] + ny[1]);
  };

  it('gainGrowth is (x+1)·log2(x+1) − x·log2(x), rising', () => {
    for (const x of [0, 1, 2, 7, 100, 12345]) {
      const direct = (x + 1) * Math.log2(x + 1) - (x > 0 ? x * Math.log2(x) : 0);
      expect(gainGrowth(x)).toBeCloseTo(direct, 9);
      expect(gainGrowth(x + 1)).toBeGreaterThan(gainGrowth(x));
    }
  });

  it('gainCapAfter bounds n·I of every split of a leaf after samples are added', () => {
    // by hand: one positive left, one negative right (n·I = 2 bits); a positive added on the left
    // gives 2 positives left, 1 negative right: n·I = 3·h(1/3) = 3·log2(3) − 2, what the bound says
    expect(nI([[0, 1], [2, 0]])).toBeCloseTo(3 * Math.log2(3) - 2, 12);
    expect(gainCapAfter(2, 2, 1, 3, 2)).toBeCloseTo(3 * Math.log2(3) - 2, 8);
    const rng = seedrandom('cap');
    for (let trial = 0; trial < 4000; trial++) {
      const scale = [3, 30, 1000, 1e5][trial % 4];
      // class y, side s: a random table, then k samples added to random cells (skewed toward one class at times)
      const t = [0, 1].map(() => [0, 1].map(() => Math.floor(rng() * scale)));
      const n0 = t[0][0] + t[0][1] + t[1][0] + t[1][1];
      const pos0 = t[1][0] + t[1][1];
      const cap0 = nI(t);
      const k = 1 + Math.floor(rng() * 300);
      const pPos = rng() < 0.5 ? 0.05 : rng();
      const pLeft = rng();
      for (let j = 0; j < k; j++) t[rng() < pPos ? 1 : 0][rng() < pLeft ? 0 : 1]++;
      const n1 = n0 + k;
      const pos1 = t[1][0] + t[1][1];
      const cap = gainCapAfter(cap0, n0, pos0, n1, pos1);
      expect(nI(t)).toBeLessThanOrEqual(cap);
    }
  });

  it('makes the same checks decide the same: splits, counters and answers equal those of computing every check', () => {
    let skipped = 0;
    let splits = 0;
    for (let trial = 0; trial < 8; trial++) {
      const rng = seedrandom(`skip-${trial}`);
      const F = 2 + (trial % 7);
      const bins = [4, 8, 16][trial % 3];
      const o = { features: F, bins, grace: [10, 50, 200][trial % 3], tau: [0.05, 0.01, 0.2][trial % 3], minGain: [0.01, 0.002, 0.03][trial % 3], maxDepth: 3 + (trial % 4) };
      const exact = new HoeffdingTree({ ...o, exactChecks: true });
      const fast = new HoeffdingTree(o);
      // a weak signal on one feature, switched on part way (splits come late, after many checks)
      const signal = trial % F;
      for (let batch = 0; batch < 120; batch++) {
        const count = Math.floor(rng() * 600);
        const x = new Uint8Array(count * F);
        const labels = new Uint8Array(count);
        for (let j = 0; j < count; j++) {
          for (let f = 0; f < F; f++) x[j * F + f] = Math.floor(rng() * bins);
          const strong = batch > 40 && x[j * F + signal] < bins / 4;
          labels[j] = rng() < (strong ? 0.3 : 0.05) ? 1 : 0;
        }
        exact.learnBinsMany(x, count, labels);
        fast.learnBinsMany(x, count, labels);
        expect([fast.seen, fast.correct, fast.positives, fast.splits]).toEqual([exact.seen, exact.correct, exact.positives, exact.splits]);
        expect(fast.structure()).toEqual(exact.structure());
      }
      for (let j = 0; j < 300; j++) {
        const x = Uint8Array.from({ length: F }, () => Math.floor(rng() * bins));
        expect(fast.probabilityOfBins(x, 0)).toBe(exact.probabilityOfBins(x, 0));
      }
      expect(exact.checksSkipped).toBe(0);
      skipped += fast.checksSkipped;
      splits += exact.splits;
    }
    expect(skipped).toBeGreaterThan(1000);
    expect(splits).toBeGreaterThanOrEqual(8);
  });
});

describe('Hoeffding tree: counts kept per pair of features', () => {
  it('learns as one sample after another for 16 bins and 8 features (the word path), odd feature counts and more than 16 bins', () => {
    // learnBinsMany reads 8 features of 16 bins as two words and counts pairs; learnBins counts them one
    // by one through the generic path; with 20 bins the counts are kept per feature
    for (const [F, bins] of [[8, 16], [5, 16], [3, 6], [8, 20]] as const) {
      const rng = seedrandom(`pairs-${F}-${bins}`);
      const o = { features: F, bins, grace: 30, tau: 0.1, exactChecks: true };
      const one = new HoeffdingTree(o);
      const many = new HoeffdingTree(o);
      for (let batch = 0; batch < 40; batch++) {
        const count = Math.floor(rng() * 200);
        const x = new Uint8Array(count * F);
        const labels = new Uint8Array(count);
        for (let j = 0; j < count; j++) {
          for (let f = 0; f < F; f++) x[j * F + f] = Math.floor(rng() * bins);
          labels[j] = rng() < (x[j * F + (batch % F)] < bins / 3 ? 0.8 : 0.1) ? 1 : 0;
          one.learnBins(x, j * F, labels[j] === 1);
        }
        many.learnBinsMany(x, count, labels);
        expect(many.lastCheck).toEqual(one.lastCheck);
        expect(many.structure()).toEqual(one.structure());
      }
      expect(many.splits).toBeGreaterThan(0);
    }
  });
});

describe('Hoeffding tree: the route table', () => {
  it('sends every sample to the leaf a walk from the root reaches, with splits on one, two and more features', () => {
    // (the table is used while the splits test at most two features; walk() is the from-the-root reference)
    type Inner = { findBins(b: ArrayLike<number>, o: number): number; walk(b: ArrayLike<number>, o: number): number; routeAll: boolean };
    const kinds = new Set<string>();
    for (let trial = 0; trial < 12; trial++) {
      const rng = seedrandom(`route-${trial}`);
      const F = 3 + (trial % 6);
      const bins = [16, 8, 5][trial % 3];
      const t = new HoeffdingTree({ features: F, bins, grace: 40, tau: 0.05, minGain: 0.01, maxDepth: 6 });
      const inner = t as unknown as Inner;
      // the label depends on one, two or three features
      const uses = 1 + (trial % 3);
      for (let batch = 0; batch < 60; batch++) {
        const count = 300;
        const x = new Uint8Array(count * F);
        const labels = new Uint8Array(count);
        for (let j = 0; j < count; j++) {
          for (let f = 0; f < F; f++) x[j * F + f] = Math.floor(rng() * bins);
          let hot = 0;
          for (let f = 0; f < uses; f++) if (x[j * F + f] < bins / 2) hot++;
          labels[j] = rng() < 0.1 + 0.3 * hot ? 1 : 0;
        }
        t.learnBinsMany(x, count, labels);
        for (let j = 0; j < count; j++) expect(inner.findBins(x, j * F)).toBe(inner.walk(x, j * F));
      }
      const used = new Set(t.structure().map((n) => n.feature)).size;
      kinds.add(used > 2 ? 'walk' : `table-${used}`);
      expect(inner.routeAll).toBe(used > 2);
    }
    expect([...kinds].sort()).toEqual(['table-1', 'table-2', 'walk']);
  });
});
