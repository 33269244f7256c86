// Decode attention on the tensor cores for uniform INT4 tables.
// Shape: D 128, up to 4 query heads per kv head, quantization group 128 (one (scale, zero) pair
// per token row of one kv head), 16-token chunks; the launcher falls back to v3 for anything
// else. Same arguments, partial results and reduce kernel as v3 (paged-attention-v3.cuh).
//
// Per warp and chunk (16 tokens of one kv head), two kinds of mma.sync, both exact:
//   S^T[16 tokens][16] = Kc[16][128] . Qd^T   integer: m16n8k32 s8 x s8 -> s32, 4 k-steps x 2
//                                             n-tiles. Kc = the 4-bit codes as bytes (one AND
//                                             per 4 codes), Qd = q in fixed point (22 bits,
//                                             scaled by 2^e per block) as three signed base-256
//                                             digits: n-tile 0 columns 2j / 2j + 1 = d2 / d1 of
//                                             head j, n-tile 1 column 2j = d0.
//   O^T[128 dims][8] += Vc^T[128][16] . P'^T  f16 in, f32 out: m16n8k16, 8 m-tiles. Vc = the codes
//                                             as f16 (0x6400 magic number, then one HSUB2 /
//                                             HFMA2 per two codes); column 2j the f16 "hi" part
//                                             of P' = p * V scale of head j, column 2j + 1 the
//                                             "lo" part (P' - hi), so P' keeps ~22 bits.
// With these column orders lane (g, t4) holds everything of query head t4 (scores of tokens g
// and g + 8, the softmax state, its output columns): no shuffles between the two products.
// The affine map value = zero + code * scale is applied around the MMAs, exactly:
// score_t = scale_t * (q . code_t) + zero_t * sum(q) and out = sum_t (p_t scale_t) code_t +
// sum_t p_t zero_t. Rounding q or P' to f16 alone would cost ~2.4e-4 relative per element, more
// than the checks' 2e-4. Measured and rejected (lab/notes/HIL-NOTES.md): codes as f16 subnormals
// (nibble masked in place, no subtraction) lose contributions on the H100's tensor cores
// (rel L2 up to 2e-4 where this form gives ~1e-6).
//
// Accumulation: the tensor cores add into an fp32 accumulator without round-to-nearest, so an O
// accumulated by mma.sync over a whole split drifts one way by ~2^-23 of its size per add: at 1025
// chunks per warp (a 16k-token single-split check) rel L2 7.4e-4 with 4 warps per head and 3.9e-3
// with one (H100). Each chunk's P'V goes into a zeroed accumulator and is added to O with ordinary
// fp32 adds, so the tensor cores sum 16 tokens at a time.
//
// Range: P' is formed relative to a running reference mT, set to max_t(score_t + log2(scale_t))
// - 13 when it moves, and moved only when some P' of a chunk would pass 2^15 (or p 2^44), so
// P' = 2^(score - mT) * scale <= 2^15 < 65504 whatever the V scales (no max reduction on the
// common path), and its f16 lo part stays out of the subnormal range for every contribution
// within ~2^-16 of the largest. The partial results store mT in place of the max: (acc, l) are
// both relative to it, so the reduce kernel merges them unchanged.
//
// Memory: per warp a ring of S stages, one chunk per stage:
//   [K codes 1024 B][V codes 1024 B][K meta 64 B][V meta 64 B] = 2176 B,
// filled S - 1 chunks ahead by 4 bulk copies on the TMA engine that lane 0 issues, completing
// on one mbarrier per stage. The warp index, the loop state and the table entry of each copy (taken from its lane by
// redux.sync) are in uniform registers, so ptxas issues each bulk copy without a loop that
// moves vector registers into uniform ones (before: ~150 instructions per chunk for 4 copies).
// Block-table entries come 32 chunks at a time, one per lane, a batch ahead, so no
// dependent table load sits on the copy path (with the entry loaded one chunk ahead, ncu put 30%
// of the warp stall cycles on global-load waits: a DRAM round trip under full load is long).
// Lane (g = lane / 4, t = lane % 4) reads K rows g and g + 8 (16 B each: dims 32t .. 32t + 31),
// V rows t, t + 4, t + 8, t + 12 (8 B each: dims 16g .. 16g + 15), and the (scale, zero) of
// tokens g and g + 8: all from the stage, bank-conflict free.
//
// Split-K over the context (grid (splits, kvHeads), splits as v3: one wave of resident blocks,
// trimmed so that every warp has the same chunk count), partial results merged by
// pagedAttentionSplitReduce (split-reduce.cuh; launched with PDL).
#pragma once
#include "paged-attention-v3.cuh"

