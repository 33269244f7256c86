#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>
#include <cstdlib>
#include <cstring>
#include "../kernels/paged-attention-mma-fp16.cuh"
#include "../kernels/paged-attention-mma.cuh"
#include "../kernels/split-reduce.cuh"
#include "check-shapes.h"
#include "cuda-check.h"
#include "env-knob.h"
#include "launch.h"

namespace hil::launch {
namespace {

constexpr bool kDefaultV3 = true;  // v3 passed every kernel check on the H100 (2026-11-22); KVTIER_HIL_ATTN_KERNEL=v2 for the previous kernel
// Defaults measured on the H100 (2026-11-22, perf/HIL-NOTES.md "FP16 decode attention at 32k, v4"):
// with all four on, every bench case (fp16/int8/int4/int2/mixed at 4k/32k/128k) was faster than
// with all four off in the same call, and 33/33 checks passed on cuda and host.
constexpr bool kDefaultReduceSplit = true;  // KVTIER_HIL_ATTN_REDUCE=split|v3 (finishReduce below)
constexpr bool kDefaultPdl = true;       // KVTIER_HIL_ATTN_PDL=0|1
constexpr bool kDefaultBalance = true;   // KVTIER_HIL_ATTN_BALANCE=0|1 (attentionSplits)
constexpr bool kDefaultBulk = true;      // KVTIER_HIL_ATTN_COPY=lanes|l2hint|bulk (v3Copy)

// KVTIER_HIL_ATTN_PDL_CHAIN=1: the tensor-core attention kernels are launched with programmatic
// dependent launch too, after whatever the stream ran before (the previous call's split reduce,
// which lets them be scheduled at its start): their blocks become resident early and wait in
// griddepcontrol.wait, before any memory access, for that kernel to complete, which hides the
// launch gap between dependent kernels. Off by default.
bool pdlChain() {
  static const bool on = envFlag("KVTIER_HIL_ATTN_PDL_CHAIN", false);
  return on;
}
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

// The most dynamic shared memory a head-warp block may take (the rings of all its warps), below the
// H100's 227 KB so that the static arrays fit beside it.
constexpr int kHeadWarpsSmemLimit = 200 * 1024;

// Resident blocks per SM of `Kernel` for blocks of `warps` warps (1..32) with `smem` bytes of dynamic
// shared memory, asked once per block size; the first call raises the kernel's dynamic
// shared-memory limit to `most`, the largest any of its launches takes.
template <auto Kernel>
int blocksPerSm(int warps, int smem, int most) {
  static const bool limitSet = [most] {
    HIL_CUDA(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
    return true;
  }();
  (void)limitSet;
  static std::atomic<int> blocks[33] = {};  // per warp count, 0 = not yet asked
  std::atomic<int>& b = blocks[warps];
  if (b.load() == 0) {
    int got = 0;
    HIL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, Kernel, warps * 32, smem));
    b.store(std::max(1, got));
  }
  return b.load();
}

int totalChunks(const AttentionShape& s) { return (s.contextTokens + cuda::kChunkTokens - 1) / cuda::kChunkTokens; }

// Which attention kernel runs: v3 (cp.async pipeline, kernels/paged-attention-v3.cuh) unless
// KVTIER_HIL_ATTN_KERNEL=v2 asks for the previous one (kept for comparison and as a fallback).
bool useV3() {
  static const bool v3 = envChoice("KVTIER_HIL_ATTN_KERNEL", {{"v2", 0}, {"v3", 1}}, kDefaultV3) != 0;
  return v3;
}

// Pipeline depth of v3: 3 stages, or 2 (KVTIER_HIL_ATTN_STAGES=2; built for D 128, GQ 4 only,
// the Llama-3-8B shape, to measure the trade of depth against resident warps).
bool v3TwoStages(int D, int gq) {
  static const bool two = envChoice("KVTIER_HIL_ATTN_STAGES", {{"2", 1}, {"3", 0}}, 0) != 0;
  return two && D == 128 && gq > 2 && gq <= 4;
}

// Score reduction of v3: reduce-scatter (default) or v2's per-score shuffles
// (KVTIER_HIL_ATTN_RS=0).
bool v3Rs() {
  static const bool rs = envFlag("KVTIER_HIL_ATTN_RS", true);
  return rs;
}

// Packed stages (KVTIER_HIL_ATTN_PACK=1): a stage carries up to cuda::kPackMax consecutive
// chunks of one sub-16-bit precision (kernels/paged-attention-v3.cuh). With RS only (the
// default; ignored with KVTIER_HIL_ATTN_RS=0); with KVTIER_HIL_ATTN_STAGES=2 (D 128, GQ 4) the
// packed kernel runs 2 stages at 3 blocks (12 warps) per SM.
bool v3PackEnv() {
  static const bool pack = envFlag("KVTIER_HIL_ATTN_PACK", false);
  return pack;
}
bool v3Pack() { return v3Rs() && v3PackEnv(); }

// Split ownership, strided by default (KVTIER_HIL_ATTN_STRIDED=0: contiguous): split x takes the
// granules x, x + splits, ... of kV3Warps chunks instead of one contiguous range, so that a table
// whose FP16 blocks sit together (sinks, recent tokens) costs every split the same. Measured on the
// H100 (perf/HIL-NOTES.md): mixed tables -10..15%, uniform tables within +-3%.
bool v3Strided() {
  static const bool strided = envFlag("KVTIER_HIL_ATTN_STRIDED", true);
  return strided;
}

// How v3 fills its stages (D 128 with RS and unpacked stages; other shapes and KVTIER_HIL_ATTN_PACK=1
// always use lanes): KVTIER_HIL_ATTN_COPY=bulk (the default): lane 0 issues one bulk copy per range
// (TMA engine) on a per-stage mbarrier; =lanes: every lane 16-byte cp.async pieces (before
// 2026-11-22); =l2hint: lanes with the L2::256B prefetch-size hint (measurement knob).
// Kernels: paged-attention-v3.cuh (template CP).
int v3Copy() {
  static const int cp = envChoice("KVTIER_HIL_ATTN_COPY", {{"l2hint", cuda::kV3CopyL2Hint}, {"bulk", cuda::kV3CopyBulk}, {"lanes", cuda::kV3CopyLanes}},
                                  kDefaultBulk ? cuda::kV3CopyBulk : cuda::kV3CopyLanes);
  return cp;
}

template <int D, int GQ, int S, bool RS, int PM, int CP = cuda::kV3CopyLanes>
int v3BlocksPerSmRs() {
  static const int blocks = [] {
    auto kernel = cuda::pagedAttentionKernelV3<D, GQ, S, RS, PM, CP>;
    constexpr int smem = cuda::V3Cfg<D, S, PM>::kSmemBytes;
    HIL_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int b = 0;
    HIL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, cuda::kV3Warps * 32, smem));
    return std::max(1, b);
  }();
  return blocks;
}
template <int D, int GQ, int S>
int v3BlocksPerSm() {
  if (!v3Rs()) return v3BlocksPerSmRs<D, GQ, S, false, 1>();
  if (v3Pack()) return v3BlocksPerSmRs<D, GQ, S, true, cuda::kPackMax>();
  return v3BlocksPerSmRs<D, GQ, S, true, 1>();
}

