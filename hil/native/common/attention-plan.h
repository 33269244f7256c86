// The attention dispatch as one pure function: a call's shape, its uniform-precision promise, the
// caller's options (attention-options.h) and facts about the device in, the kernel configuration
// out (which kernel, stages, warps per block, grid, shared memory, splits, early chunks, L2 policy,
// reduce). Plain C++ without CUDA runtime calls: the launcher (launch/launch-attention.cu) calls it
// with the compiled kernel's occupancy, the host build exports it to TypeScript
// (binding/attention-plan-wrap.cc), where tests state its rules.
//
// Kernels (kernels/*.cuh): "v3" (paged-attention-v3.cuh: any precision mix, cp.async or bulk
// stages), "mma-int4" (paged-attention-mma.cuh: uniform INT4, D 128, G 128, <= 4 query heads per kv
// head) and "mma-fp16" (paged-attention-mma-fp16.cuh: uniform FP16, D 128, <= 4 query heads per kv
// head). Every one writes per-split partial results that the split reduce (split-reduce.cuh) merges,
// launched with programmatic dependent launch, or the output itself with one split.
#pragma once
#include <algorithm>
#include "attention-options.h"
#include "attention-shape.h"

namespace hil {

enum class AttentionKernel { V3, MmaInt4, MmaFp16, Host };
enum class AttentionReduce { None, Split };

inline const char* attentionKernelName(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::MmaInt4: return "mma-int4";
    case AttentionKernel::MmaFp16: return "mma-fp16";
    case AttentionKernel::Host: return "host";
    default: return "v3";
  }
}

// The kernels' constants the dispatch depends on (the launcher checks them against the kernels').
namespace attention_plan {
constexpr int kChunkTokens = 16;       // tokens of one kv head a warp takes at a time
constexpr int kBlockWarps = 4;         // warps per block, one kv head per block (v3, tensor-core kernels)
constexpr int kV3Stages = 3;           // v3's ring depth
constexpr int kMmaD = 128;             // the tensor-core kernels' head dim (and INT4 group size)
constexpr int kMmaMaxGq = 4;           // ... and most query heads per kv head
constexpr int kHeadWarpsMax = 8;       // head warps: most kv heads (= warps) per block
constexpr int kInt4StageBytes = 2176;  // INT4 chunk of one kv head at D 128, G 128
constexpr int kFp16StageBytes = 8192;  // FP16 chunk of one kv head at D 128
// The most dynamic shared memory a head-warp block may take (the rings of all its warps), below
// the H100's 227 KB so that the static arrays fit beside it.
constexpr int kHeadWarpsSmemLimit = 200 * 1024;
// INT4 head warps from 1024 chunks per kv head (16k tokens): below, the per-warp q set-up of 4
// query heads costs more than the reads gain (H100, Llama-3-8B layer: 4k 14.1-15.9 vs 13.5-14.0 us
// without; 32k 24.7-25.4 vs 25.4-27.4; lab/notes/HIL-NOTES.md); with 4 to 8 kv heads (fewer share no KV
// block and leave the SM with fewer warps).
constexpr int kInt4HeadWarpsMinChunks = 1024;
constexpr int kInt4HeadWarpsMinHeads = 4;
}  // namespace attention_plan

// What the dispatch needs to know about the device.
struct DeviceFacts {
  int multiprocessors = 0;
  double l2Bytes = 0;
  int sharedMemPerSmBytes = 0;            // for the occupancy estimate only
  int reservedSharedMemPerBlockBytes = 0;  // ditto (1 KiB on the H100)
  // Resident blocks per SM of the chosen kernel (the launcher asks the compiled kernel); 0: estimated
  // from shared memory (residentBlocksEstimate), which leaves registers out.
  int residentBlocks = 0;
};

struct AttentionPlan {
  AttentionKernel kernel = AttentionKernel::V3;
  int stages = 0;             // copy stages per warp
  bool headWarps = false;     // one warp per kv head, grid (splits), instead of 4 per kv head, grid (splits, kvHeads)
  int queryHeadsPerWarp = 0;  // v3's template GQ (1, 2, 4, 8); 4 on the tensor-core kernels
  int warpsPerBlock = 0;
  int gridX = 0, gridY = 0;   // gridX = splits
  int dynamicSmemBytes = 0;
  bool bulkCopy = false;      // stages filled by bulk copies (TMA engine), else by every lane's cp.async
  int earlyChunks = 0;        // chunks each warp asks for before it prepares q
  bool kvExceedsL2 = false;   // the call's KV bytes (at the kernel's precision) exceed the device's L2
  bool evictFirst = false;    // the KV copies carry an L2 evict-first policy
  int residentBlocks = 0;     // blocks per SM the split count was made for
  int splits = 0;
  int chunksPerWarp = 0;      // the most chunks any warp takes
  AttentionReduce reduce = AttentionReduce::None;
  bool pdlReduce = false;     // the reduce is launched with programmatic dependent launch
};

