// Decode attention over a paged, mixed-precision KV cache (layout: common/kv-format.h),
// flash-decoding style: grid (splits, kvHeads); each thread block streams its share of the
// context for one kv head and all of that head's query heads (GQA: every KV byte is read
// once), keeps an online softmax per query head, and writes a partial (max, sum, acc) that
// pagedAttentionReduce merges. With one split the block writes the output directly.
//
// Thread layout: a token row of D dims is read by D/8 lanes, 8 dims (16 bytes of FP16) each;
// a warp reads 256/D rows per step and a 16-token chunk in 16/(256/D) steps. Chunks never
// straddle blocks (blockTokens is a multiple of 16), so a chunk has one precision.
// Quantized rows are used as zero + scale * code without expanding them: the K dot product is
// scale * (q . code) + zero * sum(q), and V accumulates (p * scale) * code plus p * zero.
#pragma once
#include <cfloat>
#include <type_traits>
#include "../common/attention-shape.h"
#include "cuda-util.cuh"

namespace hil::cuda {

constexpr int kAttnWarps = 4;
constexpr int kChunkTokens = 16;
constexpr float kLog2e = 1.4426950408889634f;

// Raw bytes of 8 consecutive elements (dims) of one row: 16 B of FP16, 8 B of INT8,
// 4 B of INT4, 2 B of INT2 (held in a uint2 / uint32). Loaded first, decoded later, so all
// loads of a chunk are in flight together.
template <int P>
struct Raw {
  using T = typename std::conditional<P == kFp16, uint4, typename std::conditional<P == kInt8, uint2, uint32_t>::type>::type;
};

template <int P>
__device__ __forceinline__ typename Raw<P>::T loadRaw(const uint8_t* section, unsigned e) {
  if constexpr (P == kFp16) return __ldg(reinterpret_cast<const uint4*>(section + e * 2));
  else if constexpr (P == kInt8) return __ldg(reinterpret_cast<const uint2*>(section + e));
  else if constexpr (P == kInt4) return __ldg(reinterpret_cast<const unsigned int*>(section + e / 2));
  else return __ldg(reinterpret_cast<const unsigned short*>(section + e / 4));
}

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
    constexpr int B = P == kInt4 ? 4 : 2;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      // exact small-integer to float: OR the code into the mantissa of 2^23, subtract 2^23
      x[i] = __int_as_float(0x4B000000 | ((raw >> (B * i)) & ((1u << B) - 1))) - 8388608.0f;
    }
  }
}

__device__ __forceinline__ float2 loadMeta(const uint8_t* meta, unsigned group) {
  return __half22float2(__ldg(reinterpret_cast<const __half2*>(meta) + group));  // (scale, zero)
}

template <int D, int GQ>
struct AttnState {
  float m[GQ];       // running max (log2 domain), warp-uniform
  float l[GQ];       // this lane's share of the sum of exp
  float acc[GQ][8];  // this lane's 8 output dims, its share of tokens
  float zacc[GQ];    // sum of p * zero for this lane's quantized rows
};

// Processes one 16-token chunk at precision P for kv head h.
template <int P, int D, int GQ>
__device__ __forceinline__ void attendChunk(AttnState<D, GQ>& st, const float (&q)[GQ][8], const float (&qsum)[GQ],
                                            const uint8_t* block, const BlockGeometry& g, int h, int rowInBlock0,
                                            int validTokens) {
  constexpr int LPT = D / 8;          // lanes per token row
  constexpr int TPI = 32 / LPT;       // token rows per warp step
  constexpr int ITERS = kChunkTokens / TPI;
  const int lane = threadIdx.x % 32;
  const int sub = lane / LPT, dl = lane % LPT;
  const uint8_t* kSec = block;
  const uint8_t* vSec = block + vOffset(g, P);
  const uint8_t* kMeta = block + kMetaOffset(g, P);
  const uint8_t* vMeta = block + vMetaOffset(g, P);

  typename Raw<P>::T kr[ITERS], vr[ITERS];
  float2 km[ITERS], vm[ITERS];
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    const unsigned e = (static_cast<unsigned>(h) * g.blockTokens + rowInBlock0 + it * TPI + sub) * D + dl * 8;
    kr[it] = loadRaw<P>(kSec, e);
    vr[it] = loadRaw<P>(vSec, e);
    if constexpr (P != kFp16) {
      km[it] = loadMeta(kMeta, e / g.groupSize);
      vm[it] = loadMeta(vMeta, e / g.groupSize);
    }
  }
  float sc[GQ][ITERS];
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    const int tok = it * TPI + sub;
    float x[8];
    decode<P>(kr[it], x);