namespace hil::cuda {

constexpr int kMmaWarps = 4;
constexpr int kMmaD = 128;
constexpr int kMmaStageBytes = 2176;  // INT4 chunk of one kv head at D 128, G 128
constexpr int kMmaPStride = 12;       // words per column of the per-warp P' transpose (bank-conflict free)
constexpr int kMmaIntBias = 0x4B400000;  // 1.5 * 2^23 as float bits: s32 accumulator + bias, read as float = 1.5 * 2^23 + dot
constexpr float kMmaIntBiasValue = 12582912.0f;

constexpr int kMmaHeadWarps = 8;  // HW ("head warps", below): most kv heads (= warps) per block

template <int S, bool HW = false>
struct MmaCfg {
  static constexpr int kWarps = HW ? kMmaHeadWarps : kMmaWarps;  // the most warps of a block
  static constexpr int smemBytes(int warps) { return warps * S * kMmaStageBytes; }  // a block of `warps` warps
  static constexpr int kSmemBytes = kWarps * S * kMmaStageBytes;
  // blocks per SM the registers (and shared memory) allow: 4-warp blocks 5 / 4 / 3
  static constexpr int kMinBlocks = (S <= 4 ? 5 : S <= 6 ? 4 : 3) * kMmaWarps / kWarps > 0 ? (S <= 4 ? 5 : S <= 6 ? 4 : 3) * kMmaWarps / kWarps : 1;
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
__device__ __forceinline__ float lg2Ftz(float x) {  // log2 x; 0 -> -inf
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
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

// The offset of a block-table entry of precision `p` whose block lies inside the arena (`lastOffset`:
// the last offset a whole block fits at; `anyFits`: one fits at all), else 1 (offsets are 16-aligned):
// the tensor-core kernels' check of an entry before they copy from it.
__device__ __forceinline__ uint64_t usableOffset(const BlockEntry be, int p, bool anyFits, uint64_t lastOffset) {
  const bool ok = be.precision == p && (be.offset & 15u) == 0 && anyFits && be.offset <= lastOffset;
  return ok ? be.offset : 1;
}
// Lane `src`'s `v` on every lane, by redux.sync: in uniform registers (every lane, one value), so
// that the bulk copies take it without moving vector registers into uniform ones.
__device__ __forceinline__ uint64_t fromLane(uint64_t v, int src, int lane) {
  const uint64_t mine = lane == src ? v : 0;
  const uint32_t lo = __reduce_or_sync(kFullMask, static_cast<uint32_t>(mine));
  const uint32_t hi = __reduce_or_sync(kFullMask, static_cast<uint32_t>(mine >> 32));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}
// Moves the running reference mT of the head that lane (g, t4) serves (the 8 lanes with its t4) to
// max(mT, largest mx of those lanes - 13) and rescales the warp's O^T accumulator by the exact
// factor 2^(old mT - new mT), which it returns for the caller's other running sums (mT = -inf at the
// start: 0).
__device__ __forceinline__ float moveReference(float& mT, float mx, float (&o)[8][4]) {
#pragma unroll
  for (int o2 = 4; o2 < 32; o2 <<= 1) mx = fmaxf(mx, __shfl_xor_sync(kFullMask, mx, o2));
  const float a = raiseMax<true>(mT, mx - 13.0f);
#pragma unroll
  for (int mt = 0; mt < 8; ++mt) {
    o[mt][0] *= a;
    o[mt][1] *= a;
    o[mt][2] *= a;
    o[mt][3] *= a;
  }
  return a;
}
// q of kv head h as the tensor-core kernels take it: thread (warp, lane) loads dims 4 lane .. 4
// lane + 3 of query head `warp` (HW false: warp j of a block takes query head j) or of all 4 query
// heads (HW true: each warp its whole kv head), zero past the gq real ones, times `qscale`.
// Returns the largest |q'| over the kv head's query heads (HW false: over the block's 4 warps,
// through sQmax and a __syncthreads).
template <bool HW>
__device__ __forceinline__ float loadScaledQ(float (&qx)[HW ? 4 : 1][4], const float* __restrict__ q, float qscale, int h,
                                             int gq, int warp, int lane, float (&sQmax)[kMmaWarps]) {
  constexpr int D = kMmaD;
  constexpr int QJ = HW ? 4 : 1;
  float qm = 0.0f;
#pragma unroll
  for (int jj = 0; jj < QJ; ++jj) {
    const int j = HW ? jj : warp;  // kMmaWarps == 4 query heads per kv head at most
    const float* qp = q + static_cast<size_t>(h * gq + j) * D + 4 * lane;
    if (j < gq && (reinterpret_cast<uintptr_t>(qp) & 15) == 0) {
      const float4 v = *reinterpret_cast<const float4*>(qp);
      qx[jj][0] = v.x, qx[jj][1] = v.y, qx[jj][2] = v.z, qx[jj][3] = v.w;
    } else {
#pragma unroll
      for (int u = 0; u < 4; ++u) qx[jj][u] = j < gq ? qp[u] : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      qx[jj][u] *= qscale;
      qm = fmaxf(qm, fabsf(qx[jj][u]));
    }
  }
  qm = warpMax(qm);
  if constexpr (HW) {
    return qm;
  } else {
    if (lane == 0) sQmax[warp] = qm;
    __syncthreads();
    return fmaxf(fmaxf(sQmax[0], sQmax[1]), fmaxf(sQmax[2], sQmax[3]));
  }
}

// Head warps (HW): lane (g, t) of the warp holding all of query head hq's share of a split stores
// it: output columns hi + lo (+ z, the INT4 zero-point term) of dims 16 g + 2 mt, + 1 (the
// tensor-core kernels' O^T layout), the reference mT as the max and the sum l; NaN sum and
// accumulator with a finite max for a bad entry (as mergeWarpsAndStore); the output itself when
// the grid has one split.
__device__ __forceinline__ void storeHeadPartials(const float (&o)[8][4], float z, float m, float l, bool bad, int D, int hq,
                                                  int split, int qHeads, int g, float* __restrict__ out,
                                                  float* __restrict__ partAcc, float* __restrict__ partMl) {
  float2 a[8];
#pragma unroll
  for (int mt = 0; mt < 8; ++mt) a[mt] = make_float2(o[mt][0] + o[mt][1] + z, o[mt][2] + o[mt][3] + z);
  if (bad) {
#pragma unroll
    for (int mt = 0; mt < 8; ++mt) a[mt] = make_float2(NAN, NAN);
    l = NAN;
    if (m == -INFINITY) m = 0.0f;
  }
  if (gridDim.x == 1) {  // scalar stores: `out` is only 4-byte aligned
    float* dst = out + static_cast<size_t>(hq) * D + 16 * g;
#pragma unroll
    for (int mt = 0; mt < 8; ++mt) {
      dst[2 * mt] = a[mt].x / l;
      dst[2 * mt + 1] = a[mt].y / l;
    }
    return;
  }
  const size_t i = static_cast<size_t>(split) * qHeads + hq;
  float2* dst = reinterpret_cast<float2*>(partAcc + i * D + 16 * g);
#pragma unroll
  for (int mt = 0; mt < 8; ++mt) dst[mt] = a[mt];
  if (g == 0) *reinterpret_cast<float2*>(partMl + i * 2) = make_float2(m, l);
}

// grid (splits, kvHeads), block kMmaWarps * 32, dynamic shared memory MmaCfg<S>::kSmemBytes; or
// with HW ("head warps"): grid (splits), block kvHeads * 32 (kvHeads <= kMmaHeadWarps), dynamic
// shared memory MmaCfg<S, true>::smemBytes(kvHeads): warp w takes kv head w over all of the
// split's chunks (warpChunks with one warp), so the kv heads of a KV block (contiguous in its
// sections) are read by one multiprocessor together, and each warp writes its own partial results
// (paged-attention-mma-fp16.cuh has the same mode).
// Every block-table entry must be INT4 (the caller's promise, AttentionArgs::uniformPrecision):
// any other entry, like a bad one, makes the output NaN; nothing outside the arena is read.
// Chunk ownership: v3's (warpChunks).
template <int S, bool HW = false>
__global__ void __launch_bounds__(MmaCfg<S, HW>::kWarps * 32, MmaCfg<S, HW>::kMinBlocks) pagedAttentionMmaInt4(
    AttentionShape s, int gq, const uint8_t* __restrict__ arena, size_t arenaBytes,
    const BlockEntry* __restrict__ table, const float* __restrict__ q,
    float* __restrict__ partAcc, float* __restrict__ partMl, float* __restrict__ out) {
  static_assert(S >= 2 && S <= 32, "stages: one bit each in okMask");
  constexpr int WM = MmaCfg<S, HW>::kWarps;
  constexpr int D = kMmaD;
  constexpr int W = kMmaWarps;
  constexpr int SB = kMmaStageBytes;
  extern __shared__ __align__(16) uint8_t smem[];
  __shared__ __align__(16) uint32_t sP[WM][8 * kMmaPStride];  // P'^T in f16 pairs (token t, t + 8)

  // The warp index through redux.sync: a uniform register, so that everything derived from it
  // (the warp's chunks, ring and barrier addresses, the loop) stays in uniform registers and the
  // bulk copies take their operands without a per-copy uniform-register loop.
  const int warp = static_cast<int>(__reduce_max_sync(kFullMask, threadIdx.x / 32u));
  const int split = blockIdx.x, h = HW ? warp : static_cast<int>(blockIdx.y);
  const int lane = threadIdx.x % 32;
  const int g = lane >> 2, t4 = lane & 3;
  const BlockGeometry geo = geometryOf(s);
  uint8_t* ring = smem + warp * (S * SB);
  const uint32_t ringS = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");  // see v3 (PDL reduce)

  const int totalChunks = (s.contextTokens + kChunkTokens - 1) / kChunkTokens;
  const int cpb = s.blockTokens / kChunkTokens;
  // An entry is kept as its block's offset, checked when loaded: bit 0 set (offsets are
  // 16-aligned) when the block is not a usable INT4 block inside the arena.
  const size_t vOff = vOffset(geo, kInt4), kmOff = kMetaOffset(geo, kInt4), vmOff = vMetaOffset(geo, kInt4);
  const size_t bb = blockBytes(geo, kInt4);
  const bool anyFits = arenaBytes >= bb;
  const uint64_t lastOffset = anyFits ? arenaBytes - bb : 0;
  auto checkedEntry = [&](int block) -> uint64_t { return usableOffset(table[block], kInt4, anyFits, lastOffset); };

  // Chunks first + k * step, k < n (v3's). Block-table entries, 32 chunks at a time: lane i holds
  // the entry of the warp's chunk kb + i (entCur) and of kb + 32 + i (entNxt), loaded a batch
  // ahead, so no table load is on the copy path. The chunk's position in its block (sub) follows
  // the chunks without division.
  const WarpChunks wc = HW ? warpChunks(s.contextTokens, split, gridDim.x, 0, 1) : warpChunks(s.contextTokens, split, gridDim.x, warp, W);
  const int first = wc.first, step = wc.step, n = wc.n;
  const int stepSub = step % cpb;
  int sub = first % cpb;
  auto loadEnt = [&](int kk) -> uint64_t { return kk < n ? checkedEntry((first + kk * step) / cpb) : 1; };
  uint64_t entCur = loadEnt(lane), entNxt = loadEnt(32 + lane);

  const uint32_t headRow = static_cast<uint32_t>(h * s.blockTokens);  // first row of head h in a block
  // warp-uniform bit masks over the stages: fillMask: holds a chunk; okMask: the chunk's entry is a
  // valid INT4 block (else skipped, output NaN); lastMask: the chunk is the context's last
  unsigned okMask = 0, fillMask = 0, lastMask = 0;
  bool bad = false;
  // One mbarrier per stage, the copies by lane 0 on the TMA engine (4 bulk copies per chunk).
  __shared__ __align__(8) uint64_t sBar[WM][S];
  const uint32_t bar0 = static_cast<uint32_t>(__cvta_generic_to_shared(&sBar[warp][0]));
  initStageBarriers<S>(bar0, lane);
  // Fills stage `slot` with the warp's k-th chunk, if any.
  auto issue = [&](int k, int slot) {
    const unsigned bit = 1u << slot;
    const bool has = k < n;
    uint64_t offset = 1;
    uint32_t row = 0;
    if (has) {
      offset = fromLane(entCur, k & 31, lane);  // the entry of chunk k from lane k % 32
      if ((k & 31) == 31) {
        entCur = entNxt;
        entNxt = loadEnt(k + 33 + lane);
      }
      row = headRow + static_cast<uint32_t>(sub * kChunkTokens);  // first row of the chunk
      sub += stepSub;
      if (sub >= cpb) sub -= cpb;
    }
    fillMask = has ? fillMask | bit : fillMask & ~bit;
    lastMask = has && first + k * step == totalChunks - 1 ? lastMask | bit : lastMask & ~bit;
    if (has) {
      const bool ok = (offset & 1u) == 0;
      okMask = ok ? okMask | bit : okMask & ~bit;
      if (!ok) bad = true;  // the output becomes NaN below
      if (lane == 0) {
        const uint8_t* base = arena + offset;
        const uint32_t dst = ringS + slot * SB;
        const uint32_t bar = bar0 + 8 * slot;
        if (ok) {
          // No proxy fence: the stage's last reads (every lane's, ordered by the __syncwarp at
          // the end of the chunk) are done before this refill is issued, as in a TMA pipeline
          // whose consumers release a stage through a barrier.
          mbarArriveExpectTx(bar, SB);
          bulkCopy(dst, base + row * (D / 2), 1024, bar);
          bulkCopy(dst + 1024, base + vOff + row * (D / 2), 1024, bar);
          bulkCopy(dst + 2048, base + kmOff + row * 4, 64, bar);
          bulkCopy(dst + 2112, base + vmOff + row * 4, 64, bar);
        } else {
          mbarArrive(bar);  // completes the phase: the stage is skipped
        }
      }
    }
  };
  // The first chunk now, the rest of the ring after q is prepared: every warp's first chunk is
  // ahead of the other warps' later chunks in the memory queue at the start.
  issue(0, 0);

  // ---- q as the B operand of S^T = Kc . Qd^T (s8 digits), built once per kv head ----
  // q' = x * 2^-e, x = rint(q * 2^e) with |x| < 2^21 (e from the kv head's largest |q|), as three
  // balanced base-256 digits x = d2 * 2^16 + d1 * 2^8 + d0. Lane (g, t) holds, per k-step i (32
  // dims) and register r, the digits of dims 32 t + 8 i + 2 b + r (byte b), matching the A
  // registers built from K (low nibbles r = 0, high nibbles r = 1). n-tile 0, column g: head
  // g & 3, digit d2 (g < 4) or d1; n-tile 1: digit d0 (g < 4) or 0.
  // HW false: warp j takes query head j of the block's kv head, e from the largest |q| of the
  // block's query heads; HW true: each warp all of its kv head's query heads, e from those, in its
  // own copy of the operand. (Its 16 KB of static shared memory leave one block of 8 warps per SM
  // at 6 stages: measured faster than building the operand in a ring stage for two blocks per SM,
  // INT4 128k 61.6-64.0 vs 66.4-67.7 us on the H100, lab/notes/HIL-NOTES.md.)
  constexpr int QW = HW ? WM : 1;  // operand copies: one per warp (HW) or per block
  constexpr int QJ = HW ? 4 : 1;   // query heads this thread loads
  __shared__ __align__(16) uint32_t sQbAll[QW][32][16];  // [warp or 0][lane][k-step i][n-tile][register]
  uint32_t(*sQb)[16] = sQbAll[HW ? warp : 0];
  __shared__ float sQmax[W], sQsum[QW][4];
  const int wq = HW ? warp : 0;
  float qx[QJ][4];  // query head (HW: jj; else: warp), dims 4 lane .. 4 lane + 3
  const float qabs = loadScaledQ<HW>(qx, q, s.softmaxScale * kLog2e, h, gq, warp, lane, sQmax);
  int ex = 0;
  frexpf(qabs, &ex);  // qabs < 2^ex (ex = 0 for qabs = 0)
  const int e = 21 - ex;
#pragma unroll
  for (int jj = 0; jj < QJ; ++jj) {
    const int j = HW ? jj : warp;
    const float f1 = ldexpf(1.0f, min(e, 126)), f2 = ldexpf(1.0f, e - min(e, 126));  // 2^e as two exact factors
    int xs = 0;
    uint8_t* qbBytes = reinterpret_cast<uint8_t*>(&sQb[0][0]);
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int d = 4 * lane + u;
      const int x = __float2int_rn(qx[jj][u] * f1 * f2);
      xs += x;
      const int d0 = static_cast<int8_t>(x & 0xff);
      const int x1 = (x - d0) >> 8;
      const int d1 = static_cast<int8_t>(x1 & 0xff);
      const int d2 = (x1 - d1) >> 8;
      const int t = d >> 5, i = (d >> 3) & 3, b = (d >> 1) & 3, r = d & 1;
      const int lo = (4 * (2 * j) + t) * 64, hi = (4 * (2 * j + 1) + t) * 64;  // byte offsets of lanes (2 j, t), (2 j + 1, t)
      const int at = (i * 4 + r) * 4 + b;                             // word i * 4 + tile * 2 + r, byte b
      qbBytes[lo + at] = static_cast<uint8_t>(d2);
      qbBytes[hi + at] = static_cast<uint8_t>(d1);
      qbBytes[lo + at + 8] = static_cast<uint8_t>(d0);  // tile 1: + 2 words
      qbBytes[hi + at + 8] = 0;
    }
#pragma unroll
    for (int o2 = 16; o2 > 0; o2 >>= 1) xs += __shfl_xor_sync(kFullMask, xs, o2);
    if (lane == 0) sQsum[wq][j] = static_cast<float>(xs) * ldexpf(1.0f, -e);
  }
  if constexpr (HW) __syncwarp();
  else __syncthreads();
  uint32_t qb[4][2][2];  // [k-step][n-tile][register]
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint4 v = *reinterpret_cast<const uint4*>(&sQb[lane][4 * i]);
    qb[i][0][0] = v.x, qb[i][0][1] = v.y, qb[i][1][0] = v.z, qb[i][1][1] = v.w;
  }

