// Group-wise asymmetric quantization and dequantization (semantics: common/quant-math.h,
// layout: common/kv-format.h). One warp per group for quantize; one thread per 8 elements (the
// `bits` bytes their codes fill, any width) for dequantize.
#pragma once
#include "../common/quant-math.h"
#include "cuda-util.cuh"

namespace hil::cuda {

constexpr int kQuantWarpsPerBlock = 8;

__global__ void quantizeKernel(const uint16_t* __restrict__ src, size_t groups, int groupSize, int bits,
                               uint8_t* __restrict__ codes, uint16_t* __restrict__ meta) {
  const size_t group = static_cast<size_t>(blockIdx.x) * kQuantWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (group >= groups) return;
  const uint16_t* x = src + group * groupSize;
  float mn = INFINITY, mx = -INFINITY;
  for (int i = lane; i < groupSize; i += 32) {
    const float v = halfBitsToFloat(x[i]);
    mn = fminf(mn, v);
    mx = fmaxf(mx, v);
  }
  mn = warpMin(mn);
  mx = warpMax(mx);
  const int qmax = qmaxForBits(bits);
  const float scale32 = __fdiv_rn(__fsub_rn(mx, mn), static_cast<float>(qmax));
  const uint16_t scaleH = floatToHalfBits(scale32);
  const uint16_t zeroH = floatToHalfBits(__fadd_rn(mn, 0.0f));
  if (lane == 0) {
    meta[2 * group] = scaleH;
    meta[2 * group + 1] = zeroH;
  }
  const float scale = halfBitsToFloat(scaleH), zero = halfBitsToFloat(zeroH);
  uint8_t* out = codes + group * groupSize * bits / 8;
  for (int u = lane; u < groupSize / 8; u += 32) {  // 8 elements -> `bits` bytes
    int c[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) c[j] = quantCode(halfBitsToFloat(x[u * 8 + j]), zero, scale, qmax);
    const unsigned long long w = packEight(c, bits);
    for (int k = 0; k < bits; ++k) out[u * bits + k] = static_cast<uint8_t>(w >> (8 * k));
  }
}

__global__ void dequantizeKernel(const uint8_t* __restrict__ codes, const uint16_t* __restrict__ meta,
                                 size_t units, int groupSize, int bits, uint16_t* __restrict__ dst) {
  const size_t u = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (u >= units) return;
  const size_t e0 = u * 8;
  const size_t g = e0 / groupSize;
  const float scale = halfBitsToFloat(meta[2 * g]), zero = halfBitsToFloat(meta[2 * g + 1]);
  unsigned long long w = 0;
  for (int k = 0; k < bits; ++k) w |= static_cast<unsigned long long>(codes[u * bits + k]) << (8 * k);
  for (int j = 0; j < 8; ++j) {
    const unsigned c = static_cast<unsigned>(w >> (j * bits)) & ((1u << bits) - 1);
    dst[e0 + j] = floatToHalfBits(__fadd_rn(zero, __fmul_rn(static_cast<float>(c), scale)));
  }
}

}  // namespace hil::cuda
