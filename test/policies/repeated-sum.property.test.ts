/**
 * Property: RepeatedSum.add gives exactly what len additions of u one at a time give, over generated
 * sums that cross binades, stay in one, start at 0, add u half way between two doubles of x's binade
 * (the rounding then depends on x), u of 0, below half a step, above x, and negative terms between.
 */
import { describe, expect, it } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import { RepeatedSum } from '../../policies/repeated-sum.js';

const plain = (x: number, u: number, len: number): number => {
  for (let i = 0; i < len; i++) x += u;
  return x;
};

describe('RepeatedSum', () => {
  it('equals the plain loop over generated rows of runs and single terms', () => {
    const r = makeRng(11).next;
    const sum = new RepeatedSum();
    let jumps = 0;
    for (let row = 0; row < 400; row++) {
      // u: a float32 share (as the traces' remainders), an exact binary fraction, a tie maker, tiny, 0
      const kind = row % 5;
      const u = kind === 0 ? Math.fround(r() * 1e-3) : kind === 1 ? 2 ** -(1 + Math.floor(r() * 30)) : kind === 2 ? 3 * 2 ** -54 : kind === 3 ? 1e-300 * r() : 0;
      let a = row % 7 === 0 ? 0 : r() * 2 ** (Math.floor(r() * 20) - 10);
      let b = a;
      for (let run = 0; run < 60; run++) {
        const len = Math.floor(r() * (run % 4 === 0 ? 200 : 20));
        const before = a;
        a = plain(a, u, len);
        b = sum.add(b, u, len);
        expect(b).toBe(a);
        if (len > 1 && a !== before) jumps++;
        // a single term between runs: mostly positive, sometimes negative
        const x = (r() < 0.9 ? 1 : -0.5) * r() * (kind === 2 ? 2 ** -50 : 1e-2);
        a += x;
        b += x;
      }
    }
    expect(jumps).toBeGreaterThan(1000);
  });

  it('adds one at a time where u is half way between two doubles of the binade', () => {
    // x in [1, 2): doubles 2^-52 apart; 1 + 2^-53 is a tie, which goes to the even 1 (not 1 + 2^-52)
    const u = 2 ** -53;
    expect(new RepeatedSum().add(1, u, 5)).toBe(1);
    expect(plain(1, u, 5)).toBe(1);
    // 1.5 steps: ties that go up by 2 steps each time (to the even neighbour)
    expect(new RepeatedSum().add(1, 1.5 * 2 ** -52, 5)).toBe(plain(1, 1.5 * 2 ** -52, 5));
    // across a binade and from 0
    expect(new RepeatedSum().add(1 - 2 ** -40, 2 ** -45, 100)).toBe(plain(1 - 2 ** -40, 2 ** -45, 100));
    expect(new RepeatedSum().add(0, 0.1, 37)).toBe(plain(0, 0.1, 37));
  });
});
