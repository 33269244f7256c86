// mbarrier and bulk-copy (TMA engine) helpers of the attention kernels (v3's bulk stage fill and
// the tensor-core INT4 kernel); addresses are shared-window (32-bit) addresses.
#pragma once
#include <cstdint>

namespace hil::cuda {

__device__ __forceinline__ void mbarInit(uint32_t bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbarInitFence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
__device__ __forceinline__ void mbarArriveExpectTx(uint32_t bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbarArrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase with parity `parity` of the barrier has completed; traps after ~2^28 polls
// (a lost phase would otherwise hang the GPU).
__device__ __forceinline__ void mbarWait(uint32_t bar, unsigned parity) {
  for (unsigned tries = 0;; ++tries) {
    uint32_t done;
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.b32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    if (done) return;
    if (tries > (1u << 28)) __trap();
  }
}
// Lane 0 makes one single-arrival barrier per stage (bar0, bar0 + 8, ..., S of them) and fences the
// inits; the warp then goes on together.
template <int S>
__device__ __forceinline__ void initStageBarriers(uint32_t bar0, int lane) {
  if (lane == 0) {
#pragma unroll
    for (int i = 0; i < S; ++i) mbarInit(bar0 + 8 * i, 1);
    mbarInitFence();
  }
  __syncwarp();
}
__device__ __forceinline__ void bulkCopy(uint32_t dst, const void* src, unsigned bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
// An L2 cache policy that marks the lines a load brings in to be evicted first (streaming data that
// is read once), and the bulk copy that takes one.
__device__ __forceinline__ uint64_t l2EvictFirstPolicy() {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ void bulkCopyHint(uint32_t dst, const void* src, unsigned bytes, uint32_t bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar), "l"(policy)
      : "memory");
}
}  // namespace hil::cuda
