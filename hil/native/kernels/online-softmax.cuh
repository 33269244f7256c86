// The online-softmax step every attention kernel and the split reduce share. Scores are in the
// log2 domain (q is scaled by softmaxScale * log2 e), so p = 2^(score - m).
//   raiseMax:   a running max (or reference) m takes in a new candidate and returns the factor
//               2^(m_old - m_new) that rescales everything accumulated against the old one;
//   addPartial: a partial state (max mi, sum li, accumulator ai, both relative to mi) is added,
//               rescaled, to sums relative to the common max m >= mi.
// Partial results in memory: per split and query head a (max, sum) pair (partMl) and D
// accumulators (partAcc), all relative to that max; a split that saw no tokens has max -inf.
#pragma once
#include <cmath>

namespace hil::cuda {

// 2^x with ex2.approx.ftz (the tensor-core kernels' exponent): -inf -> 0.
__device__ __forceinline__ float ex2Ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// m = max(m, candidate); returns 2^(old m - new m): 1 when m stays, 0 when m was -inf (nothing
// accumulated yet). m and candidate must not both be -inf (the factor would be NaN). FTZ: the
// tensor-core kernels' ex2Ftz, else exp2f.
template <bool FTZ = false>
__device__ __forceinline__ float raiseMax(float& m, float candidate) {
  const float mNew = fmaxf(m, candidate);
  const float alpha = FTZ ? ex2Ftz(m - mNew) : exp2f(m - mNew);
  m = mNew;
  return alpha;
}

// l += li * 2^(mi - m), a += ai * 2^(mi - m); nothing for a partial without tokens (mi = -inf).
__device__ __forceinline__ void addPartial(float& l, float& a, float m, float mi, float li, float ai) {
  if (mi == -INFINITY) return;
  const float f = exp2f(mi - m);
  l += li * f;
  a += ai * f;
}

}  // namespace hil::cuda