#pragma unroll
    for (int j = 0; j < GQ; ++j) {
      float d = 0.0f;
#pragma unroll
      for (int i = 0; i < 8; ++i) d = fmaf(q[j][i], x[i], d);
      if constexpr (P != kFp16) d = fmaf(km[it].x, d, km[it].y * qsum[j]);
#pragma unroll
      for (int o = LPT / 2; o > 0; o >>= 1) d += __shfl_xor_sync(kFullMask, d, o);
      sc[j][it] = tok < validTokens ? d : -INFINITY;
    }
  }
  float p[GQ][ITERS];
#pragma unroll
  for (int j = 0; j < GQ; ++j) {
    float cm = sc[j][0];
#pragma unroll
    for (int it = 1; it < ITERS; ++it) cm = fmaxf(cm, sc[j][it]);
#pragma unroll
    for (int o = LPT; o < 32; o <<= 1) cm = fmaxf(cm, __shfl_xor_sync(kFullMask, cm, o));
    const float mNew = fmaxf(st.m[j], cm);
    const float alpha = exp2f(st.m[j] - mNew);  // m = -inf at start: alpha = 0
    st.m[j] = mNew;
    st.l[j] *= alpha;
    st.zacc[j] *= alpha;
#pragma unroll
    for (int i = 0; i < 8; ++i) st.acc[j][i] *= alpha;
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      p[j][it] = exp2f(sc[j][it] - mNew);
      st.l[j] += p[j][it];
    }
  }
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    const bool valid = it * TPI + sub < validTokens;  // rows past the context may hold anything, even NaN
    float x[8];
    decode<P>(vr[it], x);
    const float s = P != kFp16 ? vm[it].x : 1.0f;
#pragma unroll
    for (int j = 0; j < GQ; ++j) {
      const float ps = valid ? p[j][it] * s : 0.0f;
      if constexpr (P != kFp16) st.zacc[j] = valid ? fmaf(p[j][it], vm[it].y, st.zacc[j]) : st.zacc[j];  // select: 0 * NaN is NaN
#pragma unroll
      for (int i = 0; i < 8; ++i) st.acc[j][i] = fmaf(ps, valid ? x[i] : 0.0f, st.acc[j][i]);
    }
  }
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
      for (int w = 0; w < W; ++w) {
        if (sM[w][j] == -INFINITY) continue;
        const float f = exp2f(sM[w][j] - m);
        l += sL[w][j] * f;
        a += sAcc[(w * J + j) * D + d] * f;
      }
    }
    const int hq = h * gq + j;
    if (bad) {
      // NaN in the sum and the accumulator, with a finite max: every reduce skips splits whose max
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

// grid (splits, kvHeads), block kAttnWarps * 32. GQ is the query heads per kv head rounded
// up to 1, 2, 4 or 8; `gq` is the real count.
template <int D, int GQ>
__global__ void __launch_bounds__(kAttnWarps * 32) pagedAttentionKernel(
    AttentionShape s, int gq, const uint8_t* __restrict__ arena, size_t arenaBytes,
    const BlockEntry* __restrict__ table, const float* __restrict__ q, int chunksPerSplit,
    float* __restrict__ partAcc, float* __restrict__ partMl, float* __restrict__ out) {
  constexpr int LPT = D / 8;
  const int split = blockIdx.x, h = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int dl = lane % LPT;
  const BlockGeometry g = geometryOf(s);
  const float qscale = s.softmaxScale * kLog2e;  // scores in the log2 domain: exp2 below

  float qr[GQ][8], qsum[GQ];
#pragma unroll
  for (int j = 0; j < GQ; ++j) {
    qsum[j] = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      qr[j][i] = j < gq ? q[static_cast<size_t>(h * gq + j) * D + dl * 8 + i] * qscale : 0.0f;
      qsum[j] += qr[j][i];
    }
  }
  AttnState<D, GQ> st;
#pragma unroll
  for (int j = 0; j < GQ; ++j) {
    st.m[j] = -INFINITY;
    st.l[j] = 0.0f;
    st.zacc[j] = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) st.acc[j][i] = 0.0f;
  }

  const int totalChunks = (s.contextTokens + kChunkTokens - 1) / kChunkTokens;
  const int c0 = split * chunksPerSplit;
  const int c1 = min(totalChunks, c0 + chunksPerSplit);
  const int chunksPerBlock = s.blockTokens / kChunkTokens;
  bool bad = false;
  for (int c = c0 + warp; c < c1; c += kAttnWarps) {
    const BlockEntry entry = table[c / chunksPerBlock];
    const int rowInBlock0 = (c % chunksPerBlock) * kChunkTokens;
    const int valid = min(kChunkTokens, s.contextTokens - c * kChunkTokens);
    if (!validPrecision(entry.precision) || entry.offset % 16 != 0 || entry.offset > arenaBytes ||
        blockBytes(g, entry.precision) > arenaBytes - entry.offset) {
      bad = true;  // never read outside the arena; the output becomes NaN below
      continue;
    }
    const uint8_t* block = arena + entry.offset;
    switch (entry.precision) {
      case kFp16: attendChunk<kFp16, D, GQ>(st, qr, qsum, block, g, h, rowInBlock0, valid); break;
      case kInt8: attendChunk<kInt8, D, GQ>(st, qr, qsum, block, g, h, rowInBlock0, valid); break;
      case kInt4: attendChunk<kInt4, D, GQ>(st, qr, qsum, block, g, h, rowInBlock0, valid); break;
      default: attendChunk<kInt2, D, GQ>(st, qr, qsum, block, g, h, rowInBlock0, valid); break;
    }
  }

  // Merge the lanes that share dims (different token rows), then the warps.
