// Group-wise asymmetric quantization and dequantization (semantics: common/quant-math.h,
// layout: common/kv-format.h). One warp per group for quantize; one thread per code byte
// for dequantize.
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
  const int perByte = 8 / bits;
  const int bytes = groupSize / perByte;
  uint8_t* out = codes + group * bytes;
  for (int b = lane; b < bytes; b += 32) {
    unsigned byte = 0;
    for (int j = 0; j < perByte; ++j) {
      const float v = halfBitsToFloat(x[b * perByte + j]);
      byte |= static_cast<unsigned>(quantCode(v, zero, scale, qmax)) << (j * bits);
    }
    out[b] = static_cast<uint8_t>(byte);
  }
}

__global__ void dequantizeKernel(const uint8_t* __restrict__ codes, const uint16_t* __restrict__ meta,
                                 size_t codeBytes, int groupSize, int bits, uint16_t* __restrict__ dst) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= codeBytes) return;
  const int perByte = 8 / bits;
  const size_t e0 = i * perByte;
  const size_t g = e0 / groupSize;
  const float scale = halfBitsToFloat(meta[2 * g]), zero = halfBitsToFloat(meta[2 * g + 1]);
  const unsigned byte = codes[i];
  for (int j = 0; j < perByte; ++j) {
    const unsigned c = (byte >> (j * bits)) & ((1u << bits) - 1);
    dst[e0 + j] = floatToHalfBits(__fadd_rn(zero, __fmul_rn(static_cast<float>(c), scale)));
  }
}

}  // namespace hil::cuda
