// y[m] = sum_k W[m][k] * x[k]; W FP16 row-major [rows][cols], x and y FP32, FP32 accumulation.
// Summation order (the same on every path, so the result does not depend on the CPU): eight
// partial sums, lane j holding k = j, j + 8, j + 16, ... in order up to the last multiple of 8;
// the lanes are added as ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)); then the tail
// k = 8*floor(cols/8) .. cols-1 is added in order. Products and sums are separate FP32
// operations (no fused multiply-add).
// gemvRows picks the AVX + F16C path at run time where the CPU has it, else plain C++; both
// give the same bits. Rows are independent: any split of [0, rows) across threads gives the
// same y.
#pragma once
#include <cstddef>
#include <cstdint>
#include "../common/half-bits.h"
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HIL_HOST_X86_SIMD 1
#endif

namespace hil::host {

inline float gemvRowPortable(const uint16_t* row, const float* x, size_t cols) {
  float l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const size_t c8 = cols / 8 * 8;
  for (size_t k = 0; k < c8; k += 8) {
    for (int j = 0; j < 8; ++j) l[j] += halfToFloat(row[k + j]) * x[k + j];
  }
  float acc = ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
  for (size_t k = c8; k < cols; ++k) acc += halfToFloat(row[k]) * x[k];
  return acc;
}

inline void gemvRowsPortable(const uint16_t* w, const float* x, float* y, size_t r0, size_t r1, size_t cols) {
  for (size_t m = r0; m < r1; ++m) y[m] = gemvRowPortable(w + m * cols, x, cols);
}

#ifdef HIL_HOST_X86_SIMD
__attribute__((target("avx,f16c"))) inline float gemvReduce8(__m256 s) {
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));  // (l0+l4, l1+l5, l2+l6, l3+l7)
  const __m128 u = _mm_add_ps(t, _mm_movehl_ps(t, t));                                   // (t0+t2, t1+t3, ...)
  return _mm_cvtss_f32(_mm_add_ss(u, _mm_shuffle_ps(u, u, 1)));                          // u0 + u1
}

// Four rows at a time (independent chains for the adders); each row's order is as above.
__attribute__((target("avx,f16c"))) inline void gemvRowsAvx(const uint16_t* w, const float* x, float* y, size_t r0,
                                                           size_t r1, size_t cols) {
  const size_t c8 = cols / 8 * 8;
  size_t m = r0;
  for (; m + 4 <= r1; m += 4) {
    const uint16_t* a = w + m * cols;
    const uint16_t* b = a + cols;
    const uint16_t* c = b + cols;
    const uint16_t* d = c + cols;
    __m256 sa = _mm256_setzero_ps(), sb = sa, sc = sa, sd = sa;
    for (size_t k = 0; k < c8; k += 8) {
      const __m256 xv = _mm256_loadu_ps(x + k);
      sa = _mm256_add_ps(sa, _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k))), xv));
      sb = _mm256_add_ps(sb, _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k))), xv));
      sc = _mm256_add_ps(sc, _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + k))), xv));
      sd = _mm256_add_ps(sd, _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d + k))), xv));
    }
    float ya = gemvReduce8(sa), yb = gemvReduce8(sb), yc = gemvReduce8(sc), yd = gemvReduce8(sd);
    for (size_t k = c8; k < cols; ++k) {
      ya += _cvtsh_ss(a[k]) * x[k];
      yb += _cvtsh_ss(b[k]) * x[k];
      yc += _cvtsh_ss(c[k]) * x[k];
      yd += _cvtsh_ss(d[k]) * x[k];
    }
    y[m] = ya;
    y[m + 1] = yb;
    y[m + 2] = yc;
    y[m + 3] = yd;
  }
  for (; m < r1; ++m) {
    const uint16_t* a = w + m * cols;
    __m256 sa = _mm256_setzero_ps();
    for (size_t k = 0; k < c8; k += 8) {
      sa = _mm256_add_ps(sa, _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k))), _mm256_loadu_ps(x + k)));
    }
    float ya = gemvReduce8(sa);
    for (size_t k = c8; k < cols; ++k) ya += _cvtsh_ss(a[k]) * x[k];
    y[m] = ya;
  }
}

inline bool cpuHasAvxF16c() {
  static const bool has = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return has;
}
#endif

// Rows [r0, r1) of y.
inline void gemvRows(const uint16_t* w, const float* x, float* y, size_t r0, size_t r1, size_t cols) {
#ifdef HIL_HOST_X86_SIMD
  if (cpuHasAvxF16c()) {
    gemvRowsAvx(w, x, y, r0, r1, cols);
    return;
  }
#endif
  gemvRowsPortable(w, x, y, r0, r1, cols);
}

inline void gemv(const uint16_t* w, const float* x, float* y, size_t rows, size_t cols) {
  gemvRows(w, x, y, 0, rows, cols);
}

}  // namespace hil::host
