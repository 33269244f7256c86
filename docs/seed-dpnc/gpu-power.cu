// GPU power under two loads, for the energy model's GPU constants (docs/seed-dpnc.md):
//   copy: a device-to-device copy of a 4 GiB buffer, repeated (HBM-bound, as decode attention is)
//   fma : a dependent FMA chain in every thread (compute-bound)
// Usage: gpu-power MODE SECONDS. The caller samples nvidia-smi power.draw meanwhile.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <cuda_runtime.h>

__global__ void copyKernel(const float4* __restrict__ a, float4* __restrict__ b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) b[i] = a[i];
}

__global__ void fmaKernel(float* out, int iters) {
  float x = threadIdx.x * 1e-3f, y = 1.0001f, z = 0.9999f, w = 0.5f;
  for (int i = 0; i < iters; i++) {
    x = fmaf(x, y, z); w = fmaf(w, z, y); y = fmaf(y, x, w); z = fmaf(z, w, x);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x + y + z + w;
}

int main(int argc, char** argv) {
  if (argc < 3) { fprintf(stderr, "usage: gpu-power copy|fma SECONDS\n"); return 2; }
  const bool copy = strcmp(argv[1], "copy") == 0;
  const double seconds = atof(argv[2]);
  const size_t bytes = (size_t)4 << 30;
  float4 *a = nullptr, *b = nullptr;
  float* out = nullptr;
  if (copy) {
    if (cudaMalloc(&a, bytes) || cudaMalloc(&b, bytes)) { fprintf(stderr, "cudaMalloc failed\n"); return 1; }
    cudaMemset(a, 1, bytes);
  } else if (cudaMalloc(&out, 132 * 8 * 1024 * sizeof(float))) { fprintf(stderr, "cudaMalloc failed\n"); return 1; }
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  const auto t0 = std::chrono::steady_clock::now();
  long launches = 0;
  double kernelMs = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    cudaEventRecord(e0);
    for (int k = 0; k < 8; k++) {
      if (copy) copyKernel<<<132 * 16, 512>>>(a, b, bytes / sizeof(float4));
      else fmaKernel<<<132 * 8, 1024>>>(out, 1 << 20);
    }
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    kernelMs += ms;
    launches += 8;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (copy) printf("copy: %ld copies of %zu B in %.3f s (kernel %.3f s): %.1f GB/s read+write\n", launches, bytes, wall, kernelMs / 1e3, 2.0 * bytes * launches / (kernelMs / 1e3) / 1e9);
  else printf("fma: %ld launches in %.3f s (kernel %.3f s)\n", launches, wall, kernelMs / 1e3);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
