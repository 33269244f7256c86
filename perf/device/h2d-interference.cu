// Probe (GPU machine, no Node): how much does an HBM-bound read kernel on a high-priority stream slow
// down while 32 MiB move host -> HBM on a second stream, by each way of moving them? The masking
// bench's H2D row (measured on the H100, lab/notes/HIL-NOTES.md) loses 5-7% of the copy time to this slowdown
// although the copy ends well inside the compute; this probe asks whether any way of writing the
// bytes into HBM costs the reader less.
//   nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/h2d-int perf/device/h2d-interference.cu && /tmp/h2d-int [launches] [plain|lean|short]
// Compute: `launches` (default 20) launches of a streaming read of a 128 MiB buffer (the FP16 KV of
// a 32k-token Llama-3-8B layer), 4 blocks of 256 threads per SM, so a copy kernel's blocks still fit.
// plain: 4 loads of 16 B in flight per thread (bandwidth-bound); lean: one block per SM, one load in
// flight per thread (latency-bound); short: 8 times the launches, each reading one eighth of the
// buffer (rotating), so the same bytes with 8 times the launch ramps and tails; ring: the tensor-core
// FP16 kernel's fetch (kv-fetch.cuh warp ring: 3 stages of 8 KB per warp, 4 warps, 32 splits x 8
// heads); ring6: 6 stages, 2 warps; block: a block-wide ring of whole 64 KB KV blocks (3 stages,
// one block per SM).
// Each trial starts behind a spin kernel (300 us) on the compute stream and an event the memory
// stream waits for, so that everything is queued before either stream starts.
// Ways (each moves the same 32 MiB from pinned host memory to HBM, except d2h):
//   ce 16x2M      cudaMemcpyAsync, 16 slabs of 2 MiB (the bench's row)
//   ce 1x32M      one 32 MiB copy
//   ce 256x128K   256 copies of 128 KiB
//   ce paced      the 16 slabs spread over the compute: slab k waits for compute launch k * launches / 16 to start
//   ce d2h        16 x 2 MiB HBM -> host (reads HBM instead of writing it), for reference
//   sm G st       a kernel of G blocks on the memory stream reads the mapped pinned buffer (16 B
//                 loads, 4 in flight per thread) and stores to HBM: plain st, st.cs (streaming),
//                 or st with an L2 evict_last policy
// Reported per way: compute alone, copy alone, both; the compute's slowdown while copying, as a share
// of the copy time; masking = 1 - max(0, both - compute) / copy. Every way's bytes are checked.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>
#include "kv-fetch.cuh"

using kvfetch::fold;

// kvfetch::plainRead without its checksum atomics: the result only keeps the loads alive
__global__ void readKernel(const uint4* __restrict__ p, size_t n16, unsigned* sink) {
  const uint32_t acc = kvfetch::foldGridStride(p, n16);
  if (acc == 0x9e3779b9u) *sink = acc;  // keeps the loads; practically never taken
}

__global__ void leanRead(const uint4* __restrict__ p, size_t n16, unsigned* sink) {
  uint32_t acc = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n16; i += stride) acc += fold(__ldcs(p + i));
  if (acc == 0x9e3779b9u) *sink = acc;
}

__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

enum StoreKind { kPlain = 0, kStreaming = 1, kEvictLast = 2 };

