/**
 * RotateKV's rotation of a block's K and V as the kernels compute it: an orthonormal Walsh-Hadamard
 * transform of every row of head_dim FP16 values, in FP32 with the kernels' butterfly order and
 * rounding (hil/native/host/hadamard.h, kernels/hadamard.cuh: a + b and a - b per stage, then times
 * fp32(1 / sqrt(n)), rounded to FP16), so that the expected bytes of a rotated block are bit-exact.
 */
import { floatToHalf, halfToFloat } from '../half.js';

const fr = Math.fround;

/** rows of n FP16 values (bits), rotated; a new array */
export function rotateHalves(v: Uint16Array, n: number): Uint16Array {
  const out = new Uint16Array(v.length);
  const row = new Float64Array(n);
  const norm = fr(1 / Math.sqrt(n));
  for (let o = 0; o < v.length; o += n) {
    for (let i = 0; i < n; i++) row[i] = halfToFloat(v[o + i]);
    for (let h = 1; h < n; h *= 2) {
      for (let i = 0; i < n; i += 2 * h) {
        for (let j = i; j < i + h; j++) {
          const a = row[j];
          const b = row[j + h];
          row[j] = fr(a + b);
          row[j + h] = fr(a - b);
        }
      }
    }
    for (let i = 0; i < n; i++) out[o + i] = floatToHalf(fr(row[i] * norm));
  }
  return out;
}
