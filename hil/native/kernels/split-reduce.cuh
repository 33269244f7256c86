// The merge of split-K decode attention: every split wrote, per query head, its running max and
// sum (partMl, float2 in log2 units) and its unnormalized output (partAcc, D floats); the reduce
// rescales them to the common max and divides (online-softmax.cuh). Used after every attention
// kernel (launch/launch-attention.cu), launched with programmatic dependent launch.
#pragma once
#include <cmath>
#include "online-softmax.cuh"

namespace hil::cuda {

// grid (qHeads, D / 32), block kSplitReduceWarps * 32: merges the splits' partial results of the
// v3 and tensor-core attention kernels (checked end to end against the float64 reference by the
// attention checks).
// Block (hq, y) owns dims 32 y .. 32 y + 31 of query head hq, lane = dim; warp w takes the splits
// w, w + 8, ... and loads kSplitReduceBatch of them ((max, sum) as one float2 and the acc) before
// it uses any: up to 256 splits in one round trip (the INT4 head-warp kernel writes 131-256 at 32k
// and 128k; with a batch of 12 that took up to 3 dependent round trips, ~3 us on the H100), where
// a one-block-per-head reduce had chains of 4 (and the max, the sum and the acc come together,
// not in three dependent phases).
// The warps' (max, sum, acc) are then merged through shared memory. Splits whose max is -inf
// (no tokens) are skipped; NaN partials (bad entries) propagate.
constexpr int kSplitReduceWarps = 8;
constexpr int kSplitReduceBatch = 32;
__global__ void __launch_bounds__(kSplitReduceWarps * 32) pagedAttentionSplitReduce(int splits, int qHeads, int D,
                                                                                const float* __restrict__ partAcc,
                                                                                const float* __restrict__ partMl,
                                                                                float* __restrict__ out) {
  asm volatile("griddepcontrol.wait;" ::: "memory");  // launched with PDL: the partials are complete
  const int hq = blockIdx.x, w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int d = blockIdx.y * 32 + lane;
  float m = -INFINITY, l = 0.0f, a = 0.0f;
  for (int base = w; base < splits; base += kSplitReduceWarps * kSplitReduceBatch) {
    float2 ml[kSplitReduceBatch];
    float x[kSplitReduceBatch];
#pragma unroll
    for (int i = 0; i < kSplitReduceBatch; ++i) {
      const int sp = base + i * kSplitReduceWarps;
      if (sp < splits) {
        const size_t r = static_cast<size_t>(sp) * qHeads + hq;
        ml[i] = __ldcg(reinterpret_cast<const float2*>(partMl) + r);
        x[i] = __ldcg(partAcc + r * D + d);
      } else {
        ml[i] = make_float2(-INFINITY, 0.0f);
        x[i] = 0.0f;
      }
    }
    float mb = m;
#pragma unroll
    for (int i = 0; i < kSplitReduceBatch; ++i) mb = fmaxf(mb, ml[i].x);
    if (mb != -INFINITY) {
      if (m != -INFINITY && mb != m) {
        const float f = raiseMax(m, mb);
        l *= f;
        a *= f;
      }
      m = mb;
#pragma unroll
      for (int i = 0; i < kSplitReduceBatch; ++i) addPartial(l, a, m, ml[i].x, ml[i].y, x[i]);
    }
  }
  __shared__ float sM[kSplitReduceWarps][32], sL[kSplitReduceWarps][32], sA[kSplitReduceWarps][32];
  sM[w][lane] = m;
  sL[w][lane] = l;
  sA[w][lane] = a;
  __syncthreads();
  if (w == 0) {
    float mm = -INFINITY;
#pragma unroll
    for (int v = 0; v < kSplitReduceWarps; ++v) mm = fmaxf(mm, sM[v][lane]);
    float ll = 0.0f, aa = 0.0f;
#pragma unroll
    for (int v = 0; v < kSplitReduceWarps; ++v) addPartial(ll, aa, mm, sM[v][lane], sL[v][lane], sA[v][lane]);
    out[static_cast<size_t>(hq) * D + d] = aa / ll;
  }
}

}  // namespace hil::cuda
