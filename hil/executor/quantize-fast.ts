/**
 * Group-wise quantization on the CPU for the bytes the executor writes before a run (and expects
 * after it): the same codes and (scale, zero) as hil/reference/quantize.ts `quantizeRef` bit for bit
 * (checked over generated inputs by test/hil/quantize-fast.test.ts), with the per-element work kept
 * to table lookups and FP32 rounding: one pass over a group for its range, one to code it, the codes
 * of 8, 4 and 2 bits written a byte at a time.
 */
import { floatToHalf, HALF_VALUES } from '../half.js';
import { putCode, type Quantized } from '../reference/quantize.js';

const fr = Math.fround;

export function quantizeFast(src: Uint16Array, bits: number, groupSize: number): Quantized {
  const n = src.length;
  const qmax = (1 << bits) - 1;
  const groups = n / groupSize;
  const codes = new Uint8Array((n * bits) / 8);
  const meta = new Uint16Array(groups * 2);
  const T = HALF_VALUES;
  // codes of 8, 4 and 2 bits are whole bytes per 1, 2 and 4 elements: a group that starts on a byte
  // is coded a byte at a time; other widths and group sizes go through putCode
  const perByte = bits === 8 ? 1 : bits === 4 ? 2 : bits === 2 ? 4 : 0;
  const packed = perByte !== 0 && groupSize % perByte === 0;
  for (let g = 0; g < groups; g++) {
    const s0 = g * groupSize;
    const s1 = s0 + groupSize;
    let mn = Infinity;
    let mx = -Infinity;
    for (let i = s0; i < s1; i++) {
      const v = T[src[i]!]!;
      if (v < mn) mn = v;
      if (v > mx) mx = v;
    }
    const scaleH = floatToHalf(fr(fr(mx - mn) / qmax));
    const zeroH = floatToHalf(mn + 0);
    meta[2 * g] = scaleH;
    meta[2 * g + 1] = zeroH;
    const scale = T[scaleH]!;
    const zero = T[zeroH]!;
    if (!(scale > 0)) continue; // every code 0 (the codes start zeroed)
    if (!packed) {
      for (let i = s0; i < s1; i++) putCode(codes, i, bits, codeOf(T[src[i]!]!, zero, scale, qmax));
    } else if (perByte === 1) {
      for (let i = s0; i < s1; i++) codes[i] = codeOf(T[src[i]!]!, zero, scale, qmax);
    } else if (perByte === 2) {
      for (let i = s0; i < s1; i += 2) codes[i >> 1] = codeOf(T[src[i]!]!, zero, scale, qmax) | (codeOf(T[src[i + 1]!]!, zero, scale, qmax) << 4);
    } else {
      for (let i = s0; i < s1; i += 4) {
        codes[i >> 2] =
          codeOf(T[src[i]!]!, zero, scale, qmax) |
          (codeOf(T[src[i + 1]!]!, zero, scale, qmax) << 2) |
          (codeOf(T[src[i + 2]!]!, zero, scale, qmax) << 4) |
          (codeOf(T[src[i + 3]!]!, zero, scale, qmax) << 6);
      }
    }
  }
  return { codes, meta };
}

/** a value's code: (v - zero) / scale in FP32, rounded half to even, clamped to [0, qmax]; NaN codes 0 */
function codeOf(v: number, zero: number, scale: number, qmax: number): number {
  const x = fr(fr(v - zero) / scale);
  // x is an FP32 value: x + 0.5 is exact in FP64, so floor(x + 0.5) is Math.round(x); a tie (r - x is
  // 0.5 only where |x| < 2^24, so r fits an int32) goes to the even neighbour
  let r = Math.floor(x + 0.5);
  if (r - x === 0.5 && (r & 1) !== 0) r -= 1;
  return r > 0 ? (r < qmax ? r : qmax) : 0;
}
