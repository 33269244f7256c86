// The KV fetch patterns of perf/device/tma-read.cu, shared with perf/device/h2d-interference.cu:
// the attention bench's FP16 arena (Llama-3-8B layer: 8 kv heads, 16-token blocks of
// [K 8 x 4 KB][V 8 x 4 KB] = 64 KB) streamed by plain loads, the tensor-core FP16 kernel's warp ring,
// or a block-wide ring of whole KV blocks; each folds every byte it reads into a checksum.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include "../../hil/native/kernels/mbarrier.cuh"

// every CUDA call of the probes: its name, file and line, and exit 1
#define CK(call)                                                                                 \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

namespace kvfetch {
using namespace hil::cuda;

constexpr int kHeads = 8;
constexpr int kHeadBytes = 4096;                   // 16 tokens x 128 dims x 2 B
constexpr int kBlockBytes = 2 * kHeads * kHeadBytes;  // K and V of all heads

__device__ __forceinline__ uint32_t fold(uint4 v) { return v.x ^ (v.y * 3u) ^ (v.z * 5u) ^ (v.w * 7u); }
// one atomic per warp (one per thread on a single address costs tens of microseconds)
__device__ __forceinline__ void addSum(unsigned long long* sum, uint32_t acc) {
  const uint32_t w = __reduce_add_sync(0xffffffffu, acc);
  if (threadIdx.x % 32 == 0) atomicAdd(sum, w);
}

// this thread's share of a grid-stride read of p[0, n16), 4 loads of 16 B in flight, folded
__device__ __forceinline__ uint32_t foldGridStride(const uint4* __restrict__ p, size_t n16) {
  uint32_t acc = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    const uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride), d = __ldcs(p + i + 3 * stride);
    acc += fold(a) + fold(b) + fold(c) + fold(d);
  }
  for (; i < n16; i += stride) acc += fold(__ldcs(p + i));
  return acc;
}

__global__ void plainRead(const uint4* __restrict__ p, size_t n16, unsigned long long* sum) { addSum(sum, foldGridStride(p, n16)); }

// lanes read the stage back (16 B each per 512 B), so that the bytes are used
__device__ __forceinline__ uint32_t readStage(const uint8_t* st, int bytes, int lane) {
  uint32_t acc = 0;
  for (int o = lane * 16; o < bytes; o += 512) acc += fold(*reinterpret_cast<const uint4*>(st + o));
  return acc;
}

template <int S>
__global__ void warpRing(const uint8_t* __restrict__ arena, int kvBlocks, unsigned long long* sum) {
  extern __shared__ __align__(128) uint8_t smem[];
  __shared__ __align__(8) uint64_t bars[32][S];
  const int W = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int split = blockIdx.x, h = blockIdx.y, nW = gridDim.x * W;
  uint8_t* ring = smem + warp * S * 8192;
  const uint32_t ringS = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
  const uint32_t bar0 = static_cast<uint32_t>(__cvta_generic_to_shared(&bars[warp][0]));
  initStageBarriers<S>(bar0, lane);
  const int first = split * W + warp;
  auto chunkOf = [&](int k) { return first + k * nW; };
  auto issue = [&](int k, int slot) {
    const int c = chunkOf(k);
    if (c < kvBlocks && lane == 0) {
      const uint8_t* src = arena + static_cast<size_t>(c) * kBlockBytes + h * kHeadBytes;
      const uint32_t bar = bar0 + 8 * slot;
      mbarArriveExpectTx(bar, 8192);
      bulkCopy(ringS + slot * 8192, src, 4096, bar);
      bulkCopy(ringS + slot * 8192 + 4096, src + kHeads * kHeadBytes, 4096, bar);
    }
  };
  for (int k = 0; k < S; ++k) issue(k, k);
  uint32_t acc = 0;
  unsigned phases = 0;
  for (int k = 0, slot = 0; chunkOf(k) < kvBlocks; ++k, slot = slot == S - 1 ? 0 : slot + 1) {
    mbarWait(bar0 + 8 * slot, (phases >> slot) & 1u);
    phases ^= 1u << slot;
    acc += readStage(ring + slot * 8192, 8192, lane);
    __syncwarp();
    issue(k + S, slot);
  }
  addSum(sum, acc);
}

// stage = one KV block; P bulk copies per K (and per V) section; 8 consumer warps + 1 producer warp
template <int S>
__global__ void blockRing(const uint8_t* __restrict__ arena, int kvBlocks, int pieces, unsigned long long* sum) {
  extern __shared__ __align__(128) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[S], empty[S];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t ring = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t full0 = static_cast<uint32_t>(__cvta_generic_to_shared(&full[0]));
  const uint32_t empty0 = static_cast<uint32_t>(__cvta_generic_to_shared(&empty[0]));
  if (threadIdx.x == 0) {
    for (int i = 0; i < S; ++i) {
      mbarInit(full0 + 8 * i, 1);
      mbarInit(empty0 + 8 * i, kHeads);
    }
    mbarInitFence();
  }
  __syncthreads();
  const int n = kvBlocks > static_cast<int>(blockIdx.x) ? (kvBlocks - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  uint32_t acc = 0;
  if (warp == kHeads) {  // producer
    if (lane == 0) {
      const int piece = kHeads * kHeadBytes / pieces;
      for (int k = 0; k < n; ++k) {
        const int slot = k % S;
        if (k >= S) mbarWait(empty0 + 8 * slot, ((k / S) - 1) & 1u);
        const uint8_t* src = arena + static_cast<size_t>(blockIdx.x + static_cast<size_t>(k) * gridDim.x) * kBlockBytes;
        const uint32_t bar = full0 + 8 * slot;
        mbarArriveExpectTx(bar, kBlockBytes);
        for (int p = 0; p < 2 * pieces; ++p) bulkCopy(ring + slot * kBlockBytes + p * piece, src + p * piece, piece, bar);
      }
    }
  } else {  // consumer warp = head
    for (int k = 0; k < n; ++k) {
      const int slot = k % S;
      mbarWait(full0 + 8 * slot, (k / S) & 1u);
      const uint8_t* st = smem + slot * kBlockBytes;
      acc += readStage(st + warp * kHeadBytes, kHeadBytes, lane) + readStage(st + (kHeads + warp) * kHeadBytes, kHeadBytes, lane);
      __syncwarp();
      if (lane == 0) mbarArrive(empty0 + 8 * slot);
    }
  }
  addSum(sum, acc);
}

}  // namespace kvfetch
