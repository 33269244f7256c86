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
  for (let g = 0; g < groups; g++) {
    const s0 = g * groupSize;
    let mn = Infinity;
    let mx = -Infinity;
    for (let i = s0; i < s0 + groupSize; i++) {
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
    for (let i = s0; i < s0 + groupSize; i++) {
      const x = fr(fr(T[src[i]!]! - zero) / scale);
      // round half to even, then clamp to [0, qmax]; NaN codes 0
      let r = Math.round(x);
      if (r - x === 0.5 && r % 2 !== 0) r -= 1;
      const c = r > 0 ? (r < qmax ? r : qmax) : 0;
      if (bits === 8) codes[i] = c;
      else if (bits === 4) codes[i >> 1]! |= c << ((i & 1) << 2);
      else if (bits === 2) codes[i >> 2]! |= c << ((i & 3) << 1);
      else putCode(codes, i, bits, c);
    }
  }
  return { codes, meta };
}
