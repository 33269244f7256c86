// The executor's CPU quantizer gives the reference's codes and (scale, zero) bit for bit: random FP16
// groups of every width and group size, groups with one value (scale 0), NaN and infinite elements.
import { describe, expect, it } from 'vitest';
import { quantizeFast } from '../../hil/executor/quantize-fast.js';
import { floatToHalf } from '../../hil/half.js';
import { quantizeRef } from '../../hil/reference/quantize.js';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('executor quantizer against the reference', () => {
  it('same codes and meta over generated groups', () => {
    const rnd = lcg(7);
    for (const groupSize of [32, 64, 128]) {
      for (const bits of [2, 3, 4, 8]) {
        for (let trial = 0; trial < 12; trial++) {
          const n = groupSize * (1 + (trial % 5));
          const src = new Uint16Array(n);
          const scale = [1e-3, 0.5, 4, 300][trial % 4];
          for (let i = 0; i < n; i++) src[i] = trial % 6 === 5 ? Math.floor(rnd() * 65536) : floatToHalf((rnd() - 0.3) * scale);
          if (trial % 3 === 0) src.fill(floatToHalf(1.25), 0, groupSize); // a constant group: scale 0
          if (trial % 4 === 1) src[n - 1] = 0x7e00; // NaN
          if (trial % 4 === 2) src[0] = 0x7c00; // +inf
          const a = quantizeRef(src, bits, groupSize);
          const b = quantizeFast(src, bits, groupSize);
          expect(b.meta).toEqual(a.meta);
          expect(b.codes).toEqual(a.codes);
        }
      }
    }
  });
});
