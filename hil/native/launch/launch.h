// The launcher layer: checks shapes, picks launch configurations, launches the kernels of
// kernels/*.cuh on a stream. No Node here; the cuda backend calls these.
#pragma once
#include <cuda_runtime.h>
#include <cstddef>
#include <cstdint>
#include "../common/attention-shape.h"

namespace hil::launch {

void quantize(cudaStream_t s, const uint16_t* src, size_t n, int bits, int groupSize, uint8_t* codes, uint16_t* meta);
void dequantize(cudaStream_t s, const uint8_t* codes, const uint16_t* meta, size_t n, int bits, int groupSize,
                uint16_t* dst);
void hadamard(cudaStream_t s, void* data, size_t rows, int n, bool f16);
void gemv(cudaStream_t s, const uint16_t* w, const float* x, float* y, size_t rows, size_t cols);

// Splits of the context for flash-decoding: enough thread blocks to fill the GPU, at least
// two chunks of 16 tokens per warp. uniformPrecision: the caller's promise that every table
// entry has this precision (-1: none); with KVTIER_HIL_ATTN_MMA=1 a uniform INT4 table at
// D 128, G 128, <= 4 query heads per kv head runs the tensor-core kernel
// (kernels/paged-attention-mma.cuh). Pass the same value to both calls.
int attentionSplits(const AttentionShape& shape, int multiprocessors, int uniformPrecision = -1);
size_t attentionScratchFloats(const AttentionShape& shape, int splits);
void attention(cudaStream_t s, const AttentionShape& shape, int splits, const uint8_t* arena, size_t arenaBytes,
               const BlockEntry* table, const float* q, float* out, float* scratch, int uniformPrecision = -1);

}  // namespace hil::launch