  // Lane (g, t4) computes for query head t4: its scores (n-tile 0 columns 2 t4 / 2 t4 + 1 =
  // digits d2 / d1, n-tile 1 column 2 t4 = d0), its softmax, and its output columns (P' columns
  // 2 t4 = hi, 2 t4 + 1 = lo): no shuffles between the K and V products.
  const float qUnit = ldexpf(1.0f, -e);
  const float qsumL = sQsum[wq][t4];

  // ---- running state of head t4 ----
  float mT = -INFINITY;  // reference of the exponents (log2 domain), uniform over the lanes of the head
  float lS = 0.0f;       // sum of 2^(score - mT), this lane's tokens
  float zS = 0.0f;       // sum of 2^(score - mT) * zero, this lane's tokens
  float o[8][4];         // O^T: rows 16 g + 2 mt (+1), columns 2 t4 (hi), 2 t4 + 1 (lo)
#pragma unroll
  for (int mt = 0; mt < 8; ++mt) o[mt][0] = o[mt][1] = o[mt][2] = o[mt][3] = 0.0f;
  uint32_t* sPw = sP[warp];
  const int lastValid = s.contextTokens - (totalChunks - 1) * kChunkTokens;  // rows of the last chunk, 1..16
  // this lane's stage offsets
  const uint32_t kOff = g * 64 + t4 * 16, vOffL = 1024 + t4 * 64 + 8 * g;
  const uint32_t mOff = 2048 + 4 * g;

#pragma unroll
  for (int k = 1; k < S - 1; ++k) issue(k, k);

