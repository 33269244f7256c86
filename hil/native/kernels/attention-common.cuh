// What the attention kernels share besides the online softmax (online-softmax.cuh): the chunk
// size, the decoding of 8 consecutive elements of a row at each precision, the chunks a warp of a
// split owns, and the block's last step (merge the warps' states, store the output or the split's
// partial results).
// Quantized rows are used as zero + scale * code without expanding them: the K dot product is
// scale * (q . code) + zero * sum(q), and V accumulates (p * scale) * code plus p * zero.
#pragma once
#include <cfloat>
#include <type_traits>
#include "../common/attention-shape.h"
#include "cuda-util.cuh"
#include "online-softmax.cuh"

namespace hil::cuda {

constexpr int kChunkTokens = 16;
constexpr float kLog2e = 1.4426950408889634f;

// Raw bytes of 8 consecutive elements (dims) of one row: 16 B of FP16, 8 B of INT8,
// 4 B of INT4, 3 B of INT3, 2 B of INT2 (held in a uint2 / uint32). Loaded first, decoded later.
template <int P>
struct Raw {
  using T = typename std::conditional<P == kFp16, uint4, typename std::conditional<P == kInt8, uint2, uint32_t>::type>::type;
};

// Values for FP16, codes for INT-b.
template <int P>
__device__ __forceinline__ void decode(const typename Raw<P>::T& raw, float (&x)[8]) {
  if constexpr (P == kFp16) {
    const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __half22float2(h[i]);
      x[2 * i] = f.x;
      x[2 * i + 1] = f.y;
    }
  } else if constexpr (P == kInt8) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      x[i] = __int_as_float(0x4B000000 | ((raw.x >> (8 * i)) & 0xffu)) - 8388608.0f;
      x[4 + i] = __int_as_float(0x4B000000 | ((raw.y >> (8 * i)) & 0xffu)) - 8388608.0f;
    }
  } else {
    constexpr int B = P == kInt4 ? 4 : P == kInt3 ? 3 : 2;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      // exact small-integer to float: OR the code into the mantissa of 2^23, subtract 2^23
      x[i] = __int_as_float(0x4B000000 | ((raw >> (B * i)) & ((1u << B) - 1))) - 8388608.0f;
    }
  }
}

// The chunks (kChunkTokens tokens of one kv head) a warp of a split owns: first + k * step, k < n.
// Split x owns the granules x, x + splits, x + 2 * splits, ... of W chunks (one per warp), so that
// every split sees the table's precision mix (a mixed table keeps its FP16 blocks together: sinks
// and recent tokens) and no split lags the others. W = 1: every warp of the block takes all of the
// split's chunks (head warps).
struct WarpChunks {
  int first, step, n;
};
__device__ __forceinline__ WarpChunks warpChunks(int contextTokens, int split, int splits, int warp, int W) {
  const int totalChunks = (contextTokens + kChunkTokens - 1) / kChunkTokens;
  WarpChunks c;
  c.first = split * W + warp;
  c.step = splits * W;
  c.n = c.first < totalChunks ? (totalChunks - c.first + c.step - 1) / c.step : 0;
  return c;
}

// The last step of every attention kernel's block: merge its W warps' partial softmax states per
// query head j < gq and dim d (running max sM, sum sL, accumulator sAcc laid out [W][J][D]), then
// write the normalized output (one split) or this split's partials for the reduce. `bad`: an
// unusable block-table entry was seen; the output becomes NaN.
template <int W, int J>
__device__ __forceinline__ void mergeWarpsAndStore(const float (&sM)[W][J], const float (&sL)[W][J], const float* sAcc, int D,
                                                   int gq, int h, int split, int qHeads, bool bad, float* __restrict__ out,
                                                   float* __restrict__ partAcc, float* __restrict__ partMl) {
  for (int idx = threadIdx.x; idx < gq * D; idx += blockDim.x) {
    const int j = idx / D, d = idx % D;
    float m = -INFINITY;
    for (int w = 0; w < W; ++w) m = fmaxf(m, sM[w][j]);
    float l = 0.0f, a = 0.0f;
    if (m != -INFINITY) {
      for (int w = 0; w < W; ++w) addPartial(l, a, m, sM[w][j], sL[w][j], sAcc[(w * J + j) * D + d]);
    }
    const int hq = h * gq + j;
    if (bad) {
      // NaN in the sum and the accumulator, with a finite max: the reduce skips splits whose max
      // is -inf (no tokens), so a split that saw only bad entries must not look empty
      a = NAN;
      l = NAN;
      if (m == -INFINITY) m = 0.0f;
    }
    if (gridDim.x == 1) {
      out[static_cast<size_t>(hq) * D + d] = a / l;
    } else {
      partAcc[(static_cast<size_t>(split) * qHeads + hq) * D + d] = a;
      if (d == 0) {
        partMl[(static_cast<size_t>(split) * qHeads + hq) * 2] = m;
        partMl[(static_cast<size_t>(split) * qHeads + hq) * 2 + 1] = l;
      }
    }
  }
}

}  // namespace hil::cuda
