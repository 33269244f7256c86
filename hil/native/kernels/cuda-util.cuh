// Small device helpers shared by the kernels. Framework-free: raw pointers only.
#pragma once
#include <cuda_fp16.h>
#include <cstdint>

namespace hil::cuda {

constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float warpMin(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fminf(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}
__device__ __forceinline__ float warpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}
__device__ __forceinline__ float warpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}
__device__ __forceinline__ float halfBitsToFloat(uint16_t h) { return __half2float(__ushort_as_half(h)); }
__device__ __forceinline__ uint16_t floatToHalfBits(float f) { return __half_as_ushort(__float2half_rn(f)); }

}  // namespace hil::cuda
