// The arithmetic of group-wise asymmetric quantization, spelled out once so every
// implementation (CUDA, host, hil/reference/quantize.ts) rounds identically:
//   mn, mx   = min, max of the group (FP16 inputs, compared as FP32)
//   range    = fp32(mx - mn);  scale32 = fp32(range / qmax);  scale = fp16_rn(scale32)
//   zero     = fp16(mn + 0.0f)   (exact; +0.0f turns -0 into +0)
//   code     = clamp(rint_even(fp32(x - zero) / fp32(scale)), 0, qmax), 0 when scale == 0
//   x'       = fp32(zero + code * scale)  (code * scale is exact in FP32)
#pragma once
#include <cmath>
#include "hd.h"

namespace hil {

HIL_HD int qmaxForBits(int bits) { return (1 << bits) - 1; }

HIL_HD int quantCode(float x, float zero, float scale, int qmax) {
  if (!(scale > 0.0f)) return 0;
  const float r = rintf((x - zero) / scale);
  return r < 0.0f ? 0 : (r > static_cast<float>(qmax) ? qmax : static_cast<int>(r));
}

}  // namespace hil
