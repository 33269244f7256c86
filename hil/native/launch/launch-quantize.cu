#include "../kernels/quantize.cuh"
#include "check-shapes.h"
#include "cuda-check.h"
#include "launch.h"

namespace hil::launch {

void quantize(cudaStream_t s, const uint16_t* src, size_t n, int bits, int groupSize, uint8_t* codes, uint16_t* meta) {
  checkQuantShape(n, bits, groupSize);
  const size_t groups = n / groupSize;
  const unsigned blocks = static_cast<unsigned>((groups + cuda::kQuantWarpsPerBlock - 1) / cuda::kQuantWarpsPerBlock);
  cuda::quantizeKernel<<<blocks, cuda::kQuantWarpsPerBlock * 32, 0, s>>>(src, groups, groupSize, bits, codes, meta);
  checkLaunch("quantizeKernel");
}

void dequantize(cudaStream_t s, const uint8_t* codes, const uint16_t* meta, size_t n, int bits, int groupSize,
                uint16_t* dst) {
  checkQuantShape(n, bits, groupSize);
  const size_t units = n / 8;  // groupSize is a multiple of 8
  cuda::dequantizeKernel<<<static_cast<unsigned>((units + 255) / 256), 256, 0, s>>>(codes, meta, units, groupSize, bits, dst);
  checkLaunch("dequantizeKernel");
}

}  // namespace hil::launch
