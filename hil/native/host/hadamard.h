// Fast Walsh-Hadamard transform over rows of length n (a power of two), normalised by
// 1/sqrt(n) so it is orthonormal and its own inverse. Butterfly order: stride 1, 2, 4, ...
// with (a + b, a - b) in FP32, then one multiply by fp32(1/sqrt(n)) — the CUDA kernel
// does the same operations in the same order.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>
#include "../common/half-bits.h"

namespace hil::host {

inline float hadamardNorm(int n) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(n))); }

inline void hadamardRow(float* v, int n) {
  for (int h = 1; h < n; h <<= 1) {
    for (int i = 0; i < n; i += 2 * h) {
      for (int j = i; j < i + h; ++j) {
        const float a = v[j], b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
    }
  }
  const float s = hadamardNorm(n);
  for (int i = 0; i < n; ++i) v[i] *= s;
}

inline void hadamardF32(float* data, size_t rows, int n) {
  for (size_t r = 0; r < rows; ++r) hadamardRow(data + r * n, n);
}

inline void hadamardF16(uint16_t* data, size_t rows, int n) {
  std::vector<float> row(n);
  for (size_t r = 0; r < rows; ++r) {
    uint16_t* x = data + r * n;
    for (int i = 0; i < n; ++i) row[i] = halfToFloat(x[i]);
    hadamardRow(row.data(), n);
    for (int i = 0; i < n; ++i) x[i] = floatToHalf(row[i]);
  }
}

}  // namespace hil::host
