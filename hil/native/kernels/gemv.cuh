// GEMV for batch-1 decode: y = W x, W FP16 [rows][cols] row-major, x and y FP32.
// One warp per row, 16-byte loads of W (8 halves per lane per step), FP32 accumulation.
#pragma once
#include "cuda-util.cuh"

namespace hil::cuda {

constexpr int kGemvWarpsPerBlock = 8;

__global__ void gemvKernel(const uint16_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y,
                           size_t rows, size_t cols) {
  const size_t row = static_cast<size_t>(blockIdx.x) * kGemvWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const uint4* wr = reinterpret_cast<const uint4*>(w + row * cols);
  const float4* xv = reinterpret_cast<const float4*>(x);
  const size_t chunks = cols / 8;
  float acc = 0.0f;
#pragma unroll 4
  for (size_t c = lane; c < chunks; c += 32) {
    const uint4 raw = __ldg(wr + c);
    const float4 x0 = __ldg(xv + 2 * c), x1 = __ldg(xv + 2 * c + 1);
    const __half2* h = reinterpret_cast<const __half2*>(&raw);
    const float2 a = __half22float2(h[0]), b = __half22float2(h[1]), d = __half22float2(h[2]), e = __half22float2(h[3]);
    acc += a.x * x0.x + a.y * x0.y + b.x * x0.z + b.y * x0.w + d.x * x1.x + d.y * x1.y + e.x * x1.z + e.y * x1.w;
  }
  acc = warpSum(acc);
  if (lane == 0) y[row] = acc;
}

}  // namespace hil::cuda
