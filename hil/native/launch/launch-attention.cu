// The attention launcher: the plan (common/attention-plan.h) with the compiled kernel's
// occupancy, and the launches it names: the attention kernel, then the split reduce with
// programmatic dependent launch when there is more than one split.
#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>
#include "../common/attention-plan.h"
#include "../kernels/paged-attention-mma-fp16.cuh"
#include "../kernels/paged-attention-mma.cuh"
#include "../kernels/split-reduce.cuh"
#include "check-shapes.h"
#include "cuda-check.h"
#include "launch.h"

namespace hil::launch {
namespace {

namespace ap = attention_plan;
static_assert(ap::kChunkTokens == cuda::kChunkTokens, "the plan's chunk is the kernels'");
static_assert(ap::kBlockWarps == cuda::kV3Warps && ap::kBlockWarps == cuda::kMmaWarps, "the plan's warps per block are the kernels'");
static_assert(ap::kV3Stages == cuda::kV3Stages, "the plan's v3 stages are the kernel's");
static_assert(ap::kMmaD == cuda::kMmaD && ap::kHeadWarpsMax == cuda::kMmaHeadWarps, "the plan's tensor-core shape is the kernels'");
static_assert(ap::kInt4StageBytes == cuda::kMmaStageBytes && ap::kFp16StageBytes == cuda::kMmaF16StageBytes,
              "the plan's stage bytes are the kernels'");

// kernel<<<grid, block, smem, st>>>(args...), with programmatic stream serialization when `pdl`.
template <typename... KArgs, typename... Args>
void launchKernel(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t st, bool pdl, Args... args) {
  if (!pdl) {
    kernel<<<grid, block, smem, st>>>(args...);
    return;
  }
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = st;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  HIL_CUDA(cudaLaunchKernelEx(&cfg, kernel, args...));
}

// Resident blocks per SM of `kernel` for blocks of `warps` warps with `smem` bytes of dynamic
// shared memory on the current device, asked once; the first call for a kernel on a device raises
// its dynamic shared-memory limit to `most`, the largest any of its launches takes.
int blocksPerSm(const void* kernel, int warps, int smem, int most) {
  static std::mutex mu;
  static std::set<std::pair<const void*, int>> limitSet;                 // (kernel, device)
  static std::map<std::tuple<const void*, int, int, int>, int> blocks;  // (kernel, device, warps, smem)
  int dev = 0;
  HIL_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  if (limitSet.insert({kernel, dev}).second) {
    HIL_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
  }
  const auto key = std::make_tuple(kernel, dev, warps, smem);
  auto it = blocks.find(key);
  if (it != blocks.end()) return it->second;
  int got = 0;
  HIL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, kernel, warps * 32, smem));
  return blocks[key] = std::max(1, got);
}

// Calls f(kernel, most dynamic shared memory of any launch of it) with the plan's kernel: the
// occupancy query and the launch walk the same dispatch, so the kernel asked about is the one
// launched.
template <typename F>
void withV3(const AttentionPlan& p, int D, F&& f) {
  auto byGq = [&](auto d) {
    constexpr int Dc = decltype(d)::value;
    constexpr bool bulk = Dc == 128;  // the plan's bulkCopy: bulk stage fills at D 128 only
    constexpr int most = cuda::V3Cfg<Dc>::kSmemBytes;
    switch (p.queryHeadsPerWarp) {
      case 1: return f(cuda::pagedAttentionKernelV3<Dc, 1, bulk>, most);
      case 2: return f(cuda::pagedAttentionKernelV3<Dc, 2, bulk>, most);
      case 4: return f(cuda::pagedAttentionKernelV3<Dc, 4, bulk>, most);
      default: return f(cuda::pagedAttentionKernelV3<Dc, 8, bulk>, most);
    }
  };
  if (D == 64) return byGq(std::integral_constant<int, 64>{});
  if (D == 128) return byGq(std::integral_constant<int, 128>{});
  return byGq(std::integral_constant<int, 256>{});
}
template <typename F>
void withMmaInt4(const AttentionPlan& p, F&& f) {
  auto byHw = [&](auto stages) {
    constexpr int S = decltype(stages)::value;
    if (p.headWarps) return f(cuda::pagedAttentionMmaInt4<S, true>, std::min(cuda::MmaCfg<S, true>::kSmemBytes, ap::kHeadWarpsSmemLimit));
    return f(cuda::pagedAttentionMmaInt4<S, false>, cuda::MmaCfg<S>::kSmemBytes);
  };
  switch (p.stages) {
    case 4: return byHw(std::integral_constant<int, 4>{});
    case 8: return byHw(std::integral_constant<int, 8>{});
    default: return byHw(std::integral_constant<int, 6>{});
  }
}
template <typename F>
void withMmaFp16(const AttentionPlan& p, F&& f) {
  auto byHw = [&](auto stages) {
    constexpr int S = decltype(stages)::value;
    if (p.headWarps) return f(cuda::pagedAttentionMmaFp16<S, true>, std::min(cuda::MmaF16Cfg<S, true>::kSmemBytes, ap::kHeadWarpsSmemLimit));
    return f(cuda::pagedAttentionMmaFp16<S, false>, cuda::MmaF16Cfg<S>::kSmemBytes);
  };
  switch (p.stages) {
    case 2: return byHw(std::integral_constant<int, 2>{});
    case 4: return byHw(std::integral_constant<int, 4>{});
    case 6: return byHw(std::integral_constant<int, 6>{});
    default: return byHw(std::integral_constant<int, 3>{});
  }
}
template <typename F>
void withKernel(const AttentionPlan& p, int D, F&& f) {
  if (p.kernel == AttentionKernel::MmaInt4) return withMmaInt4(p, f);
  if (p.kernel == AttentionKernel::MmaFp16) return withMmaFp16(p, f);
  return withV3(p, D, f);
}

