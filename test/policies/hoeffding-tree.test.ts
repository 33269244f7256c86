import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { HoeffdingTree } from '../../policies/hoeffding-tree.js';

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
