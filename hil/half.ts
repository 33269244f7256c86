// IEEE binary16 <-> number conversion on raw bits (round to nearest even), matching
// hil/native/common/half-bits.h and CUDA's __float2half_rn.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** the value of every FP16 bit pattern (exact in FP32), computed once */
export const HALF_VALUES = (() => {
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) t[h] = halfBitsValue(h);
  return t;
})();

export function halfToFloat(h: number): number {
  return HALF_VALUES[h & 0xffff]!;
}

function halfBitsValue(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const man = h & 0x3ff;
  if (exp === 0) return sign * man * 2 ** -24;
  if (exp === 31) return man ? NaN : sign * Infinity;
  return sign * (1 + man / 1024) * 2 ** (exp - 15);
}

/** Rounds a number to FP32 first, then to FP16 (the conversion the native code does). */
export function floatToHalf(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const abs = x & 0x7fffffff;
  if (abs >= 0x7f800000) return sign | (abs > 0x7f800000 ? 0x7e00 : 0x7c00);
  if (abs >= 0x477ff000) return sign | 0x7c00;
  const exp = (abs >>> 23) - 127;
  if (exp < -25) return sign;
  let man = (abs & 0x7fffff) | 0x800000;
  let shift: number;
  let base: number;
  if (exp < -14) {
    shift = 13 + (-14 - exp);
    base = 0;
  } else {
    shift = 13;
    base = (exp + 15) << 10;
    man &= 0x7fffff;
  }
  const kept = man >>> shift;
  const rem = man & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  let result = base + kept;
  if (rem > halfway || (rem === halfway && (kept & 1) === 1)) result += 1;
  return sign | result;
}

export function toHalfArray(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = floatToHalf(values[i]!);
  return out;
}

export function fromHalfArray(bits: Uint16Array): Float64Array {
  const out = new Float64Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = halfToFloat(bits[i]!);
  return out;
}
