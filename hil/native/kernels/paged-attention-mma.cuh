// Decode attention on the tensor cores for uniform INT4 tables (issue 6: INT4 >= 3x FP16).
// Shape: D 128, up to 4 query heads per kv head, quantization group 128 (one (scale, zero) pair
// per token row of one kv head), 16-token chunks; the launcher falls back to v3 for anything
// else. Same arguments, partial results and reduce kernel as v3 (paged-attention-v3.cuh).
//
// Per warp and chunk (16 tokens of one kv head), two kinds of mma.sync, both exact:
//   S^T[16 tokens][16] = Kc[16][128] . Qd^T   integer: m16n8k32 s8 x s8 -> s32, 4 k-steps x 2
//                                             n-tiles. Kc = the 4-bit codes as bytes (one AND
//                                             per 4 codes), Qd = q in fixed point (22 bits,
//                                             scaled by 2^e per block) as three signed base-256
//                                             digits: columns d2 | d1 | d0 of the 4 heads.
//   O^T[128 dims][8] += Vc^T[128][16] . P'^T  f16 in, f32 out: m16n8k16, 8 m-tiles. Vc = the codes
//                                             as f16 (0x6400 magic number, then one HSUB2 /
//                                             HFMA2 per two codes); columns 0-3 the f16 "hi"
//                                             parts of P' = p * V scale for the 4 heads, 4-7 the
//                                             "lo" parts (P' - hi), so P' keeps ~22 bits.
// The affine map value = zero + code * scale is applied around the MMAs, exactly:
// score_t = scale_t * (q . code_t) + zero_t * sum(q) and out = sum_t (p_t scale_t) code_t +
// sum_t p_t zero_t. Rounding q or P' to f16 alone would cost ~2.4e-4 relative per element, more
// than the checks' 2e-4. Measured and rejected (perf/HIL-NOTES.md): codes as f16 subnormals
// (nibble masked in place, no subtraction) lose contributions on the H100's tensor cores
// (rel L2 up to 2e-4 where this form gives ~1e-6).
//
// Range: P' is formed relative to a running reference mT = max_t(score_t + log2(scale_t)) - 14,
// so P' = 2^(score - mT) * scale <= 2^14 < 65504 whatever the V scales, and its f16 lo part
// stays out of the subnormal range for every contribution within 2^-16 of the largest. The
// partial results store mT in place of the max: (acc, l) are both relative to it, so the reduce
// kernel merges them unchanged.
//
// Memory: per warp a ring of S stages, one chunk per stage:
//   [K codes 1024 B][V codes 1024 B][K meta 64 B][V meta 64 B] = 2176 B,
// filled S - 1 chunks ahead by 4 bulk copies on the TMA engine that lane 0 issues, completing
// on one mbarrier per stage (KVTIER_HIL_ATTN_MMA_COPY=lanes: 16-byte cp.async by every lane, as
// v3). Block-table entries come 32 chunks at a time, one per lane, a batch ahead, so no
// dependent table load sits on the copy path (with the entry loaded one chunk ahead, ncu put 30%
// of the warp stall cycles on global-load waits: a DRAM round trip under full load is long).
// Lane (g = lane / 4, t = lane % 4) reads K rows g and g + 8 (16 B each: dims 32t .. 32t + 31),
// V rows t, t + 4, t + 8, t + 12 (8 B each: dims 16g .. 16g + 15), and the (scale, zero) of
// tokens g and g + 8: all from the stage, bank-conflict free.
//
// Split-K over the context (grid (splits, kvHeads), splits as v3: one wave of resident blocks),
// partial results merged by v3's reduce kernel, or, with KVTIER_HIL_ATTN_MMA_FUSE=1, by the last
// block of each kv head to finish (arrival counters in device memory, reset by that block).
#pragma once
#include "paged-attention-v3.cuh"

