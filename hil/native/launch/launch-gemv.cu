#include "../kernels/gemv.cuh"
#include "check-shapes.h"
#include "cuda-check.h"
#include "launch.h"

namespace hil::launch {

void gemv(cudaStream_t s, const uint16_t* w, const float* x, float* y, size_t rows, size_t cols) {
  checkGemvShape(rows, cols);
  if (reinterpret_cast<uintptr_t>(w) % 16 || reinterpret_cast<uintptr_t>(x) % 16)
    throw HilError("gemv: weights and x must be 16-byte aligned (offsets multiple of 16)");
  const unsigned blocks = static_cast<unsigned>((rows + cuda::kGemvWarpsPerBlock - 1) / cuda::kGemvWarpsPerBlock);
  cuda::gemvKernel<<<blocks, cuda::kGemvWarpsPerBlock * 32, 0, s>>>(w, x, y, rows, cols);
  checkLaunch("gemvKernel");
}

}  // namespace hil::launch