template <int D>
int v3BlocksPerSmD(int gq) {
  if (gq == 1) return v3BlocksPerSm<D, 1, 3>();
  if (gq == 2) return v3BlocksPerSm<D, 2, 3>();
  if (gq <= 4) {
    if constexpr (D == 128) {
      if (v3TwoStages(D, gq)) return v3BlocksPerSm<D, 4, 2>();
    }
    return v3BlocksPerSm<D, 4, 3>();
  }
  return v3BlocksPerSm<D, 8, 3>();
}

template <int D, int GQ, int S>
void launchV3(cudaStream_t st, const AttentionShape& s, dim3 grid, const uint8_t* arena, size_t arenaBytes,
              const BlockEntry* table, const float* q, int chunksPerSplit, float* partAcc, float* partMl, float* out) {
  v3BlocksPerSm<D, GQ, S>();  // raises the dynamic shared-memory limit once
  const int gq = s.qHeads / s.kvHeads;
  const bool strided = v3Strided();
  if (!v3Rs()) {
    cuda::pagedAttentionKernelV3<D, GQ, S, false><<<grid, cuda::kV3Warps * 32, cuda::V3Cfg<D, S>::kSmemBytes, st>>>(
        s, gq, arena, arenaBytes, table, q, chunksPerSplit, strided, partAcc, partMl, out);
  } else if (v3Pack()) {
    constexpr int PM = cuda::kPackMax;
    cuda::pagedAttentionKernelV3<D, GQ, S, true, PM><<<grid, cuda::kV3Warps * 32, cuda::V3Cfg<D, S, PM>::kSmemBytes, st>>>(
        s, gq, arena, arenaBytes, table, q, chunksPerSplit, strided, partAcc, partMl, out);
  } else {
    if constexpr (D == 128) {
      if (v3Copy() == cuda::kV3CopyL2Hint) {
        constexpr int CP = cuda::kV3CopyL2Hint;
        v3BlocksPerSmRs<D, GQ, S, true, 1, CP>();  // raises the dynamic shared-memory limit once
        cuda::pagedAttentionKernelV3<D, GQ, S, true, 1, CP><<<grid, cuda::kV3Warps * 32, cuda::V3Cfg<D, S>::kSmemBytes, st>>>(
            s, gq, arena, arenaBytes, table, q, chunksPerSplit, strided, partAcc, partMl, out);
        return checkLaunch("pagedAttentionKernelV3");
      }
      if (v3Copy() == cuda::kV3CopyBulk) {
        constexpr int CP = cuda::kV3CopyBulk;
        v3BlocksPerSmRs<D, GQ, S, true, 1, CP>();
        cuda::pagedAttentionKernelV3<D, GQ, S, true, 1, CP><<<grid, cuda::kV3Warps * 32, cuda::V3Cfg<D, S>::kSmemBytes, st>>>(
            s, gq, arena, arenaBytes, table, q, chunksPerSplit, strided, partAcc, partMl, out);
        return checkLaunch("pagedAttentionKernelV3");
      }
    }
    cuda::pagedAttentionKernelV3<D, GQ, S, true><<<grid, cuda::kV3Warps * 32, cuda::V3Cfg<D, S>::kSmemBytes, st>>>(
        s, gq, arena, arenaBytes, table, q, chunksPerSplit, strided, partAcc, partMl, out);
  }
  checkLaunch("pagedAttentionKernelV3");
}

// The merge after v3 (and after the tensor-core kernel with KVTIER_HIL_ATTN_MMA_REDUCE=v3, which passes
// splitReduce false: v3's own reduce kernel whatever KVTIER_HIL_ATTN_REDUCE says).
void finishReduce(cudaStream_t st, const AttentionShape& s, int splits, float* partAcc, float* partMl, float* out,
                  bool splitReduce = true);
void launchSplitReduce(cudaStream_t st, const AttentionShape& s, int splits, const float* partAcc, const float* partMl,
                       float* out, bool pdl);

