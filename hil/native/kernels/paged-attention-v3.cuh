// Decode attention v3 over a paged, mixed-precision KV cache (layout: common/kv-format.h),
// flash-decoding style: grid (splits, kvHeads); each block of kV3Warps warps streams its split's
// share of the context for one kv head and all of that head's query heads (GQA: every KV byte is
// read once), keeps an online softmax per query head (online-softmax.cuh), and writes a partial
// (max, sum, acc) that the split reduce merges (split-reduce.cuh), or the output with one split.
//
// Thread layout: a token row of D dims is read by D/8 lanes, 8 dims each; a warp reads 256/D rows
// per step and a 16-token chunk in 16/(256/D) steps. Chunks never straddle blocks (blockTokens is
// a multiple of 16), so a chunk has one precision.
//
// Each warp streams its chunks through a private ring of S shared-memory stages: while it computes
// chunk k, chunks k+1 .. k+S-1 are in flight. The copy is precision-agnostic (a chunk is at most
// four contiguous, 16-byte aligned byte ranges of its block: K codes, V codes, K meta, V meta), so
// mixed tables pipeline across precision changes; the per-chunk compute switches on the chunk's
// precision (warp-uniform). Block table entries are loaded one chunk ahead of their copies, so no
// dependent global load stalls a warp in the steady state. BULK (D 128): lane 0 issues one bulk
// copy per range (TMA engine) completing on a per-stage mbarrier; otherwise every lane copies
// 16-byte pieces with cp.async.
//
// Stage layout (bytes, P = precision of the chunk, b = bits, G = group size):
//   [K: 16*D*b/8][V: 16*D*b/8][K meta: 16*(D/G)*4][V meta: 16*(D/G)*4]
// FP16: 64*D bytes; INT8 at G = 8: 48*D. kStageBytes = 64*D holds every precision. INT3: 16*D*3/8
// = 6*D bytes per section (a multiple of 16 at D 64, 128, 256), rows of 3*D/8 bytes; its 8-element
// pieces are 3 bytes, read byte by byte from the stage.
#pragma once
#include "attention-common.cuh"
#include "mbarrier.cuh"

#ifndef HIL_ATTN_V_UNROLL
#define HIL_ATTN_V_UNROLL 16  // V loop: fully unrolled (ITERS <= 16); 2 = rolled, for code size
#endif

namespace hil::cuda {

constexpr int kV3Warps = 4;
constexpr int kV3Stages = 3;
constexpr int kVUnroll = HIL_ATTN_V_UNROLL;
template <int D>
struct V3Cfg {
  static constexpr int kStageBytes = 64 * D;
  static constexpr int kSmemBytes = kV3Warps * kV3Stages * kStageBytes;
};

__device__ __forceinline__ void cpAsync16(void* smemDst, const void* gmemSrc) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smemDst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmemSrc) : "memory");
}
__device__ __forceinline__ void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Warp-cooperative copy of `bytes` (a multiple of 16) from global to shared.
__device__ __forceinline__ void warpCopy(uint8_t* dst, const uint8_t* src, unsigned bytes, int lane) {
  for (unsigned off = lane * 16u; off < bytes; off += 512u) cpAsync16(dst + off, src + off);
}

template <int P>
__device__ __forceinline__ typename Raw<P>::T loadRawShared(const uint8_t* section, unsigned e) {
  if constexpr (P == kFp16) return *reinterpret_cast<const uint4*>(section + e * 2);
  else if constexpr (P == kInt8) return *reinterpret_cast<const uint2*>(section + e);
  else if constexpr (P == kInt4) return *reinterpret_cast<const unsigned int*>(section + e / 2);
  else if constexpr (P == kInt3) {  // 3 bytes at e * 3 / 8 (e a multiple of 8): byte-aligned only
    const uint8_t* b = section + e / 8 * 3;
    return static_cast<unsigned>(b[0]) | (static_cast<unsigned>(b[1]) << 8) | (static_cast<unsigned>(b[2]) << 16);
  } else return *reinterpret_cast<const unsigned short*>(section + e / 4);
}