inline int attentionChunks(const AttentionShape& s) {
  return (s.contextTokens + attention_plan::kChunkTokens - 1) / attention_plan::kChunkTokens;
}

// v3's query heads per warp: the real count rounded up to 1, 2, 4 or 8.
inline int v3QueryHeads(int gq) { return gq <= 1 ? 1 : gq == 2 ? 2 : gq <= 4 ? 4 : 8; }

// Static shared memory of each kernel (the arrays declared in the kernels), for the estimate.
inline int attentionStaticSmemBytes(const AttentionPlan& p) {
  const int S = p.stages;
  if (p.kernel == AttentionKernel::V3) {
    const int gq = p.queryHeadsPerWarp;  // sInfo, sBar, sPAll, sM, sL, sBad
    return 4 * 4 * S + 4 * S * 8 + 4 * 16 * gq * 4 + 2 * 4 * gq * 4 + 4;
  }
  const int wm = p.headWarps ? attention_plan::kHeadWarpsMax : attention_plan::kBlockWarps;
  const int qw = p.headWarps ? wm : 1;
  const int q = p.kernel == AttentionKernel::MmaInt4 ? 2064 : 2048;  // q operand per copy
  return wm * 384 + wm * S * 8 + qw * q + 148;  // sP, sBar, q, sQmax / sM / sL / sBad
}

// Resident blocks per SM by shared memory (dynamic + static + the per-block reserve), at most
// 64 warps and 32 blocks per SM; at least 1.
inline int residentBlocksEstimate(const AttentionPlan& p, const DeviceFacts& d) {
  const int perBlock = p.dynamicSmemBytes + attentionStaticSmemBytes(p) + d.reservedSharedMemPerBlockBytes;
  int blocks = perBlock > 0 && d.sharedMemPerSmBytes > 0 ? d.sharedMemPerSmBytes / perBlock : 1;
  blocks = std::min(blocks, 64 / std::max(1, p.warpsPerBlock));
  return std::max(1, std::min(blocks, 32));
}

// Step 1: the kernel and everything about it that does not depend on occupancy.
// uniformPrecision: the caller's promise that every table entry has this precision (-1: none).
inline AttentionPlan chooseAttentionKernel(const AttentionShape& s, int uniformPrecision, const AttentionOptions& o,
                                           const DeviceFacts& d) {
  namespace ap = attention_plan;
  AttentionPlan p;
  const int gq = s.qHeads / std::max(1, s.kvHeads);
  const int chunks = attentionChunks(s);
  const bool tcInt4 = o.tensor_cores == TensorCores::On || o.tensor_cores == TensorCores::Int4;
  const bool tcFp16 = o.tensor_cores == TensorCores::On || o.tensor_cores == TensorCores::Fp16;
  const bool mmaShape = s.headDim == ap::kMmaD && gq <= ap::kMmaMaxGq;
  if (tcInt4 && uniformPrecision == kInt4 && mmaShape && s.groupSize == ap::kMmaD) {
    p.kernel = AttentionKernel::MmaInt4;
    p.stages = o.int4_stages;
    p.headWarps = o.int4_head_warps && s.kvHeads >= ap::kInt4HeadWarpsMinHeads && s.kvHeads <= ap::kHeadWarpsMax &&
                  chunks >= ap::kInt4HeadWarpsMinChunks && s.kvHeads * p.stages * ap::kInt4StageBytes <= ap::kHeadWarpsSmemLimit;
    p.queryHeadsPerWarp = ap::kMmaMaxGq;
    p.bulkCopy = true;
    p.earlyChunks = 1;  // the first chunk before q, the rest of the ring after
  } else if (tcFp16 && uniformPrecision == kFp16 && mmaShape) {
    p.kernel = AttentionKernel::MmaFp16;
    p.stages = o.fp16_stages;
    p.headWarps = o.fp16_head_warps && s.kvHeads <= ap::kHeadWarpsMax &&
                  s.kvHeads * p.stages * ap::kFp16StageBytes <= ap::kHeadWarpsSmemLimit;
    p.queryHeadsPerWarp = ap::kMmaMaxGq;
    p.bulkCopy = true;
    // The KV then streams from DRAM at every launch and nothing of it is left in L2 for the next.
    p.kvExceedsL2 = static_cast<double>(s.contextTokens) * s.kvHeads * s.headDim * 2.0 * 2.0 > d.l2Bytes;
    // 2 early chunks when the KV streams (H100 32k, gated: 56.2-56.5 vs 56.9-57.0 us), else 1 (its
    // first chunk ahead of every warp's later ones in the memory queue; 4k 13.8-14.0 vs 14.8-15.0 us
    // with 2); evict-first when it streams (32k 56.0 vs 57.0 us; 4k, L2-resident: 15.1-15.5 vs
    // 13.8-14.0 us with it, so not there). lab/notes/HIL-NOTES.md.
    const int early = o.fp16_early_chunks > 0 ? o.fp16_early_chunks : p.kvExceedsL2 ? 2 : 1;
    p.earlyChunks = std::max(1, std::min(early, p.stages - 1));
    p.evictFirst = o.fp16_l2_policy == L2Policy::Auto ? p.kvExceedsL2 : o.fp16_l2_policy == L2Policy::EvictFirst;
  } else {
    p.kernel = AttentionKernel::V3;
    p.stages = ap::kV3Stages;
    p.queryHeadsPerWarp = v3QueryHeads(gq);
    p.bulkCopy = s.headDim == 128;  // one bulk copy per range at D 128; other head dims: every lane's pieces
    p.earlyChunks = p.stages - 1;
  }
  const int stageBytes = p.kernel == AttentionKernel::MmaInt4   ? ap::kInt4StageBytes
                         : p.kernel == AttentionKernel::MmaFp16 ? ap::kFp16StageBytes
                                                                : 64 * s.headDim;
  p.warpsPerBlock = p.headWarps ? s.kvHeads : ap::kBlockWarps;
  p.dynamicSmemBytes = p.warpsPerBlock * p.stages * stageBytes;
  return p;
}