__global__ void pullKernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n16, int kind) {
  uint64_t pol = 0;
  if (kind == kEvictLast) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(pol));
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  auto put = [&](size_t j, uint4 v) {
    if (kind == kStreaming) {
      __stcs(dst + j, v);
    } else if (kind == kEvictLast) {
      asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;\n" ::"l"(dst + j), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w),
                   "l"(pol)
                   : "memory");
    } else {
      dst[j] = v;
    }
  };
  for (; i + 3 * stride < n16; i += 4 * stride) {
    const uint4 a = __ldcv(src + i), b = __ldcv(src + i + stride), c = __ldcv(src + i + 2 * stride), d = __ldcv(src + i + 3 * stride);
    put(i, a);
    put(i + stride, b);
    put(i + 2 * stride, c);
    put(i + 3 * stride, d);
  }
  for (; i < n16; i += stride) put(i, __ldcv(src + i));
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  if (argc > 3) {
    std::fprintf(stderr, "usage: h2d-int [launches 16..400] [plain|lean|short|ring|ring6|block]\n");
    return 2;
  }
  char* endp = nullptr;
  const long launchesArg = argc > 1 ? std::strtol(argv[1], &endp, 10) : 20;
  if ((argc > 1 && (endp == argv[1] || *endp != '\0')) || launchesArg < 16 || launchesArg > 400) {
    std::fprintf(stderr, "launches: expected a whole number from 16 to 400, got %s\n", argc > 1 ? argv[1] : "");
    return 2;
  }
  const int launches = static_cast<int>(launchesArg);
  const std::string mode = argc > 2 ? argv[2] : "plain";
  if (mode != "plain" && mode != "lean" && mode != "short" && mode != "ring" && mode != "ring6" && mode != "block") {
    std::fprintf(stderr, "mode: expected plain, lean, short, ring, ring6 or block, got %s\n", mode.c_str());
    return 2;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const size_t kvBytes = 128ull << 20, copyBytes = 32ull << 20;
  uint4 *kv, *dev, *dev2;
  unsigned* sink;
  uint8_t* host;
  CK(cudaMalloc(&kv, kvBytes));
  CK(cudaMalloc(&dev, copyBytes));
  CK(cudaMalloc(&dev2, copyBytes));
  CK(cudaMalloc(&sink, 4));
  CK(cudaHostAlloc(&host, copyBytes, cudaHostAllocMapped));
  CK(cudaMemset(kv, 0x5a, kvBytes));
  for (size_t i = 0; i < copyBytes; i++) host[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  std::vector<uint8_t> want(host, host + copyBytes);
  int lo, hi;
  CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  cudaStream_t cs, ms;
  CK(cudaStreamCreateWithPriority(&cs, cudaStreamNonBlocking, hi));
  CK(cudaStreamCreateWithPriority(&ms, cudaStreamNonBlocking, lo));
  cudaEvent_t start, endC, endM;
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&endC));
  CK(cudaEventCreate(&endM));
  std::vector<cudaEvent_t> launchEv(launches);
  for (auto& e : launchEv) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  int clockKHz = 0;
  CK(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, 0));
  const long long spinCycles = static_cast<long long>(clockKHz) * 300;  // 300 us
  const size_t n16 = kvBytes / 16;
  const int kvBlocks = static_cast<int>(kvBytes / kvfetch::kBlockBytes);
  unsigned long long* fsum;
  CK(cudaMalloc(&fsum, sizeof(unsigned long long)));
  CK(cudaFuncSetAttribute(kvfetch::warpRing<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, 4 * 3 * 8192));
  CK(cudaFuncSetAttribute(kvfetch::warpRing<6>, cudaFuncAttributeMaxDynamicSharedMemorySize, 2 * 6 * 8192));
  CK(cudaFuncSetAttribute(kvfetch::blockRing<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, 3 * kvfetch::kBlockBytes));

  using Copy = std::function<void(bool paced)>;
  auto ceSlabs = [&](size_t slab) {
    return [&, slab](bool paced) {
      const size_t n = copyBytes / slab;
      for (size_t k = 0; k < n; k++) {
        if (paced) CK(cudaStreamWaitEvent(ms, launchEv[k * launches / n], 0));
        CK(cudaMemcpyAsync(reinterpret_cast<uint8_t*>(dev) + k * slab, host + k * slab, slab, cudaMemcpyHostToDevice, ms));
      }
    };
  };
  auto pull = [&](int grid, int kind) {
    return [&, grid, kind](bool) {
      pullKernel<<<grid, 256, 0, ms>>>(reinterpret_cast<const uint4*>(host), dev, copyBytes / 16, kind);
      CK(cudaGetLastError());
    };
  };
  struct Way {
    std::string name;
    Copy copy;
    bool paced;
    bool d2h;
  };
  std::vector<Way> ways = {
      {"ce 16x2M", ceSlabs(2 << 20), false, false},
      {"ce 1x32M", ceSlabs(32 << 20), false, false},
      {"ce 256x128K", ceSlabs(128 << 10), false, false},
      {"ce paced 16x2M", ceSlabs(2 << 20), true, false},
      {"ce d2h 16x2M",
       [&](bool) {
         for (size_t k = 0; k < 16; k++)
           CK(cudaMemcpyAsync(host + k * (2 << 20), reinterpret_cast<uint8_t*>(dev2) + k * (2 << 20), 2 << 20, cudaMemcpyDeviceToHost, ms));
       },
       false, true},
  };
  for (int g : {4, 16, 64})
    for (int kind : {kPlain, kStreaming, kEvictLast}) {
      const char* kn = kind == kPlain ? "st" : kind == kStreaming ? "st.cs" : "st evict_last";
      ways.push_back({"sm " + std::to_string(g) + " " + kn, pull(g, kind), false, false});
    }

  // one trial: returns {compute end, copy end} from the start event, in ms; counts the trials whose
  // host enqueue took longer than the spin (their last ops may have been queued after the start)
  int trialsRun = 0, spinShort = 0;
  auto trial = [&](bool withCompute, const Way* w) {
    spin<<<1, 32, 0, cs>>>(spinCycles);
    CK(cudaGetLastError());
    const auto t0 = std::chrono::steady_clock::now();
    CK(cudaEventRecord(start, cs));
    CK(cudaStreamWaitEvent(ms, start, 0));
    if (withCompute)
      for (int l = 0; l < launches; l++) {
        CK(cudaEventRecord(launchEv[l], cs));
        if (mode == "plain") {
          readKernel<<<sms * 4, 256, 0, cs>>>(kv, n16, sink);
        } else if (mode == "lean") {
          leanRead<<<sms, 256, 0, cs>>>(kv, n16, sink);
        } else if (mode == "ring") {
          kvfetch::warpRing<3><<<dim3(32, kvfetch::kHeads), 4 * 32, 4 * 3 * 8192, cs>>>(reinterpret_cast<const uint8_t*>(kv), kvBlocks, fsum);
        } else if (mode == "ring6") {
          kvfetch::warpRing<6><<<dim3(32, kvfetch::kHeads), 2 * 32, 2 * 6 * 8192, cs>>>(reinterpret_cast<const uint8_t*>(kv), kvBlocks, fsum);
        } else if (mode == "block") {
          kvfetch::blockRing<3><<<sms, (kvfetch::kHeads + 1) * 32, 3 * kvfetch::kBlockBytes, cs>>>(reinterpret_cast<const uint8_t*>(kv), kvBlocks, 1, fsum);
        } else {
          for (int k = 0; k < 8; k++) readKernel<<<sms * 4, 256, 0, cs>>>(kv + (k * n16 / 8), n16 / 8, sink);
        }
        CK(cudaGetLastError());
      }
    else
      for (int l = 0; l < launches; l++) CK(cudaEventRecord(launchEv[l], cs));
    if (w) w->copy(w->paced);
    CK(cudaGetLastError());
    CK(cudaEventRecord(endC, cs));
    CK(cudaEventRecord(endM, ms));
    const double enqueueUs = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    trialsRun++;
    if (enqueueUs > 300.0) spinShort++;
    CK(cudaEventSynchronize(endC));
    CK(cudaEventSynchronize(endM));
    CK(cudaGetLastError());
    float c = 0, m = 0;
    CK(cudaEventElapsedTime(&c, start, endC));
    CK(cudaEventElapsedTime(&m, start, endM));
    return std::pair<double, double>(c, m);
  };
  const int trials = 7;
  for (int i = 0; i < 3; i++) trial(true, &ways[0]);
  std::vector<double> ca;
  for (int t = 0; t < trials; t++) ca.push_back(trial(true, nullptr).first);
  const double computeMs = median(ca);
  std::printf("%s, %d SMs; compute (%s): %d launches, %d x %zu MiB read = %.3f ms (%.0f GB/s); copies %zu MiB\n", prop.name, sms, mode.c_str(),
              mode == "short" ? 8 * launches : launches, launches, kvBytes >> 20, computeMs, launches * kvBytes / computeMs / 1e6, copyBytes >> 20);
  std::printf("%-20s %9s %9s %9s %9s %10s %9s  %s\n", "way", "copy ms", "GB/s", "both ms", "compute", "slowed %", "masking", "spin outlasted the enqueue");
  bool ok = true;
  for (const Way& w : ways) {
    trialsRun = spinShort = 0;
    std::vector<double> cp, both, cw, comp;
    for (int t = 0; t < trials; t++) {
      if (!w.d2h) {
        CK(cudaMemsetAsync(dev, 0, copyBytes, ms));
        CK(cudaStreamSynchronize(ms));
      }
      comp.push_back(trial(true, nullptr).first);
      cp.push_back(trial(false, &w).second);
      if (!w.d2h) {
        std::vector<uint8_t> got(copyBytes);
        CK(cudaMemcpy(got.data(), dev, copyBytes, cudaMemcpyDeviceToHost));
        if (std::memcmp(got.data(), want.data(), copyBytes) != 0) {
          std::printf("%s: BYTES DIFFER\n", w.name.c_str());
          ok = false;
        }
      }
      const auto r = trial(true, &w);
      both.push_back(std::max(r.first, r.second));
      cw.push_back(r.first);
      if (w.d2h) std::memcpy(host, want.data(), copyBytes);
    }
    const double c = median(comp), x = median(cp), b = median(both), slowed = median(cw) - c;
    std::printf("%-20s %9.3f %9.1f %9.3f %9.3f %9.1f%% %8.1f%%  %d of %d\n", w.name.c_str(), x, copyBytes / x / 1e6, b, median(cw), 100 * slowed / x,
                100 * (1 - std::max(0.0, b - c) / x), trialsRun - spinShort, trialsRun);
  }
  std::printf(ok ? "all bytes checked\n" : "SOME BYTES DIFFER\n");
  return ok ? 0 : 1;
}