__device__ __forceinline__ unsigned chunkCodeBytes(int D, int p) { return 16u * D * precisionBits(p) / 8u; }
__device__ __forceinline__ unsigned chunkMetaBytes(int D, int G) { return 16u * (D / G) * 4u; }
// Bytes of one chunk in a stage: K and V codes, and K and V meta for INT (multiples of 16).
__device__ __forceinline__ unsigned chunkStageBytes(int D, int p, unsigned metaBytes) {
  return 2u * chunkCodeBytes(D, p) + (p != kFp16 ? 2u * metaBytes : 0u);
}

// ---- reduce-scatter scores ------------------------------------------------------------------
// Reducing every (head, row) dot product over the LPT lanes of its row with its own log2(LPT)
// shuffles would make every lane compute every exp2 of the chunk. v3 instead reduce-scatters the
// NV = GQ * ITERS partial dots over the LPT lanes: at each step a lane keeps one half of its
// values and receives the partner's half of that half, so a lane ends with MF complete scores (one head, MF consecutive row steps) after ~NV shuffles instead of
// NV * log2(LPT). The softmax works on those; the probabilities go to V through a per-warp
// [16 tokens][GQ] array in shared memory.
template <int M, int O>
__device__ __forceinline__ int rsBase(int lane) {
  if constexpr (O > 0 && M >= 2) return ((lane & O) ? M / 2 : 0) + rsBase<M / 2, O / 2>(lane);
  else return 0;
}
template <int M, int O>
__host__ __device__ constexpr int rsFinal() {
  if constexpr (O > 0 && M >= 2) return rsFinal<M / 2, O / 2>();
  else return M;
}
// Lane offsets (inside a row group) whose bit selects a row step rather than a head: the
// halving steps whose half H < ITERS.
template <int M, int O, int ITERS>
__host__ __device__ constexpr unsigned rsItMask() {
  if constexpr (O > 0 && M >= 2) return (M / 2 < ITERS ? static_cast<unsigned>(O) : 0u) | rsItMask<M / 2, O / 2, ITERS>();
  else return 0u;
}
// The lane (row group 0) holding head j's scores.
template <int M, int O>
__host__ __device__ constexpr int rsLaneOf(int base) {
  if constexpr (O > 0 && M >= 2) return (base >= M / 2 ? O : 0) + rsLaneOf<M / 2, O / 2>(base >= M / 2 ? base - M / 2 : base);
  else return 0;
}
template <int NV, int M, int O>
__device__ __forceinline__ void rsReduce(float (&v)[NV], int lane) {
  if constexpr (O > 0) {
    if constexpr (M >= 2) {
      constexpr int H = M / 2;
      const bool upper = (lane & O) != 0;
#pragma unroll
      for (int i = 0; i < H; ++i) {
        const float a = v[i], b = v[i + H];
        const float send = upper ? a : b;
        const float keep = upper ? b : a;
        v[i] = keep + __shfl_xor_sync(kFullMask, send, O);
      }
      rsReduce<NV, H, O / 2>(v, lane);
    } else {
      v[0] += __shfl_xor_sync(kFullMask, v[0], O);
      rsReduce<NV, M, O / 2>(v, lane);
    }
  }
}

// Max or sum over the lanes that hold the same head: the row-step bits and the row groups.
template <int D, int GQ, bool MAX>
__device__ __forceinline__ float rsHeadReduce(float x) {
  constexpr int LPT = D / 8, TPI = 32 / LPT, ITERS = kChunkTokens / TPI, NV = GQ * ITERS;
  constexpr unsigned itMask = rsItMask<NV, LPT / 2, ITERS>();
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    if ((o < LPT && (itMask & o)) || o >= LPT) {
      const float y = __shfl_xor_sync(kFullMask, x, o);
      x = MAX ? fmaxf(x, y) : x + y;
    }
  }
  return x;
}
template <int D, int GQ>
__device__ __forceinline__ float rsFromHead(float x, int j) {
  constexpr int LPT = D / 8, TPI = 32 / LPT, ITERS = kChunkTokens / TPI, NV = GQ * ITERS;
  return __shfl_sync(kFullMask, x, rsLaneOf<NV, LPT / 2>(j * ITERS));
}

template <int D, int GQ>
struct RsState {
  float m[GQ];  // running max per head (log2 domain), warp-uniform
  float lOwn;   // this lane's share of the sum of exp for its own head
  float acc[GQ][8];
  float zacc[GQ];
};

