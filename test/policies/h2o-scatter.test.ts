import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { scatterAdd } from '../../policies/h2o.js';

describe('H2O score scatter', () => {
  it('equals the plain loop bit for bit, with unique and with repeated indices', () => {
    const rng = seedrandom('scatter');
    for (let trial = 0; trial < 300; trial++) {
      const M = 5 + Math.floor(rng() * 200);
      const k = Math.floor(rng() * 40);
      const repeats = trial % 2 === 1;
      const idx = new Uint32Array(k);
      const mass = new Float32Array(k);
      const pool = Array.from({ length: M }, (_, i) => i);
      for (let i = 0; i < k; i++) {
        idx[i] = repeats ? Math.floor(rng() * Math.min(M, 6)) : pool.splice(Math.floor(rng() * pool.length), 1)[0]!;
        mass[i] = Math.fround(rng() / 7);
      }
      const base = Math.floor(rng() * 3) * M;
      const u = rng() / 1000;
      const a = Float64Array.from({ length: 3 * M }, () => rng());
      const b = a.slice();
      scatterAdd(a, base, idx, mass, u);
      for (let i = 0; i < k; i++) b[base + idx[i]!] += mass[i]! - u;
      expect([...a]).toEqual([...b]);
    }
  });
});