// ---- tensor-core INT4 kernel (kernels/paged-attention-mma.cuh) ----
static_assert(cuda::kMmaWarps == cuda::kV3Warps, "attentionSplits counts warps per block as v3's");
// On by default (KVTIER_HIL_ATTN_MMA=0: off): uniform INT4 tables (the caller's uniformPrecision
// promise) at D 128, G 128, <= 4 query heads per kv head run on the tensor cores (measured on the
// H100 with the knob set: 33/33 checks, INT4 2.5-2.65x FP16 at 128k, perf/HIL-NOTES.md). Anything
// else (other shapes, precisions, mixed tables, no promise, KVTIER_HIL_ATTN_KERNEL=v2) runs as before.
// KVTIER_HIL_ATTN_MMA_STAGES=4|6|8: copy stages per warp (default 6; 4 allows 5 blocks per
// SM, 8 only 3). KVTIER_HIL_ATTN_MMA_FUSE=1: the reduce runs in the attention kernel (below).
// The splits are merged by the path's own reduce kernel, launched with PDL (mmaReduce), and the
// split count keeps every warp's chunk count equal (attentionSplits, KVTIER_HIL_ATTN_MMA_EVEN).
bool mmaOn() {
  static const bool on = envFlag("KVTIER_HIL_ATTN_MMA", true);
  return on;
}
int mmaStages() {
  static const int stages = envChoice("KVTIER_HIL_ATTN_MMA_STAGES", {{"4", 4}, {"6", 6}, {"8", 8}}, 6);
  return stages;
}
bool useMma(const AttentionShape& s, int uniformPrecision) {
  return mmaOn() && useV3() && uniformPrecision == kInt4 && s.headDim == cuda::kMmaD && s.groupSize == cuda::kMmaD &&
         s.qHeads / s.kvHeads <= 4;
}

// KVTIER_HIL_ATTN_MMA_COPY=lanes: every lane copies 16-byte pieces with cp.async instead of one
// lane issuing 4 bulk copies per chunk on the TMA engine (the default).
bool mmaBulk() {
  static const bool bulk = envChoice("KVTIER_HIL_ATTN_MMA_COPY", {{"lanes", 0}, {"bulk", 1}}, 1) != 0;
  return bulk;
}

// KVTIER_HIL_ATTN_MMA_DYN=1 (measurement knob, off by default): dynamic chunk ownership (the warp's
// first blocks static, the rest claimed one block at a time from a per-kv-head counter;
// kernels/paged-attention-mma.cuh). Measured on the H100 (perf/HIL-NOTES.md): it evens out the
// multiprocessors' busy time but is 25% slower at 128k (claims and entries on the critical path,
// copy operands no longer in uniform registers), so v3's static ownership stays the default.
bool mmaDyn() {
  static const bool dyn = envFlag("KVTIER_HIL_ATTN_MMA_DYN", false);
  return dyn;
}

// KVTIER_HIL_ATTN_MMA_STEAL=pct (measurement knob, off when unset): tail stealing: static
// ownership of pct% of each kv head's chunks, the rest claimed in granules of
// KVTIER_HIL_ATTN_MMA_STEAL_G chunks (default 2) from a per-head counter (TAIL in
// kernels/paged-attention-mma.cuh). Not with KVTIER_HIL_ATTN_MMA_DYN=1.
int mmaStealPct() {
  static const int pct = envInt("KVTIER_HIL_ATTN_MMA_STEAL", -1, 0, 100);
  return pct;
}
int mmaStealG() {
  static const int g = envInt("KVTIER_HIL_ATTN_MMA_STEAL_G", 2, 1, 32);
  return g;
}
bool mmaTail() { return !mmaDyn() && mmaStealPct() >= 0; }

template <int S, bool BULK, bool DYN, bool TAIL = false>
int mmaBlocksPerSmT() {
  static const int blocks = [] {
    auto kernel = cuda::pagedAttentionMmaInt4<S, BULK, DYN, TAIL>;
    constexpr int smem = cuda::MmaCfg<S>::kSmemBytes;
    HIL_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int b = 0;
    HIL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, cuda::kMmaWarps * 32, smem));
    return std::max(1, b);
  }();
  return blocks;
}
template <bool BULK, bool DYN>
int mmaBlocksPerSmB() {
  const int st = mmaStages();
  return st == 4 ? mmaBlocksPerSmT<4, BULK, DYN>() : st == 8 ? mmaBlocksPerSmT<8, BULK, DYN>() : mmaBlocksPerSmT<6, BULK, DYN>();
}
template <bool DYN>
int mmaBlocksPerSmD() { return mmaBulk() ? mmaBlocksPerSmB<true, DYN>() : mmaBlocksPerSmB<false, DYN>(); }
bool mmaHeadsEnv();
bool mmaFuse();
// Head warps on the INT4 tensor-core kernel (KVTIER_HIL_ATTN_MMA_HEADS, see mmaHeadsEnv): static
// ownership with bulk copies only, kvHeads <= cuda::kMmaHeadWarps, the stages of every warp in one
// block's shared memory, 4 to 8 kv heads (fewer share no KV block and leave the SM with fewer warps;
// measured with 8), and at least kHeadWarpsMinChunks chunks per kv head (16k tokens): below,
// the per-warp q set-up of 4 query heads costs more than the reads gain (H100, Llama-3-8B layer:
// 4k 14.1-15.9 vs 13.5-14.0 us without; 32k 24.7-25.4 vs 25.4-27.4; perf/HIL-NOTES.md).
constexpr int kHeadWarpsMinChunks = 1024;
bool mmaInt4HeadWarps(const AttentionShape& s) {
  return mmaHeadsEnv() && s.kvHeads >= 4 && s.kvHeads <= cuda::kMmaHeadWarps && totalChunks(s) >= kHeadWarpsMinChunks && !mmaDyn() &&
         !mmaTail() && !mmaFuse() && mmaBulk() && s.kvHeads * mmaStages() * cuda::kMmaStageBytes <= kHeadWarpsSmemLimit;
}
template <int S>
int mmaHeadBlocksPerSmT(int kvHeads) {
  return blocksPerSm<cuda::pagedAttentionMmaInt4<S, true, false, false, true>>(
      kvHeads, cuda::MmaCfg<S, true>::smemBytes(kvHeads), std::min(cuda::MmaCfg<S, true>::kSmemBytes, kHeadWarpsSmemLimit));
}
int mmaBlocksPerSm(const AttentionShape& s) {
  if (mmaInt4HeadWarps(s)) {
    const int st = mmaStages();
    return st == 4 ? mmaHeadBlocksPerSmT<4>(s.kvHeads) : st == 8 ? mmaHeadBlocksPerSmT<8>(s.kvHeads) : mmaHeadBlocksPerSmT<6>(s.kvHeads);
  }
  if (mmaTail()) {  // same occupancy expected; queried on the kernel that runs
    const int st = mmaStages();
    const bool bulk = mmaBulk();
    if (st == 4) return bulk ? mmaBlocksPerSmT<4, true, false, true>() : mmaBlocksPerSmT<4, false, false, true>();
    if (st == 8) return bulk ? mmaBlocksPerSmT<8, true, false, true>() : mmaBlocksPerSmT<8, false, false, true>();
    return bulk ? mmaBlocksPerSmT<6, true, false, true>() : mmaBlocksPerSmT<6, false, false, true>();
  }
  return mmaDyn() ? mmaBlocksPerSmD<true>() : mmaBlocksPerSmD<false>();
}