  int slot = 0;
  unsigned phases = 0;  // bit i = parity of stage i's next phase
  for (int k = 0;; ++k) {
    issue(k + S - 1, slot == 0 ? S - 1 : slot - 1);
    if (!(fillMask & (1u << slot))) break;  // chunks come in order: no later stage holds one
    mbarWait(bar0 + 8 * slot, (phases >> slot) & 1u);  // chunk k has landed (or was skipped)
    phases ^= 1u << slot;
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
      // q' . code * 2^e of tokens g and g + 8 (head t4): d2 * 2^16 + d1 * 2^8 + d0
      const float sg = fmaf(__int_as_float(acc0[0]) - kMmaIntBiasValue, 65536.0f,
                            fmaf(__int_as_float(acc0[1]) - kMmaIntBiasValue, 256.0f, __int_as_float(acc1[0]) - kMmaIntBiasValue));
      const float sg8 = fmaf(__int_as_float(acc0[2]) - kMmaIntBiasValue, 65536.0f,
                             fmaf(__int_as_float(acc0[3]) - kMmaIntBiasValue, 256.0f, __int_as_float(acc1[2]) - kMmaIntBiasValue));
      const float2 km0 = __half22float2(*reinterpret_cast<const __half2*>(st + mOff));
      const float2 km1 = __half22float2(*reinterpret_cast<const __half2*>(st + mOff + 32));
      float2 vm0 = __half22float2(*reinterpret_cast<const __half2*>(st + mOff + 64));
      float2 vm1 = __half22float2(*reinterpret_cast<const __half2*>(st + mOff + 96));
      float sc0 = fmaf(km0.x * qUnit, sg, km0.y * qsumL);  // token g
      float sc1 = fmaf(km1.x * qUnit, sg8, km1.y * qsumL);  // token g + 8
      if (lastMask & (1u << slot)) {  // rows past the context may hold anything, even NaN meta
        if (g >= lastValid) {
          sc0 = -INFINITY;
          vm0 = make_float2(0.0f, 0.0f);
        }
        if (g + 8 >= lastValid) {
          sc1 = -INFINITY;
          vm1 = make_float2(0.0f, 0.0f);
        }
      }
      // p = 2^(score - mT) and P' = p * V scale against the running reference mT. The reference
      // moves only when some P' would pass 2^15 (f16 range, with margin) or some p 2^44 (l and z
      // stay finite for tiny V scales; at the start mT = -inf makes p infinite or NaN): then to
      // max over the head's tokens of (score + log2 V scale) - 13, with the exact rescale, so
      // that P' <= 2^13 right after a move.
      float p0 = ex2Ftz(sc0 - mT), p1 = ex2Ftz(sc1 - mT);
      float P0 = p0 * vm0.x, P1 = p1 * vm1.x;
      if (__any_sync(kFullMask, fmaxf(P0, P1) > 32768.0f || fmaxf(p0, p1) > 17592186044416.0f)) {  // rare after the first chunks
        const float ls0 = fmaxf(lg2Ftz(vm0.x), -30.0f), ls1 = fmaxf(lg2Ftz(vm1.x), -30.0f);
        const float a = moveReference(mT, fmaxf(sc0 + ls0, sc1 + ls1), o);
        lS *= a;
        zS *= a;
        p0 = ex2Ftz(sc0 - mT), p1 = ex2Ftz(sc1 - mT);
        P0 = p0 * vm0.x, P1 = p1 * vm1.x;
      }
      lS += p0 + p1;
      zS = fmaf(p0, vm0.y, fmaf(p1, vm1.y, zS));
      // P' of tokens (g, g + 8) as f16 pairs: hi in column 2 t4, lo = P' - hi in column 2 t4 + 1
      const __half2 hi = __floats2half2_rn(P0, P1);
      const float2 fh = __half22float2(hi);
      sPw[(2 * t4) * kMmaPStride + g] = h2bits(hi);
      sPw[(2 * t4 + 1) * kMmaPStride + g] = h2bits(__floats2half2_rn(P0 - fh.x, P1 - fh.y));
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
        // byte `by` of each token's word into bytes 0 and 2 (bytes 1 and 3 are masked off)
        const uint32_t sel = static_cast<uint32_t>(by) * 0x0011u + static_cast<uint32_t>(4 + by) * 0x1100u;
        const uint32_t za = __byte_perm(x0, y0, sel);
        const uint32_t zb = __byte_perm(x1, y1, sel);
        float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // this chunk alone (Accumulation, top of the file)
        mma16816(c, nib2(za, false), nib2(za, true), nib2(zb, false), nib2(zb, true), b0, b1);
        o[mt][0] += c[0], o[mt][1] += c[1], o[mt][2] += c[2], o[mt][3] += c[3];
      }
    }
    __syncwarp();  // every lane is done with this stage (and sP) before they are refilled
    slot = slot == S - 1 ? 0 : slot + 1;
  }

  // ---- merge: hi + lo columns, the lanes of a head, then the warps (as v3) ----
