// Read-only probe (GPU machine, no Node): how fast can a kernel stream the FP16 KV arena of the
// attention bench (Llama-3-8B layer: 8 kv heads, 16-token blocks of [K 8 x 4 KB][V 8 x 4 KB] = 64 KB,
// laid out contiguously as hil/bench/device-cache.ts does) with each way of fetching it, and no math?
// It separates the fetch pattern from the attention kernel's compute (lab/notes/HIL-NOTES.md).
//   nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/tma-read perf/device/tma-read.cu && /tmp/tma-read [tokens]
// Patterns (every one reads every byte of the arena once per launch; a checksum over the bytes read
// is compared with the host's, so a pattern that skips or repeats bytes fails):
//   plain B T       ld.global 16 B per thread, 4 loads in flight, B blocks of T threads, grid-stride
//   warp-ring S W X the tensor-core FP16 kernel's fetch: grid (X splits, 8 heads), W warps per block,
//                   each warp a ring of S stages [K 4 KB][V 4 KB] (two bulk copies, one mbarrier),
//                   chunk i of warp w = i * splits * W + split * W + w (strided ownership)
//   block-ring S P  one producer thread per block, stages of one whole KV block (K 32 KB + V 32 KB in
//                   P bulk copies each), 8 consumer warps (one per head) read their 8 KB; full and
//                   empty mbarriers; KV block i of block b = i * gridDim + b
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "kv-fetch.cuh"

using namespace kvfetch;

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
};

template <typename F>
double timeUs(F launch, int reps = 20) {  // median of 7 batches of `reps` launches, per launch
  static Timer t;
  launch();
  CK(cudaDeviceSynchronize());
  std::vector<double> v;
  for (int r = 0; r < 7; ++r) {
    CK(cudaEventRecord(t.a));
    for (int i = 0; i < reps; ++i) launch();
    CK(cudaEventRecord(t.b));
    CK(cudaEventSynchronize(t.b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, t.a, t.b));
    v.push_back(ms * 1000.0 / reps);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  char* endp = nullptr;
  const long tokensArg = argc > 1 ? std::strtol(argv[1], &endp, 10) : 32768;
  if (argc > 2 || (argc > 1 && (endp == argv[1] || *endp != '\0')) || tokensArg < 16 || tokensArg % 16 != 0 || tokensArg > (1 << 24)) {
    std::fprintf(stderr, "tokens: expected a positive multiple of 16 up to 16777216, got %s\n", argc > 1 ? argv[1] : "");
    return 2;
  }
  const int tokens = static_cast<int>(tokensArg);
  const int kvBlocks = tokens / 16;
  const size_t bytes = static_cast<size_t>(kvBlocks) * kBlockBytes;
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::vector<uint32_t> host(bytes / 4);
  uint32_t x = 12345;
  for (auto& w : host) w = (x = x * 1664525u + 1013904223u);
  uint8_t* arena = nullptr;
  uint8_t* copy = nullptr;
  unsigned long long* sum = nullptr;
  CK(cudaMalloc(&arena, bytes));
  CK(cudaMalloc(&copy, bytes));
  CK(cudaMalloc(&sum, sizeof(unsigned long long)));
  CK(cudaMemcpy(arena, host.data(), bytes, cudaMemcpyHostToDevice));
  // the checksum every pattern must reproduce: sum of fold() over all 16-byte pieces (mod 2^32)
  uint32_t want = 0;
  for (size_t i = 0; i < host.size(); i += 4) {
    want += host[i] ^ (host[i + 1] * 3u) ^ (host[i + 2] * 5u) ^ (host[i + 3] * 7u);
  }
  std::printf("%s, %d SMs, %d tokens, arena %.1f MB\n", prop.name, sms, tokens, bytes / 1e6);
  const double d2d = timeUs([&] { CK(cudaMemcpyAsync(copy, arena, bytes, cudaMemcpyDeviceToDevice)); });
  std::printf("d2d copy            %8.1f us  %7.0f GB/s (read + write)\n", d2d, 2.0 * bytes / d2d / 1e3);
  auto report = [&](const char* name, auto launch) {
    CK(cudaMemset(sum, 0, sizeof(unsigned long long)));
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned long long got = 0;
    CK(cudaMemcpy(&got, sum, sizeof(got), cudaMemcpyDeviceToHost));
    const bool ok = static_cast<uint32_t>(got) == want;
    const double us = timeUs(launch);
    std::printf("%-20s %8.1f us  %7.0f GB/s  %5.1f%% of d2d  %s\n", name, us, bytes / us / 1e3, 100.0 * (bytes / us) / (2.0 * bytes / d2d),
                ok ? "sum ok" : "SUM MISMATCH");
  };
  char name[64];
  for (const auto& bt : std::vector<std::pair<int, int>>{{sms * 8, 256}, {sms * 2, 128}, {sms * 2, 256}, {sms * 4, 256}}) {
    const int b = bt.first, t = bt.second;
    std::snprintf(name, sizeof name, "plain %dx%d", b, t);
    report(name, [&] { plainRead<<<b, t>>>(reinterpret_cast<const uint4*>(arena), bytes / 16, sum); });
  }
  auto warpRingRun = [&](auto sTag, int W, int splits) {
    constexpr int S = decltype(sTag)::value;
    const int smemB = W * S * 8192;
    CK(cudaFuncSetAttribute(warpRing<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smemB));
    std::snprintf(name, sizeof name, "warp-ring S%d W%d x%d", S, W, splits);
    report(name, [&] { warpRing<S><<<dim3(splits, kHeads), W * 32, smemB>>>(arena, kvBlocks, sum); });
  };
  warpRingRun(std::integral_constant<int, 3>{}, 4, 32);  // the FP16 kernel's: 2 blocks per SM
  warpRingRun(std::integral_constant<int, 3>{}, 4, 33);
  warpRingRun(std::integral_constant<int, 2>{}, 4, 48);  // 3 blocks per SM
  warpRingRun(std::integral_constant<int, 6>{}, 2, 32);  // the same shared memory in fewer, deeper rings
  warpRingRun(std::integral_constant<int, 6>{}, 2, 33);
  warpRingRun(std::integral_constant<int, 4>{}, 2, 48);
  warpRingRun(std::integral_constant<int, 12>{}, 1, 32);
  warpRingRun(std::integral_constant<int, 6>{}, 4, 16);
  warpRingRun(std::integral_constant<int, 3>{}, 8, 16);
  auto blockRingRun = [&](auto sTag, int pieces, int blocks) {
    constexpr int S = decltype(sTag)::value;
    const int smemB = S * kBlockBytes;
    CK(cudaFuncSetAttribute(blockRing<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smemB));
    std::snprintf(name, sizeof name, "block-ring S%d P%d x%d", S, pieces, blocks);
    report(name, [&] { blockRing<S><<<blocks, (kHeads + 1) * 32, smemB>>>(arena, kvBlocks, pieces, sum); });
  };
  blockRingRun(std::integral_constant<int, 3>{}, 1, sms);
  blockRingRun(std::integral_constant<int, 3>{}, 4, sms);
  blockRingRun(std::integral_constant<int, 3>{}, 8, sms);
  blockRingRun(std::integral_constant<int, 2>{}, 1, sms);
  return 0;
}