// KVTIER_HIL_ATTN_MMA_FUSE=1: the last block of each kv head merges the splits (no reduce
// kernel). Arrival counters per kv head live in device memory, one row per stream (streams run
// concurrently; launches on one stream do not), zero at load and reset by each last block.
bool mmaFuse() {
  static const bool fuse = envFlag("KVTIER_HIL_ATTN_MMA_FUSE", false);
  return fuse;
}
constexpr int kFuseStreams = 16, kFuseHeads = 1024;
__device__ unsigned gMmaCounters[kFuseStreams][kFuseHeads];  // arrivals of the blocks of each kv head
__device__ unsigned gMmaClaims[kFuseStreams][kFuseHeads];    // dynamic ownership: blocks claimed per kv head
// The counter row of `st` on the current device (its claim row at the same offset of gMmaClaims),
// or nullptr (no fusing, static ownership) once every row is taken.
unsigned* mmaCounters(cudaStream_t st, unsigned** claims) {
  static std::mutex mu;
  static std::vector<std::pair<int, cudaStream_t>> rows;  // (device, stream) per row
  int dev = 0;
  HIL_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  size_t row = 0;
  while (row < rows.size() && rows[row] != std::make_pair(dev, st)) ++row;
  if (row == rows.size()) {
    if (rows.size() == kFuseStreams) return nullptr;
    rows.emplace_back(dev, st);
  }
  void* base = nullptr;
  HIL_CUDA(cudaGetSymbolAddress(&base, gMmaCounters));
  void* claimBase = nullptr;
  HIL_CUDA(cudaGetSymbolAddress(&claimBase, gMmaClaims));
  *claims = static_cast<unsigned*>(claimBase) + row * kFuseHeads;
  return static_cast<unsigned*>(base) + row * kFuseHeads;
}

// The merge of the tensor-core kernel's splits: KVTIER_HIL_ATTN_MMA_REDUCE unset: the split reduce
// (cuda::pagedAttentionSplitReduce: grid (qHeads, D / 32), every load of a thread in flight at once);
// =v3: v3's reduce kernel (pagedAttentionReduceV3); =none: no merge at all, after either tensor-core
// kernel (a measurement knob that times the attention kernel alone: the output is NOT written,
// checks fail with it).
int mmaReduceMode() {  // 0 own, 1 v3, 2 none
  static const int mode = envChoice("KVTIER_HIL_ATTN_MMA_REDUCE", {{"split", 0}, {"v3", 1}, {"none", 2}}, 0);
  return mode;
}
// The tensor-core path's reduce kernel is launched with programmatic dependent launch (its blocks
// are scheduled while the attention grid runs and wait for it in griddepcontrol.wait); on by
// default, KVTIER_HIL_ATTN_MMA_PDL=0: a plain launch.
bool mmaPdl() {
  static const bool pdl = envFlag("KVTIER_HIL_ATTN_MMA_PDL", true);  // default on: 33/33 checks and -1..-2 us on the H100 (perf/HIL-NOTES.md)
  return pdl;
}
void mmaReduce(cudaStream_t st, const AttentionShape& s, int splits, float* partAcc, float* partMl, float* out) {
  const int mode = mmaReduceMode();
  if (splits <= 1 || mode == 2) return;
  if (mode == 1) return finishReduce(st, s, splits, partAcc, partMl, out, false);
  launchSplitReduce(st, s, splits, partAcc, partMl, out, mmaPdl());
}