namespace hil::cuda {

constexpr int kMmaWarps = 4;
constexpr int kMmaD = 128;
constexpr int kMmaStageBytes = 2176;  // INT4 chunk of one kv head at D 128, G 128
constexpr int kMmaPStride = 12;       // words per column of the per-warp P' transpose (bank-conflict free)
constexpr int kMmaIntBias = 0x4B400000;  // 1.5 * 2^23 as float bits: s32 accumulator + bias, read as float = 1.5 * 2^23 + dot
constexpr float kMmaIntBiasValue = 12582912.0f;

constexpr int kMmaFuseMaxSplits = 1024;  // fused reduce: [4][splits] factors in the (>= 34 KB) ring

template <int S>
struct MmaCfg {
  static constexpr int kSmemBytes = kMmaWarps * S * kMmaStageBytes;
  static constexpr int kMinBlocks = S <= 4 ? 5 : S <= 6 ? 4 : 3;  // blocks per SM the registers (and shared memory) allow
};

__device__ __forceinline__ void mma16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
// d = a . b + c for s8 operands, s32 accumulators (exact).
__device__ __forceinline__ void mma16832s8(int (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                           uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
__device__ __forceinline__ float ex2Ftz(float x) {  // 2^x; -inf -> 0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float lg2Ftz(float x) {  // log2 x; 0 -> -inf
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// cp.async of 16 bytes when `on`, nothing otherwise (no branch).
__device__ __forceinline__ void cpAsync16If(uint32_t smemDst, const void* gmemSrc, bool on) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p cp.async.cg.shared.global [%0], [%1], 16;\n}\n" ::"r"(smemDst),
      "l"(gmemSrc), "r"(static_cast<int>(on))
      : "memory");
}
__device__ __forceinline__ void cpAsync16At(uint32_t smemDst, const void* gmemSrc) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smemDst), "l"(gmemSrc) : "memory");
}

// mbarrier and bulk-copy (TMA engine) helpers; addresses are shared-window (32-bit) addresses.
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
__device__ __forceinline__ void bulkCopy(uint32_t dst, const void* src, unsigned bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void fenceProxyAsync() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// (a & B) | C in one LOP3 (B, C immediates).
template <uint32_t B, uint32_t C>
__device__ __forceinline__ uint32_t andOr(uint32_t a) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xea;\n" : "=r"(d) : "r"(a), "n"(B), "n"(C));
  return d;
}

__device__ __forceinline__ uint32_t h2bits(__half2 h) { return *reinterpret_cast<uint32_t*>(&h); }
__device__ __forceinline__ __half2 bitsh2(uint32_t u) { return *reinterpret_cast<__half2*>(&u); }

// Two 4-bit codes of an f16x2 register, in bits 0-3 (hiNib false) or 4-7 (true) of each half, as
// f16 numbers: (nibble | 0x6400) = 1024 + c (or 1024 + 16 c), then exactly c.
__device__ __forceinline__ uint32_t nib2(uint32_t w, bool hiNib) {
  if (hiNib) {
    const uint32_t x = andOr<0x00f000f0u, 0x64006400u>(w);  // 1024 + 16 c
    return h2bits(__hfma2(bitsh2(x), __floats2half2_rn(0.0625f, 0.0625f), __floats2half2_rn(-64.0f, -64.0f)));
  }
  const uint32_t x = andOr<0x000f000fu, 0x64006400u>(w);  // 1024 + c
  return h2bits(__hsub2(bitsh2(x), __floats2half2_rn(1024.0f, 1024.0f)));
}

