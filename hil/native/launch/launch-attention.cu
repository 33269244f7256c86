#include <algorithm>
#include "../kernels/paged-attention.cuh"
#include "check-shapes.h"
#include "cuda-check.h"
#include "launch.h"

namespace hil::launch {
namespace {

int totalChunks(const AttentionShape& s) { return (s.contextTokens + cuda::kChunkTokens - 1) / cuda::kChunkTokens; }

template <int D, int GQ>
void run(cudaStream_t st, const AttentionShape& s, int splits, const uint8_t* arena, size_t arenaBytes,
         const BlockEntry* table, const float* q, float* out, float* scratch) {
  const int chunksPerSplit = (totalChunks(s) + splits - 1) / splits;
  float* partAcc = scratch;
  float* partMl = scratch + static_cast<size_t>(splits) * s.qHeads * s.headDim;
  const dim3 grid(splits, s.kvHeads);
  cuda::pagedAttentionKernel<D, GQ><<<grid, cuda::kAttnWarps * 32, 0, st>>>(
      s, s.qHeads / s.kvHeads, arena, arenaBytes, table, q, chunksPerSplit, partAcc, partMl, out);
  checkLaunch("pagedAttentionKernel");
  if (splits > 1) {
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

int attentionSplits(const AttentionShape& s, int multiprocessors) {
  if (s.splits > 0) return std::min(s.splits, totalChunks(s));
  const int target = 4 * std::max(1, multiprocessors);
  const int wanted = (target + s.kvHeads - 1) / s.kvHeads;
  const int most = std::max(1, totalChunks(s) / (2 * cuda::kAttnWarps));
  return std::max(1, std::min(wanted, most));
}

size_t attentionScratchFloats(const AttentionShape& s, int splits) {
  return static_cast<size_t>(splits) * s.qHeads * (s.headDim + 2);
}

void attention(cudaStream_t st, const AttentionShape& s, int splits, const uint8_t* arena, size_t arenaBytes,
               const BlockEntry* table, const float* q, float* out, float* scratch) {
  checkAttentionShape(s);
  if (reinterpret_cast<uintptr_t>(arena) % 16) throw HilError("attention: arena must be 16-byte aligned");
  if (s.headDim == 64) runD<64>(st, s, splits, arena, arenaBytes, table, q, out, scratch);
  else if (s.headDim == 128) runD<128>(st, s, splits, arena, arenaBytes, table, q, out, scratch);
  else runD<256>(st, s, splits, arena, arenaBytes, table, q, out, scratch);
}

}  // namespace hil::launch
