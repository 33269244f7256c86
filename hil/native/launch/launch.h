// The launcher layer: checks shapes, picks launch configurations, launches the kernels of
// kernels/*.cuh on a stream. No Node here; the cuda backend calls these.
#pragma once
#include <cuda_runtime.h>
#include <cstddef>
#include <cstdint>
#include "../common/attention-plan.h"

namespace hil::launch {

void quantize(cudaStream_t s, const uint16_t* src, size_t n, int bits, int groupSize, uint8_t* codes, uint16_t* meta);
void dequantize(cudaStream_t s, const uint8_t* codes, const uint16_t* meta, size_t n, int bits, int groupSize,
                uint16_t* dst);
void hadamard(cudaStream_t s, void* data, size_t rows, int n, bool f16);
void gemv(cudaStream_t s, const uint16_t* w, const float* x, float* y, size_t rows, size_t cols);

// The plan of one attention call (common/attention-plan.h) with the compiled kernel's resident
// blocks per SM (asked once per kernel and device; the first ask also raises the kernel's dynamic
// shared-memory limit, so a plan comes from here before its launch). uniformPrecision: the
// caller's promise that every table entry has this precision (-1: none).
AttentionPlan attentionPlan(const AttentionShape& shape, int uniformPrecision, const AttentionOptions& options,
                            const DeviceFacts& device);
size_t attentionScratchFloats(const AttentionShape& shape, int splits);
// The plan's kernel, then the split reduce when it has more than one split.
void attention(cudaStream_t s, const AttentionPlan& plan, const AttentionShape& shape, const uint8_t* arena,
               size_t arenaBytes, const BlockEntry* table, const float* q, float* out, float* scratch);

}  // namespace hil::launch