// grid (splits, kvHeads), block kMmaWarps * 32, dynamic shared memory MmaCfg<S>::kSmemBytes.
// Every block-table entry must be INT4 (the caller's promise, AttentionArgs::uniformPrecision):
// any other entry, like a bad one, makes the output NaN; nothing outside the arena is read.
template <int S, bool BULK>
__global__ void __launch_bounds__(kMmaWarps * 32, MmaCfg<S>::kMinBlocks) pagedAttentionMmaInt4(
    AttentionShape s, int gq, const uint8_t* __restrict__ arena, size_t arenaBytes,
    const BlockEntry* __restrict__ table, const float* __restrict__ q, int chunksPerSplit, bool strided,
    float* __restrict__ partAcc, float* __restrict__ partMl, float* __restrict__ out, unsigned* __restrict__ counters) {
  static_assert(S >= 2 && S <= 32, "stages: one bit each in okMask");
  constexpr int D = kMmaD;
  constexpr int W = kMmaWarps;
  constexpr int SB = kMmaStageBytes;
  extern __shared__ __align__(16) uint8_t smem[];
  __shared__ __align__(16) uint32_t sP[W][8 * kMmaPStride];  // P'^T in f16 pairs (token t, t + 8)

  const int split = blockIdx.x, h = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane >> 2, t4 = lane & 3;
  const BlockGeometry geo = geometryOf(s);
  uint8_t* ring = smem + warp * (S * SB);
  const uint32_t ringS = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");  // see v3 (PDL reduce)

  // The chunks of this warp: first + k * step, k < n (v3's ownership).
  const WarpChunks wc = warpChunks(s.contextTokens, split, gridDim.x, warp, W, chunksPerSplit, strided);
  const int first = wc.first, step = wc.step, n = wc.n;
  const int totalChunks = (s.contextTokens + kChunkTokens - 1) / kChunkTokens;
  // Block-table entries, 32 chunks at a time: lane i holds the entry of the warp's chunk
  // kb + i (entCur) and of kb + 32 + i (entNxt), loaded a batch ahead, so no table load is on
  // the copy path. The chunk's position in its block (sub) follows the chunks without division.
  const int cpb = s.blockTokens / kChunkTokens;
  const int stepSub = step % cpb;
  int sub = first % cpb;
  struct Ent {
    uint64_t offset;
    int precision;
  };
  auto loadEnt = [&](int kk) {
    Ent r{0, -1};
    if (kk < n) {
      const BlockEntry be = table[(first + kk * step) / cpb];
      r.offset = be.offset;
      r.precision = be.precision;
    }
    return r;
  };
  Ent entCur = loadEnt(lane), entNxt = loadEnt(32 + lane);
  const size_t vOff = vOffset(geo, kInt4), kmOff = kMetaOffset(geo, kInt4), vmOff = vMetaOffset(geo, kInt4);
  const size_t bb = blockBytes(geo, kInt4);
  const bool anyFits = arenaBytes >= bb;
  const uint64_t lastOffset = anyFits ? arenaBytes - bb : 0;
  const uint32_t headRow = static_cast<uint32_t>(h * s.blockTokens);  // first row of head h in a block
  unsigned okMask = 0;  // bit i: stage i holds a valid INT4 chunk (warp-uniform: every lane sees the same entries)
  bool bad = false;
  // BULK: one mbarrier per stage, the copies by lane 0 on the TMA engine (4 bulk copies per chunk);
  // otherwise every lane copies 16-byte pieces with cp.async (one commit group per stage).
  __shared__ __align__(8) uint64_t sBar[W][S];
  const uint32_t bar0 = static_cast<uint32_t>(__cvta_generic_to_shared(&sBar[warp][0]));
  if constexpr (BULK) {
    if (lane == 0) {
#pragma unroll
      for (int i = 0; i < S; ++i) mbarInit(bar0 + 8 * i, 1);
      mbarInitFence();
    }
    __syncwarp();
  }
  const size_t metaLane = (lane < 4 ? kmOff : vmOff) + (lane & 3) * 16;  // cp.async path: lanes 0-7 copy the meta
  auto issue = [&](int k, int slot) {
    if (k < n) {
      const int src = k & 31;
      const uint64_t offset = __shfl_sync(kFullMask, entCur.offset, src);
      const int prec = __shfl_sync(kFullMask, entCur.precision, src);
      if (src == 31) {
        entCur = entNxt;
        entNxt = loadEnt(k + 33 + lane);
      }
      const uint32_t row = headRow + static_cast<uint32_t>(sub * kChunkTokens);  // first row of the chunk
      sub += stepSub;
      if (sub >= cpb) sub -= cpb;
      const bool ok = prec == kInt4 && (offset & 15u) == 0 && anyFits && offset <= lastOffset;
      okMask = ok ? okMask | (1u << slot) : okMask & ~(1u << slot);
      if (!ok) bad = true;  // the output becomes NaN below
      const uint8_t* base = arena + offset;
      const uint32_t dst = ringS + slot * SB;
      if constexpr (BULK) {
        if (lane == 0) {
          const uint32_t bar = bar0 + 8 * slot;
          if (ok) {
            fenceProxyAsync();  // the stage's last generic reads are ordered before the engine's writes
            mbarArriveExpectTx(bar, SB);
            bulkCopy(dst, base + row * (D / 2), 1024, bar);
            bulkCopy(dst + 1024, base + vOff + row * (D / 2), 1024, bar);
            bulkCopy(dst + 2048, base + kmOff + row * 4, 64, bar);
            bulkCopy(dst + 2112, base + vmOff + row * 4, 64, bar);
          } else {
            mbarArrive(bar);  // completes the phase: the stage is skipped
          }
        }
      } else if (ok) {
        const uint8_t* kc = base + row * (D / 2) + lane * 16;
        const uint8_t* vc = kc + vOff;
        const uint32_t d = dst + lane * 16;
        cpAsync16At(d, kc);
        cpAsync16At(d + 512, kc + 512);
        cpAsync16At(d + 1024, vc);
        cpAsync16At(d + 1536, vc + 512);
        cpAsync16If(d + 2048, base + metaLane + row * 4, lane < 8);
      }
    }
    if constexpr (!BULK) cpAsyncCommit();  // one group per issue, empty ones included, so wait_group counts stages
  };
#pragma unroll
  for (int k = 0; k < S - 1; ++k) issue(k, k);

  // ---- q as the B operand of S^T = Kc . Qd^T (s8 digits), built once per block ----
  // q' = x * 2^-e, x = rint(q * 2^e) with |x| < 2^21 (e from the block's largest |q|), as three
  // balanced base-256 digits x = d2 * 2^16 + d1 * 2^8 + d0. Lane (g, t) holds, per k-step i (32
  // dims) and register r, the digits of dims 32 t + 8 i + 2 b + r (byte b), matching the A
  // registers built from K (low nibbles r = 0, high nibbles r = 1). n-tile 0, column g: head
  // g & 3, digit d2 (g < 4) or d1; n-tile 1: digit d0 (g < 4) or 0.
  __shared__ __align__(16) uint32_t sQb[32][16];  // [lane][k-step i][n-tile][register]
  __shared__ float sQmax[W], sQsum[4];
  const float qscale = s.softmaxScale * kLog2e;
  float qx[4];  // thread (head warp, dims 4 lane .. 4 lane + 3)
  {
    const int j = warp;  // W == 4 query heads per kv head at most
    const float* qp = q + static_cast<size_t>(h * gq + j) * D + 4 * lane;
    if (j < gq && (reinterpret_cast<uintptr_t>(qp) & 15) == 0) {
      const float4 v = *reinterpret_cast<const float4*>(qp);
      qx[0] = v.x, qx[1] = v.y, qx[2] = v.z, qx[3] = v.w;
    } else {
#pragma unroll
      for (int u = 0; u < 4; ++u) qx[u] = j < gq ? qp[u] : 0.0f;
    }
    float m = 0.0f;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      qx[u] *= qscale;
      m = fmaxf(m, fabsf(qx[u]));
    }
    m = warpMax(m);
    if (lane == 0) sQmax[warp] = m;
  }
  __syncthreads();
  const float qabs = fmaxf(fmaxf(sQmax[0], sQmax[1]), fmaxf(sQmax[2], sQmax[3]));
  int ex = 0;
  frexpf(qabs, &ex);  // qabs < 2^ex (ex = 0 for qabs = 0)
  const int e = 21 - ex;
  {
    const int j = warp;
    const float f1 = ldexpf(1.0f, min(e, 126)), f2 = ldexpf(1.0f, e - min(e, 126));  // 2^e as two exact factors
    int xs = 0;
    uint8_t* qbBytes = reinterpret_cast<uint8_t*>(&sQb[0][0]);
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int d = 4 * lane + u;
      const int x = __float2int_rn(qx[u] * f1 * f2);
      xs += x;
      const int d0 = static_cast<int8_t>(x & 0xff);
      const int x1 = (x - d0) >> 8;
      const int d1 = static_cast<int8_t>(x1 & 0xff);
      const int d2 = (x1 - d1) >> 8;
      const int t = d >> 5, i = (d >> 3) & 3, b = (d >> 1) & 3, r = d & 1;
      const int lo = (4 * j + t) * 64, hi = (4 * (j + 4) + t) * 64;  // byte offsets of lanes (j, t), (j + 4, t)
      const int at = (i * 4 + r) * 4 + b;                             // word i * 4 + tile * 2 + r, byte b
      qbBytes[lo + at] = static_cast<uint8_t>(d2);
      qbBytes[hi + at] = static_cast<uint8_t>(d1);
      qbBytes[lo + at + 8] = static_cast<uint8_t>(d0);  // tile 1: + 2 words
      qbBytes[hi + at + 8] = 0;
    }