void launchSplitReduce(cudaStream_t st, const AttentionShape& s, const AttentionPlan& p, const float* partAcc,
                       const float* partMl, float* out) {
  launchKernel(cuda::pagedAttentionSplitReduce, dim3(s.qHeads, s.headDim / 32), dim3(cuda::kSplitReduceWarps * 32), 0, st,
               p.pdlReduce, p.splits, s.qHeads, s.headDim, partAcc, partMl, out);
  checkLaunch("pagedAttentionSplitReduce");
}

}  // namespace

AttentionPlan attentionPlan(const AttentionShape& s, int uniformPrecision, const AttentionOptions& o, const DeviceFacts& d) {
  const AttentionPlan p = chooseAttentionKernel(s, uniformPrecision, o, d);
  int blocks = 1;
  withKernel(p, s.headDim, [&](auto kernel, int most) {
    blocks = blocksPerSm(reinterpret_cast<const void*>(kernel), p.warpsPerBlock, p.dynamicSmemBytes, most);
  });
  return finishAttentionPlan(p, s, o, d.multiprocessors, blocks);
}

size_t attentionScratchFloats(const AttentionShape& s, int splits) {
  return static_cast<size_t>(splits) * s.qHeads * (s.headDim + 2);
}

void attention(cudaStream_t st, const AttentionPlan& p, const AttentionShape& s, const uint8_t* arena, size_t arenaBytes,
               const BlockEntry* table, const float* q, float* out, float* scratch) {
  checkAttentionShape(s);
  if (reinterpret_cast<uintptr_t>(arena) % 16) throw HilError("attention: arena must be 16-byte aligned");
  float* partAcc = scratch;
  float* partMl = scratch + static_cast<size_t>(p.splits) * s.qHeads * s.headDim;
  const dim3 grid(p.gridX, p.gridY), block(p.warpsPerBlock * 32);
  const int gq = s.qHeads / s.kvHeads;
  using Fp16Kernel = decltype(&cuda::pagedAttentionMmaFp16<3, false>);  // every FP16 kernel's signature: + early, evictFirst
  withKernel(p, s.headDim, [&](auto kernel, int) {
    if constexpr (std::is_same_v<decltype(kernel), Fp16Kernel>) {
      kernel<<<grid, block, p.dynamicSmemBytes, st>>>(s, gq, arena, arenaBytes, table, q, partAcc, partMl, out, p.earlyChunks,
                                                       p.evictFirst);
    } else {
      kernel<<<grid, block, p.dynamicSmemBytes, st>>>(s, gq, arena, arenaBytes, table, q, partAcc, partMl, out);
    }
  });
  checkLaunch(attentionKernelName(p.kernel));
  if (p.reduce == AttentionReduce::Split) launchSplitReduce(st, s, p, partAcc, partMl, out);
}

}  // namespace hil::launch
