// y[m] = sum_k W[m][k] * x[k]; W FP16 row-major [rows][cols], x and y FP32, FP32 accumulation.
#pragma once
#include <cstddef>
#include <cstdint>
#include "../common/half-bits.h"

namespace hil::host {

inline void gemv(const uint16_t* w, const float* x, float* y, size_t rows, size_t cols) {
  for (size_t m = 0; m < rows; ++m) {
    const uint16_t* row = w + m * cols;
    float acc = 0.0f;
    for (size_t k = 0; k < cols; ++k) acc += halfToFloat(row[k]) * x[k];
    y[m] = acc;
  }
}

}  // namespace hil::host