template <int P, int D, int GQ>
__device__ __forceinline__ void attendStageRS(RsState<D, GQ>& st, const float (&q)[GQ][8], const float (&qsum)[GQ],
                                              const uint8_t* stage, int groupShift, int validTokens, float* sP) {
  constexpr int LPT = D / 8;
  constexpr int TPI = 32 / LPT;
  constexpr int ITERS = kChunkTokens / TPI;
  constexpr int NV = GQ * ITERS;
  constexpr int MF = rsFinal<NV, LPT / 2>();
  constexpr unsigned CB = 16u * D * (P == kFp16 ? 16 : P == kInt8 ? 8 : P == kInt4 ? 4 : P == kInt3 ? 3 : 2) / 8u;
  const int lane = threadIdx.x % 32;
  const int sub = lane / LPT, dl = lane % LPT;
  const uint8_t* kSec = stage;
  const uint8_t* vSec = stage + CB;
  const uint8_t* kMeta = stage + 2 * CB;
  const uint8_t* vMeta = kMeta + 64u * (D >> groupShift);

  float v[NV];  // v[j * ITERS + it]: partial dots of this lane's 8 dims
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    const int tok = it * TPI + sub;
    const unsigned e = static_cast<unsigned>(tok * D + dl * 8);
    const typename Raw<P>::T kr = loadRawShared<P>(kSec, e);
    float2 km = make_float2(1.0f, 0.0f);
    if constexpr (P != kFp16) km = __half22float2(reinterpret_cast<const __half2*>(kMeta)[e >> groupShift]);
    float x[8];
    decode<P>(kr, x);
#pragma unroll
    for (int j = 0; j < GQ; ++j) {
      float d = 0.0f;
#pragma unroll
      for (int i = 0; i < 8; ++i) d = fmaf(q[j][i], x[i], d);
      // scale * (q . code) + zero * sum(q) per lane: the group's scale and zero are the
      // lane's own (a group never straddles lanes: G >= 8), so the affine map goes in here
      if constexpr (P != kFp16) d = fmaf(km.x, d, km.y * qsum[j]);
      v[j * ITERS + it] = d;
    }
  }
  rsReduce<NV, NV, LPT / 2>(v, lane);
  const int base = rsBase<NV, LPT / 2>(lane);
  const int jOwn = base / ITERS, it0 = base % ITERS;
  float sc[MF];
  float lm = -INFINITY;
#pragma unroll
  for (int r = 0; r < MF; ++r) {
    sc[r] = (it0 + r) * TPI + sub < validTokens ? v[r] : -INFINITY;
    lm = fmaxf(lm, sc[r]);
  }
  lm = rsHeadReduce<D, GQ, true>(lm);
  float mOwn = 0.0f, alphaOwn = 0.0f;
#pragma unroll
  for (int j = 0; j < GQ; ++j) {
    const float cm = rsFromHead<D, GQ>(lm, j);
    const float alpha = raiseMax(st.m[j], cm);  // m = -inf at start: alpha = 0
    st.zacc[j] *= alpha;
#pragma unroll
    for (int i = 0; i < 8; ++i) st.acc[j][i] *= alpha;
    if (j == jOwn) {
      mOwn = st.m[j];
      alphaOwn = alpha;
    }
  }
  st.lOwn *= alphaOwn;
#pragma unroll
  for (int r = 0; r < MF; ++r) {
    const float p = exp2f(sc[r] - mOwn);
    st.lOwn += p;
    sP[((it0 + r) * TPI + sub) * GQ + jOwn] = p;
  }
  __syncwarp();
  // V rows past the context were zeroed in the stage (zeroTail) and their p is 0: no selects.