struct MmaSync {
  unsigned* counters;  // arrivals per kv head (dynamic ownership or fused reduce), else nullptr
  unsigned* claims;    // claims per kv head (dynamic ownership), else nullptr
  bool fuse;           // the last block of each kv head merges the splits
  bool tail;           // tail stealing (claims != nullptr)
};
template <int S, bool BULK, bool DYN, bool TAIL = false>
void launchMmaSBD(cudaStream_t st, const AttentionShape& s, dim3 grid, const uint8_t* arena, size_t arenaBytes,
                  const BlockEntry* table, const float* q, int chunksPerSplit, float* partAcc, float* partMl, float* out,
                  const MmaSync& sy) {
  mmaBlocksPerSmT<S, BULK, DYN, TAIL>();  // raises the dynamic shared-memory limit once
  launchKernel(cuda::pagedAttentionMmaInt4<S, BULK, DYN, TAIL>, grid, dim3(cuda::kMmaWarps * 32), cuda::MmaCfg<S>::kSmemBytes, st,
               pdlChain(), s, s.qHeads / s.kvHeads, arena, arenaBytes, table, q, chunksPerSplit, v3Strided(), partAcc, partMl,
               out, sy.counters, sy.claims, sy.fuse, mmaStealPct(), mmaStealG());
  checkLaunch("pagedAttentionMmaInt4");
}
template <int S, bool BULK>
void launchMmaSB(cudaStream_t st, const AttentionShape& s, dim3 grid, const uint8_t* arena, size_t arenaBytes,
                 const BlockEntry* table, const float* q, int chunksPerSplit, float* partAcc, float* partMl, float* out,
                 const MmaSync& sy) {
  if (sy.tail) launchMmaSBD<S, BULK, false, true>(st, s, grid, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out, sy);
  else if (sy.claims) launchMmaSBD<S, BULK, true>(st, s, grid, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out, sy);
  else launchMmaSBD<S, BULK, false>(st, s, grid, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out, sy);
}
template <int S>
void launchMmaT(cudaStream_t st, const AttentionShape& s, dim3 grid, const uint8_t* arena, size_t arenaBytes,
                const BlockEntry* table, const float* q, int chunksPerSplit, float* partAcc, float* partMl, float* out,
                const MmaSync& sy) {
  if (mmaBulk()) launchMmaSB<S, true>(st, s, grid, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out, sy);
  else launchMmaSB<S, false>(st, s, grid, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out, sy);
}
template <int S>
void launchMmaHeads(cudaStream_t st, const AttentionShape& s, int splits, const uint8_t* arena, size_t arenaBytes,
                    const BlockEntry* table, const float* q, int chunksPerSplit, float* partAcc, float* partMl, float* out) {
  mmaHeadBlocksPerSmT<S>(s.kvHeads);  // raises the dynamic shared-memory limit once
  launchKernel(cuda::pagedAttentionMmaInt4<S, true, false, false, true>, dim3(splits), dim3(s.kvHeads * 32),
               cuda::MmaCfg<S, true>::smemBytes(s.kvHeads), st, pdlChain(), s, s.qHeads / s.kvHeads, arena, arenaBytes, table, q,
               chunksPerSplit, v3Strided(), partAcc, partMl, out, static_cast<unsigned*>(nullptr), static_cast<unsigned*>(nullptr),
               false, 0, 1);
  checkLaunch("pagedAttentionMmaInt4");
}
void runMma(cudaStream_t st, const AttentionShape& s, int splits, const uint8_t* arena, size_t arenaBytes,
            const BlockEntry* table, const float* q, float* out, float* scratch) {
  const int chunksPerSplit = (totalChunks(s) + splits - 1) / splits;
  float* partAcc = scratch;
  float* partMl = scratch + static_cast<size_t>(splits) * s.qHeads * s.headDim;
  if (mmaInt4HeadWarps(s)) {
    const int stages = mmaStages();
    if (stages == 4) launchMmaHeads<4>(st, s, splits, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
    else if (stages == 8) launchMmaHeads<8>(st, s, splits, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
    else launchMmaHeads<6>(st, s, splits, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
    return mmaReduce(st, s, splits, partAcc, partMl, out);
  }
  const dim3 grid(splits, s.kvHeads);
  const bool fuse = splits > 1 && mmaFuse() && splits <= cuda::kMmaFuseMaxSplits;
  MmaSync sy{nullptr, nullptr, false, false};
  unsigned* claims = nullptr;
  if ((fuse || mmaDyn() || mmaTail()) && s.kvHeads <= kFuseHeads) sy.counters = mmaCounters(st, &claims);
  if (sy.counters) {
    sy.claims = mmaDyn() || mmaTail() ? claims : nullptr;
    sy.tail = mmaTail();
    sy.fuse = fuse;
  }
  const int stages = mmaStages();
  if (stages == 4) launchMmaT<4>(st, s, grid, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out, sy);
  else if (stages == 8) launchMmaT<8>(st, s, grid, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out, sy);
  else launchMmaT<6>(st, s, grid, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out, sy);
  if (!sy.fuse) mmaReduce(st, s, splits, partAcc, partMl, out);
}

// ---- tensor-core FP16 kernel (kernels/paged-attention-mma-fp16.cuh) ----
// Uniform FP16 tables (the caller's uniformPrecision promise) at D 128, <= 4 query heads per kv
// head; on by default, KVTIER_HIL_ATTN_MMA_FP16=0 (or KVTIER_HIL_ATTN_MMA=0, every tensor-core
// kernel) runs v3 instead. KVTIER_HIL_ATTN_MMA_FP16_STAGES=2|3|4|6: copy stages of 8 KB per warp
// (default 3: two blocks per SM, as v3). The splits are merged by the split reduce (PDL as v3's,
// KVTIER_HIL_ATTN_PDL) and balanced as v3's (KVTIER_HIL_ATTN_BALANCE).
bool mmaFp16On() {
  static const bool on = envFlag("KVTIER_HIL_ATTN_MMA_FP16", true);
  return on;
}
// Whether the call's KV bytes (FP16) exceed the device's L2: the KV then streams from DRAM at every
// launch, and nothing of it is left in L2 for the next one.
bool kvExceedsL2(const AttentionShape& s) {
  static std::atomic<int> l2Of[64] = {};  // per device (L2 bytes, 0 = not read yet)
  int dev = 0;
  HIL_CUDA(cudaGetDevice(&dev));
  int l2 = dev < 64 ? l2Of[dev].load(std::memory_order_relaxed) : 0;
  if (l2 == 0) {
    HIL_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    if (dev < 64) l2Of[dev].store(l2, std::memory_order_relaxed);
  }
  const double kvBytes = static_cast<double>(s.contextTokens) * s.kvHeads * s.headDim * 2.0 * 2.0;
  return kvBytes > l2;
}
// KVTIER_HIL_ATTN_MMA_FP16_EARLY=n: the chunks each warp asks for before it prepares q (1 .. stages - 1).
// Unset: 2 when the KV exceeds L2 (`kvStreams`; H100 32k, gated: 56.2-56.5 vs 56.9-57.0 us), else 1
// (its first chunk ahead of every warp's later ones in the memory queue; 4k 13.8-14.0 vs 14.8-15.0 us with 2).
int mmaFp16Early(bool kvStreams) {
  static const int early = envInt("KVTIER_HIL_ATTN_MMA_FP16_EARLY", 0, 1, 31);
  return early ? early : kvStreams ? 2 : 1;
}
// KVTIER_HIL_ATTN_MMA_FP16_PROBE=nomath|nomerge: measurement only, the output is wrong. nomath: the
// kernel fetches every chunk into shared memory but skips the math (and so, as compiled, the shared
// reads); nomerge: also stores no partial results
// (perf/HIL-NOTES.md, session 7: where the kernel's time goes beyond its fetch).
int mmaFp16Probe() {
  static const int probe = envChoice("KVTIER_HIL_ATTN_MMA_FP16_PROBE", {{"none", 0}, {"nomath", 1}, {"nomerge", 2}}, 0);
  return probe;
}
// KVTIER_HIL_ATTN_MMA_FP16_EVICT=first|normal|auto: with first, the KV bulk copies carry an L2
// evict-first policy, so that the stream of KV bytes (read once) does not push the block table, q
// and the partial results out of L2 between launches. auto (default): first when the KV exceeds L2
// (`kvStreams`; H100 32k, gated: 56.0 vs 57.0 us; 4k, L2-resident: 15.1-15.5 vs 13.8-14.0 us, so not there).
bool mmaFp16EvictFirst(bool kvStreams) {
  static const int mode = envChoice("KVTIER_HIL_ATTN_MMA_FP16_EVICT", {{"auto", 2}, {"normal", 0}, {"first", 1}}, 2);
  return mode == 2 ? kvStreams : mode == 1;
}
int mmaFp16Stages() {
  static const int stages = envChoice("KVTIER_HIL_ATTN_MMA_FP16_STAGES", {{"2", 2}, {"3", 3}, {"4", 4}, {"6", 6}}, 3);
  return stages;
}
bool useMmaFp16(const AttentionShape& s, int uniformPrecision) {
  return mmaOn() && mmaFp16On() && useV3() && uniformPrecision == kFp16 && s.headDim == cuda::kMmaD &&
         s.qHeads / s.kvHeads <= 4;
}
// Head warps: the tensor-core kernels take one warp per kv head and grid (splits) instead of 4
// warps per kv head and grid (splits, kvHeads), so that the kv heads of a KV block (contiguous in
// its sections) are read by one multiprocessor together (kernels/paged-attention-mma*.cuh); only
// for kvHeads <= cuda::kMmaHeadWarps, otherwise the usual grid. INT4: KVTIER_HIL_ATTN_MMA_HEADS
// (default on: its 1 KB + 64 B copies per chunk gain the most; H100 128k 63.8-64.2 vs 70.7-72.3 us,
// perf/HIL-NOTES.md); FP16: KVTIER_HIL_ATTN_MMA_FP16_HEADS (default off: 4 KB copies, no gain).
bool mmaHeadsEnv() {
  static const bool on = envFlag("KVTIER_HIL_ATTN_MMA_HEADS", true);
  return on;
}
bool mmaFp16HeadsEnv() {
  static const bool on = envFlag("KVTIER_HIL_ATTN_MMA_FP16_HEADS", false);
  return on;
}
int mmaFp16Stages();
bool mmaFp16HeadWarps(const AttentionShape& s) {  // and the stages of every warp fit one block's shared memory
  return mmaFp16HeadsEnv() && s.kvHeads <= cuda::kMmaHeadWarps && s.kvHeads * mmaFp16Stages() * cuda::kMmaF16StageBytes <= kHeadWarpsSmemLimit;
}
template <int S, bool HW>
int mmaFp16BlocksPerSmT(int kvHeads) {
  const int warps = HW ? kvHeads : cuda::kMmaWarps;
  return blocksPerSm<cuda::pagedAttentionMmaFp16<S, HW>>(warps, cuda::MmaF16Cfg<S, HW>::smemBytes(warps),
                                                          std::min(cuda::MmaF16Cfg<S, HW>::kSmemBytes, kHeadWarpsSmemLimit));
}
template <bool HW>
int mmaFp16BlocksPerSmH(int kvHeads) {
  switch (mmaFp16Stages()) {
    case 2: return mmaFp16BlocksPerSmT<2, HW>(kvHeads);
    case 4: return mmaFp16BlocksPerSmT<4, HW>(kvHeads);
    case 6: return mmaFp16BlocksPerSmT<6, HW>(kvHeads);
    default: return mmaFp16BlocksPerSmT<3, HW>(kvHeads);
  }
}
int mmaFp16BlocksPerSm(const AttentionShape& s) {
  return mmaFp16HeadWarps(s) ? mmaFp16BlocksPerSmH<true>(s.kvHeads) : mmaFp16BlocksPerSmH<false>(s.kvHeads);
}
template <int S, bool HW>
void launchMmaFp16(cudaStream_t st, const AttentionShape& s, int splits, const uint8_t* arena, size_t arenaBytes,
                   const BlockEntry* table, const float* q, int chunksPerSplit, float* partAcc, float* partMl, float* out) {
  mmaFp16BlocksPerSmT<S, HW>(s.kvHeads);  // raises the dynamic shared-memory limit once
  const int warps = HW ? s.kvHeads : cuda::kMmaWarps;
  const dim3 grid = HW ? dim3(splits) : dim3(splits, s.kvHeads);
  const bool kvStreams = kvExceedsL2(s);
  launchKernel(cuda::pagedAttentionMmaFp16<S, HW>, grid, dim3(warps * 32), cuda::MmaF16Cfg<S, HW>::smemBytes(warps), st,
               pdlChain(), s, s.qHeads / s.kvHeads, arena, arenaBytes, table, q, chunksPerSplit, v3Strided(), partAcc, partMl,
               out, mmaFp16Early(kvStreams), mmaFp16Probe(), mmaFp16EvictFirst(kvStreams));
  checkLaunch("pagedAttentionMmaFp16");
}
template <bool HW>
void launchMmaFp16H(cudaStream_t st, const AttentionShape& s, int splits, const uint8_t* arena, size_t arenaBytes,
                    const BlockEntry* table, const float* q, int chunksPerSplit, float* partAcc, float* partMl, float* out) {
  switch (mmaFp16Stages()) {
    case 2: return launchMmaFp16<2, HW>(st, s, splits, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
    case 4: return launchMmaFp16<4, HW>(st, s, splits, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
    case 6: return launchMmaFp16<6, HW>(st, s, splits, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
    default: return launchMmaFp16<3, HW>(st, s, splits, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
  }
}
bool v3Pdl();
void runMmaFp16(cudaStream_t st, const AttentionShape& s, int splits, const uint8_t* arena, size_t arenaBytes,
                const BlockEntry* table, const float* q, float* out, float* scratch) {
  const int chunksPerSplit = (totalChunks(s) + splits - 1) / splits;
  float* partAcc = scratch;
  float* partMl = scratch + static_cast<size_t>(splits) * s.qHeads * s.headDim;
  if (mmaFp16HeadWarps(s)) launchMmaFp16H<true>(st, s, splits, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
  else launchMmaFp16H<false>(st, s, splits, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
  if (splits > 1 && mmaReduceMode() != 2) launchSplitReduce(st, s, splits, partAcc, partMl, out, v3Pdl());
}

template <int D, int GQ>
void run(cudaStream_t st, const AttentionShape& s, int splits, const uint8_t* arena, size_t arenaBytes,
         const BlockEntry* table, const float* q, float* out, float* scratch) {
  const int chunksPerSplit = (totalChunks(s) + splits - 1) / splits;
  float* partAcc = scratch;
  float* partMl = scratch + static_cast<size_t>(splits) * s.qHeads * s.headDim;
  const dim3 grid(splits, s.kvHeads);
  if (useV3()) {
    if constexpr (D == 128 && GQ == 4) {
      if (v3TwoStages(D, GQ)) {
        launchV3<D, GQ, 2>(st, s, grid, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
        return finishReduce(st, s, splits, partAcc, partMl, out);
      }
    }
    launchV3<D, GQ, 3>(st, s, grid, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
  } else {
    cuda::pagedAttentionKernel<D, GQ><<<grid, cuda::kAttnWarps * 32, 0, st>>>(
        s, s.qHeads / s.kvHeads, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
    checkLaunch("pagedAttentionKernel");
  }
  finishReduce(st, s, splits, partAcc, partMl, out);
}

// Reduce kernel of v3 launched with programmatic dependent launch (default on; KVTIER_HIL_ATTN_PDL=0
// off): its blocks are scheduled while the attention grid still runs and wait on the grid's
// completion in the kernel (griddepcontrol.wait), which hides the launch gap between the two kernels.
bool v3Pdl() {
  static const bool pdl = envFlag("KVTIER_HIL_ATTN_PDL", kDefaultPdl);
  return pdl;
}

// Which reduce kernel follows v3: KVTIER_HIL_ATTN_REDUCE=split (the default): pagedAttentionSplitReduce
// (kernels/split-reduce.cuh: grid (qHeads, D / 32), every load of a thread in flight at once; on the
// H100 32k FP16 59.3-61.3 vs 63.0-63.7 us with a single-pass one-block-per-head reduce, and faster
// at every precision and length, perf/HIL-NOTES.md); =v3: pagedAttentionReduceV3 (one block per
// head, dependent passes). Same outputs up to float summation order.
bool v3ReduceSplit() {
  static const bool split = envChoice("KVTIER_HIL_ATTN_REDUCE", {{"split", 1}, {"v3", 0}}, kDefaultReduceSplit) != 0;
  return split;
}

// pagedAttentionSplitReduce over `splits` partial results, with programmatic dependent launch when
// `pdl` (its blocks are scheduled while the attention grid runs and wait for it in
// griddepcontrol.wait) or as a plain launch.
void launchSplitReduce(cudaStream_t st, const AttentionShape& s, int splits, const float* partAcc, const float* partMl,
                       float* out, bool pdl) {
  launchKernel(cuda::pagedAttentionSplitReduce, dim3(s.qHeads, s.headDim / 32), dim3(cuda::kSplitReduceWarps * 32), 0, st, pdl,
               splits, s.qHeads, s.headDim, partAcc, partMl, out);
  checkLaunch("pagedAttentionSplitReduce");
}

void finishReduce(cudaStream_t st, const AttentionShape& s, int splits, float* partAcc, float* partMl, float* out,
                  bool splitReduce) {
  if (splits > 1 && useV3() && splitReduce && v3ReduceSplit() && s.headDim % 32 == 0) return launchSplitReduce(st, s, splits, partAcc, partMl, out, v3Pdl());
  if (splits > 1 && useV3()) {
    launchKernel(cuda::pagedAttentionReduceV3, dim3(s.qHeads), dim3(cuda::kReduceThreads), 0, st, v3Pdl(), splits, s.qHeads,
                 s.headDim, static_cast<const float*>(partAcc), static_cast<const float*>(partMl), out);
    checkLaunch("pagedAttentionReduceV3");
  } else if (splits > 1) {
    cuda::pagedAttentionReduce<<<s.qHeads, std::min(s.headDim, 256), 0, st>>>(splits, s.qHeads, s.headDim, partAcc, partMl, out);
    checkLaunch("pagedAttentionReduce");
  }
}

template <int D>
void runD(cudaStream_t st, const AttentionShape& s, int splits, const uint8_t* arena, size_t arenaBytes,
          const BlockEntry* table, const float* q, float* out, float* scratch) {
  const int gq = s.qHeads / s.kvHeads;
  if (gq == 1) run<D, 1>(st, s, splits, arena, arenaBytes, table, q, out, scratch);
  else if (gq == 2) run<D, 2>(st, s, splits, arena, arenaBytes, table, q, out, scratch);
  else if (gq <= 4) run<D, 4>(st, s, splits, arena, arenaBytes, table, q, out, scratch);
  else run<D, 8>(st, s, splits, arena, arenaBytes, table, q, out, scratch);
}

}  // namespace

int attentionSplits(const AttentionShape& s, int multiprocessors, int uniformPrecision) {
  if (s.splits > 0) return std::min(s.splits, totalChunks(s));
  if (useV3()) {
    // One full wave of resident blocks (occupancy from the compiled kernel), at least two
    // chunks per warp (v3 and the MMA kernel both have 4 warps per block).
    const int gq = s.qHeads / s.kvHeads;
    const int perSm = useMma(s, uniformPrecision)       ? mmaBlocksPerSm(s)
                      : useMmaFp16(s, uniformPrecision) ? mmaFp16BlocksPerSm(s)
                      : s.headDim == 64           ? v3BlocksPerSmD<64>(gq)
                      : s.headDim == 128          ? v3BlocksPerSmD<128>(gq)
                                                  : v3BlocksPerSmD<256>(gq);
    static const int mmaWaves = envInt("KVTIER_HIL_ATTN_MMA_WAVES", 1, 1, 16);  // tensor-core kernel only: waves of blocks
    static const int waves = envInt("KVTIER_HIL_ATTN_WAVES", 1, 1, 16);  // measurement knob: waves of blocks
    const int target = (useMma(s, uniformPrecision) ? mmaWaves : waves) * perSm * std::max(1, multiprocessors);
    // warps per kv head in a block and blocks per split: 4 and kvHeads, or with head warps 1 and 1
    const bool hw = (useMmaFp16(s, uniformPrecision) && mmaFp16HeadWarps(s)) || (useMma(s, uniformPrecision) && mmaInt4HeadWarps(s));
    const int headWarps = hw ? 1 : cuda::kV3Warps;
    const int blocksPerSplit = hw ? 1 : s.kvHeads;
    const int wanted = (target + blocksPerSplit - 1) / blocksPerSplit;
    const int most = std::max(1, totalChunks(s) / (2 * headWarps));
    const int splits = std::max(1, std::min(wanted, most));
    // Equal chunk counts per warp: the fewest splits that keep the most chunks per warp (32k Llama:
    // 33 -> 32 splits of 16 chunks per warp; 128k on the tensor-core path: 64 splits x 4 warps x 32
    // chunks instead of 66 with 8 warps of 32 and 256 of 31). On by default for both paths (33/33
    // checks on the H100 with each; perf/HIL-NOTES.md): KVTIER_HIL_ATTN_BALANCE=0 turns it off for v3,
    // KVTIER_HIL_ATTN_MMA_EVEN=0 for the tensor-core kernel.
    static const bool balance = envFlag("KVTIER_HIL_ATTN_BALANCE", kDefaultBalance);
    static const bool even = envFlag("KVTIER_HIL_ATTN_MMA_EVEN", true);
    if (useMma(s, uniformPrecision) ? even : balance) {
      const int perWarp = (totalChunks(s) + headWarps * splits - 1) / (headWarps * splits);
      return std::max(1, (totalChunks(s) + headWarps * perWarp - 1) / (headWarps * perWarp));
    }
    return splits;
  }
  const int target = 4 * std::max(1, multiprocessors);
  const int wanted = (target + s.kvHeads - 1) / s.kvHeads;
  const int most = std::max(1, totalChunks(s) / (2 * cuda::kAttnWarps));
  return std::max(1, std::min(wanted, most));
}

size_t attentionScratchFloats(const AttentionShape& s, int splits) {
  return static_cast<size_t>(splits) * s.qHeads * (s.headDim + 2);
}

void attention(cudaStream_t st, const AttentionShape& s, int splits, const uint8_t* arena, size_t arenaBytes,
               const BlockEntry* table, const float* q, float* out, float* scratch, int uniformPrecision) {
  checkAttentionShape(s);
  if (reinterpret_cast<uintptr_t>(arena) % 16) throw HilError("attention: arena must be 16-byte aligned");
  if (useMma(s, uniformPrecision)) return runMma(st, s, splits, arena, arenaBytes, table, q, out, scratch);
  if (useMmaFp16(s, uniformPrecision)) return runMmaFp16(st, s, splits, arena, arenaBytes, table, q, out, scratch);
  if (s.headDim == 64) runD<64>(st, s, splits, arena, arenaBytes, table, q, out, scratch);
  else if (s.headDim == 128) runD<128>(st, s, splits, arena, arenaBytes, table, q, out, scratch);
  else runD<256>(st, s, splits, arena, arenaBytes, table, q, out, scratch);
}

}  // namespace hil::launch
