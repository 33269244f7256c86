// The arithmetic of group-wise asymmetric quantization, spelled out once so every
// implementation (CUDA, host, hil/reference/quantize.ts) rounds identically:
//   mn, mx   = min, max of the group (FP16 inputs, compared as FP32)
//   range    = fp32(mx - mn);  scale32 = fp32(range / qmax);  scale = fp16_rn(scale32)
//   zero     = fp16(mn + 0.0f)   (exact; +0.0f turns -0 into +0)
//   code     = clamp(rint_even(fp32(x - zero) / fp32(scale)), 0, qmax), 0 when scale == 0
//   x'       = fp32(zero + code * scale)  (code * scale is exact in FP32)
#pragma once
#include <cmath>
#include <cstddef>
#include "hd.h"

namespace hil {

HIL_HD int qmaxForBits(int bits) { return (1 << bits) - 1; }

HIL_HD int quantCode(float x, float zero, float scale, int qmax) {
  if (!(scale > 0.0f)) return 0;
  const float r = rintf((x - zero) / scale);
  return r < 0.0f ? 0 : (r > static_cast<float>(qmax) ? qmax : static_cast<int>(r));
}

// Code i of a b-bit stream (common/kv-format.h): bits [i*b, i*b + b), read from the one or two
// bytes that hold them (a second byte only when the code straddles a byte boundary, b = 3).
HIL_HD unsigned codeAt(const unsigned char* codes, size_t i, int bits) {
  const size_t bit = i * static_cast<size_t>(bits);
  const unsigned shift = static_cast<unsigned>(bit & 7u);
  unsigned w = codes[bit >> 3];
  if (shift + bits > 8u) w |= static_cast<unsigned>(codes[(bit >> 3) + 1]) << 8;
  return (w >> shift) & ((1u << bits) - 1u);
}

// Eight codes of b bits packed into the b bytes they fill (little-endian, code j at bits j*b).
HIL_HD unsigned long long packEight(const int (&c)[8], int bits) {
  unsigned long long w = 0;
  for (int j = 0; j < 8; ++j) w |= static_cast<unsigned long long>(c[j]) << (j * bits);
  return w;
}

}  // namespace hil