#pragma unroll
    for (int o2 = 16; o2 > 0; o2 >>= 1) xs += __shfl_xor_sync(kFullMask, xs, o2);
    if (lane == 0) sQsum[j] = static_cast<float>(xs) * ldexpf(1.0f, -e);
  }
  __syncthreads();
  uint32_t qb[4][2][2];  // [k-step][n-tile][register]
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint4 v = *reinterpret_cast<const uint4*>(&sQb[lane][4 * i]);
    qb[i][0][0] = v.x, qb[i][0][1] = v.y, qb[i][1][0] = v.z, qb[i][1][1] = v.w;
  }
  const int hq0 = 2 * (t4 & 1), hq1 = hq0 + 1;  // the heads of this lane's score / output columns
  const float qUnit = ldexpf(1.0f, -e);
  const float qsum0 = sQsum[hq0], qsum1 = sQsum[hq1];
  const float dFac = t4 < 2 ? 65536.0f : 256.0f;  // this lane's n-tile 0 columns: digit d2 or d1
  const float loSel = t4 < 2 ? 0.0f : -1.0f;      // P' columns: hi (t4 < 2) or lo (P' - hi)

  // ---- running state: this lane's two heads (hq0, hq1) ----
  float mT0 = -INFINITY, mT1 = -INFINITY;  // reference of the exponents (log2 domain), warp-uniform per head
  float l0 = 0.0f, l1 = 0.0f;              // sum of 2^(score - mT), this lane's tokens
  float z0 = 0.0f, z1 = 0.0f;              // sum of 2^(score - mT) * zero, this lane's tokens
  float o[8][4];                           // O^T: rows 16 g + 2 mt (+1), columns 2 t4, 2 t4 + 1
