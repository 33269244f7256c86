// Reference Walsh-Hadamard transform in float64, normalised by 1/sqrt(n) (orthonormal,
// its own inverse), over each row of length n.

export function hadamardRef(data: ArrayLike<number>, rows: number, n: number): Float64Array {
  const out = Float64Array.from(data);
  for (let r = 0; r < rows; r++) {
    const o = r * n;
    for (let h = 1; h < n; h *= 2) {
      for (let i = 0; i < n; i += 2 * h) {
        for (let j = i; j < i + h; j++) {
          const a = out[o + j]!;
          const b = out[o + j + h]!;
          out[o + j] = a + b;
          out[o + j + h] = a - b;
        }
      }
    }
    const s = 1 / Math.sqrt(n);
    for (let i = 0; i < n; i++) out[o + i]! *= s;
  }
  return out;
}