// Step 2: the split count for `residentBlocks` blocks per SM, and the grid and reduce that follow.
// A call's own split count (AttentionShape::splits) comes first, then the option's, else one full
// wave of resident blocks with at least two chunks per warp, trimmed to the fewest splits that keep
// the most chunks per warp (32k Llama FP16: 33 -> 32 splits of 16 chunks per warp); never more
// splits than chunks.
inline AttentionPlan finishAttentionPlan(AttentionPlan p, const AttentionShape& s, const AttentionOptions& o,
                                         int multiprocessors, int residentBlocks) {
  const int chunks = attentionChunks(s);
  const int warpsPerHead = p.headWarps ? 1 : attention_plan::kBlockWarps;
  p.residentBlocks = std::max(1, residentBlocks);
  int splits;
  if (s.splits > 0 || o.splits > 0) {
    splits = std::min(s.splits > 0 ? s.splits : o.splits, chunks);
  } else {
    const int target = p.residentBlocks * std::max(1, multiprocessors);
    const int blocksPerSplit = p.headWarps ? 1 : s.kvHeads;
    const int wanted = (target + blocksPerSplit - 1) / blocksPerSplit;
    const int most = std::max(1, chunks / (2 * warpsPerHead));
    splits = std::max(1, std::min(wanted, most));
    const int perWarp = (chunks + warpsPerHead * splits - 1) / (warpsPerHead * splits);
    splits = std::max(1, (chunks + warpsPerHead * perWarp - 1) / (warpsPerHead * perWarp));
  }
  p.splits = std::max(1, splits);
  p.chunksPerWarp = (chunks + warpsPerHead * p.splits - 1) / (warpsPerHead * p.splits);
  p.gridX = p.splits;
  p.gridY = p.headWarps ? 1 : s.kvHeads;
  p.reduce = p.splits > 1 ? AttentionReduce::Split : AttentionReduce::None;
  p.pdlReduce = p.splits > 1;
  return p;
}

// Both steps, with the device's resident blocks or, when it gives none, the estimate.
inline AttentionPlan planAttention(const AttentionShape& s, int uniformPrecision, const AttentionOptions& o,
                                   const DeviceFacts& d) {
  const AttentionPlan p = chooseAttentionKernel(s, uniformPrecision, o, d);
  return finishAttentionPlan(p, s, o, d.multiprocessors, d.residentBlocks > 0 ? d.residentBlocks : residentBlocksEstimate(p, d));
}

}  // namespace hil