#pragma unroll kVUnroll
  for (int it = 0; it < ITERS; ++it) {
    const int tok = it * TPI + sub;
    const unsigned e = static_cast<unsigned>(tok * D + dl * 8);
    const typename Raw<P>::T vr = loadRawShared<P>(vSec, e);
    float2 vm = make_float2(1.0f, 0.0f);
    if constexpr (P != kFp16) vm = __half22float2(reinterpret_cast<const __half2*>(vMeta)[e >> groupShift]);
    float pj[GQ];
    if constexpr (GQ % 4 == 0) {
#pragma unroll
      for (int j = 0; j < GQ; j += 4) {
        const float4 t = *reinterpret_cast<const float4*>(sP + tok * GQ + j);
        pj[j] = t.x; pj[j + 1] = t.y; pj[j + 2] = t.z; pj[j + 3] = t.w;
      }
    } else if constexpr (GQ == 2) {
      const float2 t = *reinterpret_cast<const float2*>(sP + tok * GQ);
      pj[0] = t.x; pj[1] = t.y;
    } else {
      pj[0] = sP[tok];
    }
    float x[8];
    decode<P>(vr, x);
    const float s = P != kFp16 ? vm.x : 1.0f;
#pragma unroll
    for (int j = 0; j < GQ; ++j) {
      const float ps = pj[j] * s;
      if constexpr (P != kFp16) st.zacc[j] = fmaf(pj[j], vm.y, st.zacc[j]);
#pragma unroll
      for (int i = 0; i < 8; ++i) st.acc[j][i] = fmaf(ps, x[i], st.acc[j][i]);
    }
  }
}

// Zeroes the V rows validTokens..15 of a stage (codes, and meta for INT): rows past the context
// may hold anything, even NaN, and the V loop multiplies without selects (p = 0 there).
template <int D>
__device__ __forceinline__ void zeroTail(uint8_t* stage, int precision, int groupShift, int validTokens, int lane) {
  const unsigned rowBytes = D * precisionBits(precision) / 8u;
  const unsigned cb = 16u * rowBytes;
  uint32_t* v = reinterpret_cast<uint32_t*>(stage + cb + validTokens * rowBytes);
  for (unsigned w = lane; w < (16u - validTokens) * rowBytes / 4u; w += 32u) v[w] = 0u;
  if (precision != kFp16) {
    const unsigned metaRow = 4u * (D >> groupShift);
    uint32_t* vm = reinterpret_cast<uint32_t*>(stage + 2 * cb + 16u * metaRow + validTokens * metaRow);
    for (unsigned w = lane; w < (16u - validTokens) * metaRow / 4u; w += 32u) vm[w] = 0u;
  }
}