#pragma unroll
  for (int mt = 0; mt < 8; ++mt) o[mt][0] = o[mt][1] = o[mt][2] = o[mt][3] = 0.0f;
  uint32_t* sPw = sP[warp];
  const int lastChunk = totalChunks - 1;
  const int lastValid = s.contextTokens - lastChunk * kChunkTokens;  // rows of the last chunk, 1..16
  // this lane's stage offsets
  const uint32_t kOff = g * 64 + t4 * 16, vOffL = 1024 + t4 * 64 + 8 * g;
  const uint32_t mOff = 2048 + 4 * g;

  int slot = 0, c = first;
  unsigned phases = 0;  // BULK: bit i = parity of stage i's next phase
  for (int k = 0; k < n; ++k) {
    issue(k + S - 1, slot == 0 ? S - 1 : slot - 1);
    if constexpr (BULK) {
      mbarWait(bar0 + 8 * slot, (phases >> slot) & 1u);  // chunk k has landed (or was skipped)
      phases ^= 1u << slot;
    } else {
      cpAsyncWait<S - 1>();  // this lane's copies of chunk k have landed
      __syncwarp();          // ... and every lane's
    }
    const uint8_t* st = ring + slot * SB;
    if (okMask & (1u << slot)) {
      // S^T = Kc . Qd^T: rows = tokens g, g + 8; columns 2 t4, 2 t4 + 1 of each n-tile
      const uint4 ka = *reinterpret_cast<const uint4*>(st + kOff);
      const uint4 kb = *reinterpret_cast<const uint4*>(st + kOff + 512);
      const uint32_t kaw[4] = {ka.x, ka.y, ka.z, ka.w}, kbw[4] = {kb.x, kb.y, kb.z, kb.w};
      int acc0[4] = {kMmaIntBias, kMmaIntBias, kMmaIntBias, kMmaIntBias};
      int acc1[4] = {kMmaIntBias, kMmaIntBias, kMmaIntBias, kMmaIntBias};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint32_t a0 = kaw[i] & 0x0f0f0f0fu, a2 = (kaw[i] >> 4) & 0x0f0f0f0fu;
        const uint32_t a1 = kbw[i] & 0x0f0f0f0fu, a3 = (kbw[i] >> 4) & 0x0f0f0f0fu;
        mma16832s8(acc0, a0, a1, a2, a3, qb[i][0][0], qb[i][0][1]);
        mma16832s8(acc1, a0, a1, a2, a3, qb[i][1][0], qb[i][1][1]);
      }
      float sc[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float loc = fmaf(__int_as_float(acc0[i]) - kMmaIntBiasValue, dFac, __int_as_float(acc1[i]) - kMmaIntBiasValue);
        sc[i] = loc + __shfl_xor_sync(kFullMask, loc, 2);  // d2 * 2^16 + d0 (+) d1 * 2^8: q' . code * 2^e
      }
      const float2 km0 = __half22float2(*reinterpret_cast<const __half2*>(st + mOff));
      const float2 km1 = __half22float2(*reinterpret_cast<const __half2*>(st + mOff + 32));
      float2 vm0 = __half22float2(*reinterpret_cast<const __half2*>(st + mOff + 64));
      float2 vm1 = __half22float2(*reinterpret_cast<const __half2*>(st + mOff + 96));
      const float ks0 = km0.x * qUnit, ks1 = km1.x * qUnit;
      sc[0] = fmaf(ks0, sc[0], km0.y * qsum0);  // token g, head hq0
      sc[1] = fmaf(ks0, sc[1], km0.y * qsum1);  // token g, head hq1
      sc[2] = fmaf(ks1, sc[2], km1.y * qsum0);  // token g + 8, head hq0
      sc[3] = fmaf(ks1, sc[3], km1.y * qsum1);  // token g + 8, head hq1
      if (c == lastChunk) {  // rows past the context may hold anything, even NaN meta
        if (g >= lastValid) {
          sc[0] = sc[1] = -INFINITY;
          vm0 = make_float2(0.0f, 0.0f);
        }
        if (g + 8 >= lastValid) {
          sc[2] = sc[3] = -INFINITY;
          vm1 = make_float2(0.0f, 0.0f);
        }
      }
      // reference: max over tokens of score + log2(V scale), less 14 (P' <= 2^14)
      const float ls0 = fmaxf(lg2Ftz(vm0.x), -30.0f), ls1 = fmaxf(lg2Ftz(vm1.x), -30.0f);
      float mx0 = fmaxf(sc[0] + ls0, sc[2] + ls1), mx1 = fmaxf(sc[1] + ls0, sc[3] + ls1);
#pragma unroll
      for (int o2 = 4; o2 < 32; o2 <<= 1) {
        mx0 = fmaxf(mx0, __shfl_xor_sync(kFullMask, mx0, o2));
        mx1 = fmaxf(mx1, __shfl_xor_sync(kFullMask, mx1, o2));
      }
      const float mN0 = fmaxf(mT0, mx0 - 14.0f), mN1 = fmaxf(mT1, mx1 - 14.0f);
      if (__any_sync(kFullMask, mN0 > mT0 || mN1 > mT1)) {  // rare after the first chunks
        const float a0 = ex2Ftz(mT0 - mN0), a1 = ex2Ftz(mT1 - mN1);  // mT = -inf at start: 0
        l0 *= a0;
        l1 *= a1;
        z0 *= a0;
        z1 *= a1;
#pragma unroll
        for (int mt = 0; mt < 8; ++mt) {
          o[mt][0] *= a0;
          o[mt][1] *= a1;
          o[mt][2] *= a0;
          o[mt][3] *= a1;
        }
        mT0 = mN0;
        mT1 = mN1;
      }
      const float p0 = ex2Ftz(sc[0] - mT0), p1 = ex2Ftz(sc[1] - mT1), p2 = ex2Ftz(sc[2] - mT0), p3 = ex2Ftz(sc[3] - mT1);
      l0 += p0 + p2;
      l1 += p1 + p3;
      z0 = fmaf(p0, vm0.y, fmaf(p2, vm1.y, z0));
      z1 = fmaf(p1, vm0.y, fmaf(p3, vm1.y, z1));
      // P' = p * V scale in f16 pairs (token g, token g + 8): hi on lanes t4 < 2, lo (P' - hi) on t4 >= 2
      const float P0 = p0 * vm0.x, P1 = p1 * vm0.x, P2 = p2 * vm1.x, P3 = p3 * vm1.x;
      const float2 fA = __half22float2(__floats2half2_rn(P0, P2)), fB = __half22float2(__floats2half2_rn(P1, P3));
      sPw[(2 * t4) * kMmaPStride + g] = h2bits(__floats2half2_rn(fmaf(fA.x, loSel, P0), fmaf(fA.y, loSel, P2)));
      sPw[(2 * t4 + 1) * kMmaPStride + g] = h2bits(__floats2half2_rn(fmaf(fB.x, loSel, P1), fmaf(fB.y, loSel, P3)));
      __syncwarp();
      const uint32_t b0 = sPw[g * kMmaPStride + t4], b1 = sPw[g * kMmaPStride + t4 + 4];  // column g, pairs t4, t4 + 4
      // O^T += Vc^T . P'^T: A row g of m-tile mt = dim 16 g + 2 mt, row g + 8 = dim 16 g + 2 mt + 1;
      // k = 2 t4, 2 t4 + 1 -> tokens t4, t4 + 8; k = 2 t4 + 8, + 9 -> tokens t4 + 4, t4 + 12
      const uint2 r0 = *reinterpret_cast<const uint2*>(st + vOffL);
      const uint2 r1 = *reinterpret_cast<const uint2*>(st + vOffL + 4 * 64);
      const uint2 r2 = *reinterpret_cast<const uint2*>(st + vOffL + 8 * 64);
      const uint2 r3 = *reinterpret_cast<const uint2*>(st + vOffL + 12 * 64);
#pragma unroll
      for (int mt = 0; mt < 8; ++mt) {
        const int wi = mt >> 2, by = mt & 3;
        const uint32_t x0 = wi ? r0.y : r0.x, y0 = wi ? r2.y : r2.x;  // tokens t4, t4 + 8
        const uint32_t x1 = wi ? r1.y : r1.x, y1 = wi ? r3.y : r3.x;  // tokens t4 + 4, t4 + 12
        uint32_t za = __byte_perm(x0, y0, by < 2 ? 0x5410 : 0x7632);
        uint32_t zb = __byte_perm(x1, y1, by < 2 ? 0x5410 : 0x7632);
        if (by & 1) {
          za >>= 8;
          zb >>= 8;
        }
        mma16816(o[mt], nib2(za, false), nib2(za, true), nib2(zb, false), nib2(zb, true), b0, b1);
      }
    }
    __syncwarp();  // every lane is done with this stage (and sP) before they are refilled
    slot = slot == S - 1 ? 0 : slot + 1;
    c += step;
  }
  if constexpr (!BULK) cpAsyncWait<0>();  // (BULK: every issued stage was waited for)

  // ---- merge: hi + lo columns, the lanes of a head, then the warps (as v3) ----
