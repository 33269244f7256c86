// INT3 codes: 8 codes per 3 bytes, little-endian bit stream (hil/kv-format.ts), by hand and against
// the float64 reference dequantization.
import { describe, expect, it } from 'vitest';
import { blockBytes, codesBytes, metaBytes, PRECISION_BITS } from '../../hil/kv-format.js';
import { floatToHalf, halfToFloat } from '../../hil/half.js';
import { codeAt, dequantizeRef, dequantValueRef, putCode, quantizeRef } from '../../hil/reference/quantize.js';

describe('INT3 bit stream', () => {
  it('packs codes 0..7 into 3 bytes by hand', () => {
    const codes = new Uint8Array(3);
    for (let i = 0; i < 8; i++) putCode(codes, i, 3, i);
    // word = sum i << 3i = 0b111_110_101_100_011_010_001_000 = 0xFAC688
    expect(Array.from(codes)).toEqual([0x88, 0xc6, 0xfa]);
    expect(Array.from({ length: 8 }, (_, i) => codeAt(codes, i, 3))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
  it('round-trips every code at every position of two words', () => {
    for (let seed = 0; seed < 8; seed++) {
      const want = Array.from({ length: 16 }, (_, i) => (i * 5 + seed) % 8);
      const codes = new Uint8Array(6);
      want.forEach((c, i) => putCode(codes, i, 3, c));
      expect(Array.from({ length: 16 }, (_, i) => codeAt(codes, i, 3))).toEqual(want);
    }
  });
  it('block bytes: 3/8 byte per element plus the same meta as other widths', () => {
    const g = { kvHeads: 2, blockTokens: 16, headDim: 128, groupSize: 128 };
    expect(PRECISION_BITS.int3).toBe(3);
    expect(codesBytes(g, 'int3')).toBe((2 * 16 * 128 * 3) / 8); // 1536
    expect(metaBytes(g)).toBe(32 * 4); // 128
    expect(blockBytes(g, 'int3')).toBe(2 * 1536 + 2 * 128); // 3328
    expect(blockBytes(g, 'int3')).toBeLessThan(blockBytes(g, 'int4'));
    expect(blockBytes(g, 'int3')).toBeGreaterThan(blockBytes(g, 'int2'));
  });
  it('quantizes a ramp to codes 0..7 and dequantizes to zero + code * scale', () => {
    // group of 8: values 0, 1, ..., 7 -> scale (7 - 0) / 7 = 1, zero 0, code i
    const src = Uint16Array.from({ length: 16 }, (_, i) => floatToHalf(i < 8 ? i : 2 * (15 - i)));
    const q = quantizeRef(src, 3, 8);
    expect(Array.from({ length: 8 }, (_, i) => codeAt(q.codes, i, 3))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // second group: 14, 12, ..., 0 -> scale 2, codes 7..0
    expect(Array.from({ length: 8 }, (_, i) => codeAt(q.codes, 8 + i, 3))).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
    expect(Array.from({ length: 16 }, (_, i) => dequantValueRef(q.codes, q.meta, i, 3, 8))).toEqual(Array.from({ length: 16 }, (_, i) => (i < 8 ? i : 2 * (15 - i))));
  });
  it('error of random values stays within half a step of each group', () => {
    let s = 12345;
    const rnd = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 4 - 2;
    const n = 32 * 40;
    const src = Uint16Array.from({ length: n }, () => floatToHalf(rnd()));
    const q = quantizeRef(src, 3, 32);
    const back = dequantizeRef(q, n, 3, 32);
    expect(back.length).toBe(n);
    for (let i = 0; i < n; i++) {
      const scale = halfToFloat(q.meta[2 * Math.floor(i / 32)]!);
      // half a step of rounding, plus the FP16 rounding of the scale (x 7 steps) and of the result
      const x = halfToFloat(src[i]!);
      expect(Math.abs(halfToFloat(back[i]!) - x)).toBeLessThanOrEqual(scale / 2 + 7 * scale * 2 ** -11 + Math.abs(x) * 2 ** -10 + 1e-6);
    }
  });
});
