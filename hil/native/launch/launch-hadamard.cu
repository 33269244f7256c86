#include <cmath>
#include "../kernels/hadamard.cuh"
#include "check-shapes.h"
#include "cuda-check.h"
#include "launch.h"

namespace hil::launch {

void hadamard(cudaStream_t s, void* data, size_t rows, int n, bool f16) {
  checkHadamardShape(rows, n);
  const float norm = static_cast<float>(1.0 / std::sqrt(static_cast<double>(n)));
  const int threads = n / 2 < 256 ? n / 2 : 256;
  const size_t shared = static_cast<size_t>(n) * sizeof(float);
  if (f16) cuda::hadamardKernel<true><<<static_cast<unsigned>(rows), threads, shared, s>>>(data, n, norm);
  else cuda::hadamardKernel<false><<<static_cast<unsigned>(rows), threads, shared, s>>>(data, n, norm);
  checkLaunch("hadamardKernel");
}

}  // namespace hil::launch
