// Reference GEMV in float64: y[m] = sum_k W[m][k] x[k], W given as FP16 bits.
import { halfToFloat } from '../half.js';

export function gemvRef(w: Uint16Array, x: ArrayLike<number>, rows: number, cols: number): Float64Array {
  const y = new Float64Array(rows);
  for (let m = 0; m < rows; m++) {
    let acc = 0;
    for (let k = 0; k < cols; k++) acc += halfToFloat(w[m * cols + k]!) * x[k]!;
    y[m] = acc;
  }
  return y;
}