// grid (splits, kvHeads), block kV3Warps * 32, dynamic shared memory V3Cfg<D>::kSmemBytes. GQ is
// the query heads per kv head rounded up to 1, 2, 4 or 8; `gq` is the real count. Split x owns the
// granules x, x + splits, ... of kV3Warps chunks (warpChunks). BULK: bulk stage fills (D 128).
template <int D, int GQ, bool BULK>
__global__ void __launch_bounds__(kV3Warps * 32, 1) pagedAttentionKernelV3(
    AttentionShape s, int gq, const uint8_t* __restrict__ arena, size_t arenaBytes,
    const BlockEntry* __restrict__ table, const float* __restrict__ q,
    float* __restrict__ partAcc, float* __restrict__ partMl, float* __restrict__ out) {
  constexpr int S = kV3Stages;
  constexpr int LPT = D / 8;
  constexpr int W = kV3Warps;
  constexpr int SB = V3Cfg<D>::kStageBytes;
  extern __shared__ __align__(16) uint8_t smem[];
  __shared__ int sInfo[W][S];   // precision of the chunk in each stage, -1 = none or bad entry

  const int split = blockIdx.x, h = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int dl = lane % LPT;
  const BlockGeometry g = geometryOf(s);
  const float qscale = s.softmaxScale * kLog2e;
  uint8_t* ring = smem + warp * (S * SB);
  // The split reduce, launched with programmatic dependent launch, may start once every block of
  // this grid runs; it waits for this grid's completion (griddepcontrol.wait) before reading the
  // partials.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");

  // The chunks of this warp: first + k * step, k < n.
  const WarpChunks wc = warpChunks(s.contextTokens, split, gridDim.x, warp, W);
  const int first = wc.first, step = wc.step, n = wc.n;
  const int chunksPerBlock = s.blockTokens / kChunkTokens;
  const unsigned metaBytes = chunkMetaBytes(D, s.groupSize);
  bool bad = false;

  auto entryOk = [&](const BlockEntry& e) {  // never read outside the arena
    return validPrecision(e.precision) && e.offset % 16 == 0 && e.offset <= arenaBytes &&
           blockBytes(g, e.precision) <= arenaBytes - e.offset;
  };
  // Starts every lane's copies of chunk c (block `block`, precision p) into dst: at most 4 ranges.
  auto copyChunk = [&](uint8_t* dst, const uint8_t* block, int c, int p) {
    const size_t row = static_cast<size_t>(h) * s.blockTokens + (c % chunksPerBlock) * kChunkTokens;  // first row of the chunk
    const unsigned cb = chunkCodeBytes(D, p);
    const size_t codeAt = row * D * precisionBits(p) / 8;
    warpCopy(dst, block + codeAt, cb, lane);
    warpCopy(dst + cb, block + vOffset(g, p) + codeAt, cb, lane);
    if (p != kFp16) {
      const size_t metaAt = row * (D / s.groupSize) * 4;
      warpCopy(dst + 2 * cb, block + kMetaOffset(g, p) + metaAt, metaBytes, lane);
      warpCopy(dst + 2 * cb + metaBytes, block + vMetaOffset(g, p) + metaAt, metaBytes, lane);
    }
  };

  // BULK: one mbarrier per stage of the warp, armed and filled by lane 0.
  __shared__ __align__(8) uint64_t sBar[W][S];
  const uint32_t bar0 = static_cast<uint32_t>(__cvta_generic_to_shared(&sBar[warp][0]));
  if constexpr (BULK) initStageBarriers<S>(bar0, lane);
  // BULK: lane 0 starts the bulk copies of chunk c (block `block`, precision p) into stage `slot`.
  // No proxy fence: the stage's last reads (every lane's, ordered by the __syncwarp at the end of
  // the chunk) are done before the refill is issued; the only generic writes to a stage (zeroTail)
  // are to the warp's last chunk, never refilled.
  auto bulkChunk = [&](int slot, const uint8_t* block, int c, int p) {
    const size_t row = static_cast<size_t>(h) * s.blockTokens + (c % chunksPerBlock) * kChunkTokens;
    const unsigned cb = chunkCodeBytes(D, p);
    const size_t codeAt = row * D * precisionBits(p) / 8;
    const uint32_t bar = bar0 + 8 * slot;
    const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(ring + slot * SB));
    mbarArriveExpectTx(bar, chunkStageBytes(D, p, metaBytes));
    bulkCopy(dst, block + codeAt, cb, bar);
    bulkCopy(dst + cb, block + vOffset(g, p) + codeAt, cb, bar);
    if (p != kFp16) {
      const size_t metaAt = row * (D / s.groupSize) * 4;
      bulkCopy(dst + 2 * cb, block + kMetaOffset(g, p) + metaAt, metaBytes, bar);
      bulkCopy(dst + 2 * cb + metaBytes, block + vMetaOffset(g, p) + metaAt, metaBytes, bar);
    }
  };

  // The entry of the next chunk, loaded one issue ahead.
  BlockEntry next{};
  if (n > 0) next = table[first / chunksPerBlock];
  auto issue = [&](int k) {
    if (k < n) {
      const BlockEntry e = next;
      if (k + 1 < n) next = table[(first + (k + 1) * step) / chunksPerBlock];
      int info = -1;
      if (!entryOk(e)) {
        bad = true;  // the output becomes NaN below
        if constexpr (BULK) {
          if (lane == 0) mbarArrive(bar0 + 8 * (k % S));  // completes the phase: the stage is skipped
        }
      } else {
        info = e.precision;
        if constexpr (BULK) {
          if (lane == 0) bulkChunk(k % S, arena + e.offset, first + k * step, e.precision);
        } else {
          copyChunk(ring + (k % S) * SB, arena + e.offset, first + k * step, e.precision);
        }
      }
      if (lane == 0) sInfo[warp][k % S] = info;
    }
    if constexpr (!BULK) cpAsyncCommit();  // one group per issue, empty ones included, so wait_group counts stages
  };

  // Start the first copies before the (slower) q setup.
#pragma unroll
  for (int k = 0; k < S - 1; ++k) issue(k);

  float qr[GQ][8], qsum[GQ];
