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

  it('ties go to the even code as the reference has them', () => {
    // a group spanning [0, qmax]: scale 1, zero 0, so k + 0.5 is a tie between k and k + 1
    for (const bits of [2, 4, 8]) {
      const qmax = (1 << bits) - 1;
      const src = new Uint16Array(32);
      for (let i = 0; i < 32; i++) src[i] = floatToHalf(i === 0 ? 0 : i === 1 ? qmax : Math.min(qmax, (i % (qmax + 1)) + 0.5) - (i % 7 === 3 ? 1 : 0));
      const a = quantizeRef(src, bits, 32);
      const b = quantizeFast(src, bits, 32);
      expect(b.meta).toEqual(a.meta);
      expect(b.codes).toEqual(a.codes);
      // 0.5 codes 0 and 2.5 codes 2 (even), 1.5 codes 2
      const half = new Uint16Array([floatToHalf(0), floatToHalf(qmax), floatToHalf(0.5), floatToHalf(1.5), floatToHalf(2.5), 0, 0, 0]);
      const q = quantizeFast(half, bits, 8);
      const code = (i: number) => (q.codes[(i * bits) >> 3]! >> ((i * bits) & 7)) & qmax;
      expect([code(2), code(3), code(4)]).toEqual([0, 2, 2]);
    }
  });
});
