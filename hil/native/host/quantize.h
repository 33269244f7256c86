// Group-wise asymmetric quantization on the CPU; semantics in common/quant-math.h.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include "../common/half-bits.h"
#include "../common/quant-math.h"

namespace hil::host {

// src: n FP16 values; codes: n*bits/8 bytes; meta: n/groupSize (scale, zero) FP16 pairs. Codes are
// packed 8 at a time into `bits` bytes (common/kv-format.h), for every width.
inline void quantize(const uint16_t* src, size_t n, int bits, int groupSize, uint8_t* codes,
                     uint16_t* meta) {
  const int qmax = qmaxForBits(bits);
  for (size_t g = 0; g < n / groupSize; ++g) {
    const uint16_t* x = src + g * groupSize;
    float mn = halfToFloat(x[0]), mx = mn;
    for (int i = 1; i < groupSize; ++i) {
      const float v = halfToFloat(x[i]);
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    const float range = mx - mn;
    const float scale32 = range / static_cast<float>(qmax);
    const uint16_t scaleH = floatToHalf(scale32);
    const uint16_t zeroH = floatToHalf(mn + 0.0f);
    meta[2 * g] = scaleH;
    meta[2 * g + 1] = zeroH;
    const float scale = halfToFloat(scaleH), zero = halfToFloat(zeroH);
    uint8_t* out = codes + g * groupSize * bits / 8;
    for (int i = 0; i < groupSize; i += 8) {
      int c[8];
      for (int j = 0; j < 8; ++j) c[j] = quantCode(halfToFloat(x[i + j]), zero, scale, qmax);
      const unsigned long long w = packEight(c, bits);
      for (int k = 0; k < bits; ++k) out[i / 8 * bits + k] = static_cast<uint8_t>(w >> (8 * k));
    }
  }
}

inline float dequantValue(const uint8_t* codes, const uint16_t* meta, size_t i, int bits,
                          int groupSize) {
  const unsigned code = codeAt(codes, i, bits);
  const size_t g = i / groupSize;
  return halfToFloat(meta[2 * g + 1]) + static_cast<float>(code) * halfToFloat(meta[2 * g]);
}

inline void dequantize(const uint8_t* codes, const uint16_t* meta, size_t n, int bits,
                       int groupSize, uint16_t* dst) {
  for (size_t i = 0; i < n; ++i) dst[i] = floatToHalf(dequantValue(codes, meta, i, bits, groupSize));
}

}  // namespace hil::host
