// Reference group-wise asymmetric quantization. It reproduces the native arithmetic
// (FP32 operations via Math.fround, FP16 scale/zero, round-half-even) so codes and meta
// match the native kernels bit for bit. See hil/native/common/quant-math.h.
import { floatToHalf, halfToFloat } from '../half.js';

const fr = Math.fround;

/** rintf: round half to even. */
export function rintEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

export interface Quantized {
  codes: Uint8Array;
  /** (scale, zero) FP16 bit pairs, one per group. */
  meta: Uint16Array;
}

export function quantizeRef(src: Uint16Array, bits: number, groupSize: number): Quantized {
  const n = src.length;
  const qmax = (1 << bits) - 1;
  const groups = n / groupSize;
  const codes = new Uint8Array((n * bits) / 8);
  const meta = new Uint16Array(groups * 2);
  const x = new Float64Array(groupSize);
  for (let g = 0; g < groups; g++) {
    let mn = Infinity;
    let mx = -Infinity;
    for (let i = 0; i < groupSize; i++) {
      const v = halfToFloat(src[g * groupSize + i]!);
      x[i] = v;
      if (v < mn) mn = v;
      if (v > mx) mx = v;
    }
    const scale32 = fr(fr(mx - mn) / qmax);
    const scaleH = floatToHalf(scale32);
    const zeroH = floatToHalf(mn + 0);
    meta[2 * g] = scaleH;
    meta[2 * g + 1] = zeroH;
    const scale = halfToFloat(scaleH);
    const zero = halfToFloat(zeroH);
    for (let i = 0; i < groupSize; i++) {
      let c = 0;
      if (scale > 0) c = Math.min(qmax, Math.max(0, rintEven(fr(fr(x[i]! - zero) / scale))));
      putCode(codes, g * groupSize + i, bits, c);
    }
  }
  return { codes, meta };
}

/** ORs code c of element i into a b-bit little-endian bit stream (hil/kv-format.ts). */
export function putCode(codes: Uint8Array, i: number, bits: number, c: number): void {
  const bit = i * bits;
  const byte = bit >> 3;
  const shift = bit & 7;
  codes[byte]! |= (c << shift) & 0xff;
  if (shift + bits > 8) codes[byte + 1]! |= c >> (8 - shift);
}

/** Code of element i of a b-bit little-endian bit stream. */
export function codeAt(codes: Uint8Array, i: number, bits: number): number {
  const bit = i * bits;
  const byte = bit >> 3;
  const shift = bit & 7;
  const w = shift + bits > 8 ? codes[byte]! | (codes[byte + 1]! << 8) : codes[byte]!;
  return (w >> shift) & ((1 << bits) - 1);
}

/** The value the native kernels use for element i: fp32(zero + code * scale). */
export function dequantValueRef(codes: Uint8Array, meta: Uint16Array, i: number, bits: number, groupSize: number): number {
  const g = Math.floor(i / groupSize);
  return fr(halfToFloat(meta[2 * g + 1]!) + codeAt(codes, i, bits) * halfToFloat(meta[2 * g]!));
}

export function dequantizeRef(q: Quantized, n: number, bits: number, groupSize: number): Uint16Array {
  const out = new Uint16Array(n);
  for (let i = 0; i < n; i++) out[i] = floatToHalf(dequantValueRef(q.codes, q.meta, i, bits, groupSize));
  return out;
}
