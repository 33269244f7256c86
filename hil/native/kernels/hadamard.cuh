// Fast Walsh-Hadamard transform, one thread block per row, butterflies in shared memory
// in the order of host/hadamard.h (stride 1, 2, 4, ...), then a multiply by `norm`.
#pragma once
#include "cuda-util.cuh"

namespace hil::cuda {

template <bool F16>
__global__ void hadamardKernel(void* data, int n, float norm) {
  extern __shared__ float row[];
  const size_t base = static_cast<size_t>(blockIdx.x) * n;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    row[i] = F16 ? halfBitsToFloat(static_cast<uint16_t*>(data)[base + i]) : static_cast<float*>(data)[base + i];
  }
  __syncthreads();
  for (int h = 1; h < n; h <<= 1) {
    for (int p = threadIdx.x; p < n / 2; p += blockDim.x) {
      const int j = (p / h) * 2 * h + (p % h);
      const float a = row[j], b = row[j + h];
      row[j] = __fadd_rn(a, b);
      row[j + h] = __fsub_rn(a, b);
    }
    __syncthreads();
  }
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = __fmul_rn(row[i], norm);
    if (F16) static_cast<uint16_t*>(data)[base + i] = floatToHalfBits(v);
    else static_cast<float*>(data)[base + i] = v;
  }
}

}  // namespace hil::cuda