#pragma unroll
  for (int j = 0; j < GQ; ++j) {
    qsum[j] = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      qr[j][i] = j < gq ? q[static_cast<size_t>(h * gq + j) * D + dl * 8 + i] * qscale : 0.0f;
      qsum[j] += qr[j][i];
    }
  }
  RsState<D, GQ> st;
  __shared__ __align__(16) float sPAll[W][kChunkTokens * GQ];  // probabilities of the chunk
  st.lOwn = 0.0f;
#pragma unroll
  for (int j = 0; j < GQ; ++j) {
    st.m[j] = -INFINITY;
    st.zacc[j] = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) st.acc[j][i] = 0.0f;
  }

  for (int k = 0; k < n; ++k) {
    issue(k + S - 1);
    if constexpr (BULK) {
      mbarWait(bar0 + 8 * (k % S), static_cast<unsigned>(k / S) & 1u);  // chunk k has landed
    } else {
      cpAsyncWait<S - 1>();  // this lane's copies of chunk k have landed
    }
    __syncwarp();  // ... and every lane's
    uint8_t* stage = ring + (k % S) * SB;
    const int info = sInfo[warp][k % S];  // -1: bad entry, skipped (flagged at issue)
    const int c = first + k * step;
    const int valid = min(kChunkTokens, s.contextTokens - c * kChunkTokens);
    float* sP = sPAll[warp];
    const int gShift = __ffs(s.groupSize) - 1;  // groups divide D (64, 128, 256): powers of two
    if (valid < kChunkTokens && info >= 0) {
      zeroTail<D>(stage, info, gShift, valid, lane);
      __syncwarp();
    }
    switch (info) {
      case kFp16: attendStageRS<kFp16, D, GQ>(st, qr, qsum, stage, gShift, valid, sP); break;
      case kInt8: attendStageRS<kInt8, D, GQ>(st, qr, qsum, stage, gShift, valid, sP); break;
      case kInt4: attendStageRS<kInt4, D, GQ>(st, qr, qsum, stage, gShift, valid, sP); break;
      case kInt2: attendStageRS<kInt2, D, GQ>(st, qr, qsum, stage, gShift, valid, sP); break;
      case kInt3: attendStageRS<kInt3, D, GQ>(st, qr, qsum, stage, gShift, valid, sP); break;
      default: break;
    }
    __syncwarp();  // every lane is done with this stage before it is refilled
  }
  if constexpr (!BULK) cpAsyncWait<0>();

  // Merge the lanes that share dims (different token rows), then the warps.
  float lw[GQ];  // the warp's sum of exp per head
  {
    const float ls = rsHeadReduce<D, GQ, false>(st.lOwn);
#pragma unroll
    for (int j = 0; j < GQ; ++j) lw[j] = rsFromHead<D, GQ>(ls, j);
  }
#pragma unroll
  for (int j = 0; j < GQ; ++j) {
#pragma unroll
    for (int o = LPT; o < 32; o <<= 1) {
      st.zacc[j] += __shfl_xor_sync(kFullMask, st.zacc[j], o);
#pragma unroll
      for (int i = 0; i < 8; ++i) st.acc[j][i] += __shfl_xor_sync(kFullMask, st.acc[j][i], o);
    }
  }
  float* sAcc = reinterpret_cast<float*>(smem);  // [W][GQ][D], reuses the stage ring
  __shared__ float sM[W][GQ], sL[W][GQ];
  __shared__ int sBad;
  if (threadIdx.x == 0) sBad = 0;
  __syncthreads();  // every warp is past its ring
  if (bad) sBad = 1;
  if (lane < LPT) {
#pragma unroll
    for (int j = 0; j < GQ; ++j) {
#pragma unroll
      for (int i = 0; i < 8; ++i) sAcc[(warp * GQ + j) * D + dl * 8 + i] = st.acc[j][i] + st.zacc[j];
    }
  }
  if (lane == 0) {
#pragma unroll
    for (int j = 0; j < GQ; ++j) {
      sM[warp][j] = st.m[j];
      sL[warp][j] = lw[j];
    }
  }
  __syncthreads();
  mergeWarpsAndStore(sM, sL, sAcc, D, gq, h, split, s.qHeads, sBad != 0, out, partAcc, partMl);
}

}  // namespace hil::cuda