#pragma unroll
  for (int mt = 0; mt < 8; ++mt) {
#pragma unroll
    for (int i = 0; i < 4; ++i) o[mt][i] += __shfl_xor_sync(kFullMask, o[mt][i], 2);
  }
#pragma unroll
  for (int o2 = 4; o2 < 32; o2 <<= 1) {
    l0 += __shfl_xor_sync(kFullMask, l0, o2);
    l1 += __shfl_xor_sync(kFullMask, l1, o2);
    z0 += __shfl_xor_sync(kFullMask, z0, o2);
    z1 += __shfl_xor_sync(kFullMask, z1, o2);
  }
  float* sAcc = reinterpret_cast<float*>(smem);  // [W][4][D], reuses the stage ring
  __shared__ float sM[W][4], sL[W][4];
  __shared__ int sBad;
  if (threadIdx.x == 0) sBad = 0;
  __syncthreads();  // every warp is past its ring
  if (bad) sBad = 1;
  if (t4 < 2) {
    float* a0 = sAcc + (warp * 4 + hq0) * D + 16 * g;
    float* a1 = sAcc + (warp * 4 + hq1) * D + 16 * g;
#pragma unroll
    for (int mt = 0; mt < 8; ++mt) {
      a0[2 * mt] = o[mt][0] + z0;
      a1[2 * mt] = o[mt][1] + z1;
      a0[2 * mt + 1] = o[mt][2] + z0;
      a1[2 * mt + 1] = o[mt][3] + z1;
    }
    if (g == 0) {
      sM[warp][hq0] = mT0;
      sM[warp][hq1] = mT1;
      sL[warp][hq0] = l0;
      sL[warp][hq1] = l1;
    }
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < gq * D; idx += blockDim.x) {
    const int j = idx / D, d = idx % D;
    float m = -INFINITY;
    for (int w = 0; w < W; ++w) m = fmaxf(m, sM[w][j]);
    float l = 0.0f, a = 0.0f;
    if (m != -INFINITY) {
      for (int w = 0; w < W; ++w) {
        if (sM[w][j] == -INFINITY) continue;
        const float f = exp2f(sM[w][j] - m);
        l += sL[w][j] * f;
        a += sAcc[(w * 4 + j) * D + d] * f;
      }
    }
    const int hq = h * gq + j;
    if (sBad) a = NAN;
    if (gridDim.x == 1) {
      out[static_cast<size_t>(hq) * D + d] = a / l;
    } else {
      partAcc[(static_cast<size_t>(split) * s.qHeads + hq) * D + d] = a;
      if (d == 0) {
        partMl[(static_cast<size_t>(split) * s.qHeads + hq) * 2] = m;
        partMl[(static_cast<size_t>(split) * s.qHeads + hq) * 2 + 1] = l;
      }
    }
  }
  if (gridDim.x == 1 || counters == nullptr) return;

  // ---- fused reduce (counters != nullptr, splits <= kMmaFuseMaxSplits): the last block of kv
  // head h to finish merges the splits' partials of its query heads, as pagedAttentionReduceV3
  // does, and resets its counter for the next launch (counters start at zero) ----
  __shared__ int sLast;
  __threadfence();  // this block's partials are visible before its arrival is counted
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned old = atomicAdd(&counters[h], 1u);
    sLast = old == gridDim.x - 1;
    if (sLast) counters[h] = 0;  // every block of this launch has arrived
  }
  __syncthreads();
  if (!sLast) return;
  __threadfence();
  const int splits = gridDim.x;
  float* sF = reinterpret_cast<float*>(smem);  // [4][splits]: per-split factors, reuses the ring
  __shared__ float sMl[4][2];
  {
    const int j = warp;  // warp j merges the max and sum of query head j
    const int hq = h * gq + j;
    float m = -INFINITY;
    if (j < gq) {
      for (int sp = lane; sp < splits; sp += 32) m = fmaxf(m, __ldcg(partMl + (static_cast<size_t>(sp) * s.qHeads + hq) * 2));
    }
    m = warpMax(m);
    float l = 0.0f;
    if (j < gq) {
      for (int sp = lane; sp < splits; sp += 32) {
        const size_t i = static_cast<size_t>(sp) * s.qHeads + hq;
        const float ms = __ldcg(partMl + i * 2);
        const float f = ms == -INFINITY ? 0.0f : exp2f(ms - m);
        sF[j * splits + sp] = f;
        l += __ldcg(partMl + i * 2 + 1) * f;
      }
    }
    l = warpSum(l);
    if (lane == 0) sMl[j][1] = l;
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < gq * D; idx += blockDim.x) {
    const int j = idx / D, d = idx % D;
    const int hq = h * gq + j;
    const float* src = partAcc + static_cast<size_t>(hq) * D + d;
    const size_t stride = static_cast<size_t>(s.qHeads) * D;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    int sp = 0;
    for (; sp + 4 <= splits; sp += 4) {  // four independent loads in flight per thread
      a0 += __ldcg(src + sp * stride) * sF[j * splits + sp];
      a1 += __ldcg(src + (sp + 1) * stride) * sF[j * splits + sp + 1];
      a2 += __ldcg(src + (sp + 2) * stride) * sF[j * splits + sp + 2];
      a3 += __ldcg(src + (sp + 3) * stride) * sF[j * splits + sp + 3];
    }
    for (; sp < splits; ++sp) a0 += __ldcg(src + sp * stride) * sF[j * splits + sp];
    out[static_cast<size_t>(hq) * D + d] = ((a0 + a1) + (a2 + a3)) / sMl[j][1];
  }
}

}  // namespace hil::cuda