#pragma unroll
  for (int o2 = 4; o2 < 32; o2 <<= 1) {
    lS += __shfl_xor_sync(kFullMask, lS, o2);
    zS += __shfl_xor_sync(kFullMask, zS, o2);
  }
  if constexpr (HW) {  // the warp holds all of its kv head's share of this split: store it
    if (t4 < gq) storeHeadPartials(o, zS, mT, lS, bad, D, h * gq + t4, split, s.qHeads, g, out, partAcc, partMl);
    return;
  }
  float* sAcc = reinterpret_cast<float*>(smem);  // [W][4][D], reuses the stage ring
  __shared__ float sM[W][4], sL[W][4];
  __shared__ int sBad;
  if (threadIdx.x == 0) sBad = 0;
  __syncthreads();  // every warp is past its ring
  if (bad) sBad = 1;
  {
    float* a0 = sAcc + (warp * 4 + t4) * D + 16 * g;
#pragma unroll
    for (int mt = 0; mt < 8; ++mt) {
      a0[2 * mt] = o[mt][0] + o[mt][1] + zS;
      a0[2 * mt + 1] = o[mt][2] + o[mt][3] + zS;
    }
    if (g == 0) {
      sM[warp][t4] = mT;
      sL[warp][t4] = lS;
    }
  }
  __syncthreads();
  mergeWarpsAndStore(sM, sL, sAcc, D, gq, h, split, s.qHeads, sBad != 0, out, partAcc, partMl);
}

}  // namespace hil::cuda
