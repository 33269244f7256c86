// FP16 -> FP32 of n consecutive values: F16C where the CPU has it (checked at run time),
// else common/half-bits.h. Both are exact, so both give the same floats.
#pragma once
#include <cstddef>
#include <cstdint>
#include "../common/half-bits.h"
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HIL_HOST_HALF_ROW_F16C 1
#endif

namespace hil::host {

#ifdef HIL_HOST_HALF_ROW_F16C
__attribute__((target("avx,f16c"))) inline void halfRowF16c(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
}
#endif

inline void halfRowToFloat(const uint16_t* src, float* dst, size_t n) {
#ifdef HIL_HOST_HALF_ROW_F16C
  static const bool f16c = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  if (f16c) {
    halfRowF16c(src, dst, n);
    return;
  }
#endif
  for (size_t i = 0; i < n; ++i) dst[i] = halfToFloat(src[i]);
}

}  // namespace hil::host