#pragma unroll
  for (int j = 0; j < GQ; ++j) {
#pragma unroll
    for (int o = LPT; o < 32; o <<= 1) {
      st.l[j] += __shfl_xor_sync(kFullMask, st.l[j], o);
      st.zacc[j] += __shfl_xor_sync(kFullMask, st.zacc[j], o);
#pragma unroll
      for (int i = 0; i < 8; ++i) st.acc[j][i] += __shfl_xor_sync(kFullMask, st.acc[j][i], o);
    }
  }
  __shared__ float sAcc[kAttnWarps][GQ][D];
  __shared__ float sM[kAttnWarps][GQ], sL[kAttnWarps][GQ];
  __shared__ int sBad;
  if (threadIdx.x == 0) sBad = 0;
  __syncthreads();
  if (bad) sBad = 1;
  if (lane < LPT) {
#pragma unroll
    for (int j = 0; j < GQ; ++j) {
#pragma unroll
      for (int i = 0; i < 8; ++i) sAcc[warp][j][dl * 8 + i] = st.acc[j][i] + st.zacc[j];
    }
  }
  if (lane == 0) {
#pragma unroll
    for (int j = 0; j < GQ; ++j) {
      sM[warp][j] = st.m[j];
      sL[warp][j] = st.l[j];
    }
  }
  __syncthreads();
  mergeWarpsAndStore(sM, sL, &sAcc[0][0][0], D, gq, h, split, s.qHeads, sBad != 0, out, partAcc, partMl);
}

// grid qHeads, block D: merges the splits' partial results.
__global__ void pagedAttentionReduce(int splits, int qHeads, int D, const float* __restrict__ partAcc,
                                     const float* __restrict__ partMl, float* __restrict__ out) {
  const int hq = blockIdx.x;
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float m = -INFINITY;
    for (int sp = 0; sp < splits; ++sp) m = fmaxf(m, partMl[(static_cast<size_t>(sp) * qHeads + hq) * 2]);
    float l = 0.0f, a = 0.0f;
    for (int sp = 0; sp < splits; ++sp) {
      const size_t i = static_cast<size_t>(sp) * qHeads + hq;
      const float ms = partMl[i * 2];
      if (ms == -INFINITY) continue;
      const float f = exp2f(ms - m);
      l += partMl[i * 2 + 1] * f;
      a += partAcc[i * D + d] * f;
    }
    out[static_cast<size_t>(hq) * D + d] = a / l;
  }
}

}  // namespace hil::cuda
