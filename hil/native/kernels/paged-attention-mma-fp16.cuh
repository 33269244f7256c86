// Decode attention on the tensor cores for uniform FP16 tables. Shape: D 128, up to 4 query heads per kv head, 16-token chunks;
// the launcher falls back to v3 for anything else. Same arguments, partial results and reduce
// kernel as v3 (paged-attention-v3.cuh) and the INT4 tensor-core kernel
// (paged-attention-mma.cuh), whose ring, table batches and softmax reference it follows.
//
// Why: v3 spends ~900 instructions per chunk and warp on FP32 dot products, shuffles and FMAs
// (lab/notes/HIL-NOTES.md); its FP16 time fell with every cut in that count (reduce-scatter scores:
// -8 us at 32k). Here a chunk costs 16 mma.sync, 16 shared loads of 16 bytes and 32 byte permutes.
//
// Per warp and chunk (16 tokens of one kv head), two f16 x f16 -> f32 products, m16n8k16:
//   S^T[16 tokens][8] = K[16][128] . Q'^T     8 k-steps. Column 2j = the f16 "hi" part of head j's
//                                             q' = q * scale * 2^e, column 2j + 1 the "lo" part
//                                             (q' - hi), so q' keeps ~22 bits; 2^e puts the
//                                             block's largest |q'| just under 2^14.
//   O^T[128 dims][8] += V^T[128][16] . P^T    8 m-tiles, one k-step. Column 2j = hi part of
//                                             head j's p, column 2j + 1 the lo part.
// Rounding q or p to f16 alone would cost ~2.4e-4 relative per element, more than the checks'
// 2e-4 (the same reason as the INT4 kernel's hi/lo columns). K and V enter exactly.
//
// Operand layouts (lane = (g = lane / 4, t = lane % 4)), chosen so that every shared load is 16
// bytes and no shuffles are needed between the two products:
//   K: lane reads rows g and g + 8, 16-byte pieces t, t + 4, t + 8, t + 12 (dims 8 t + 32 c ..
//      8 t + 32 c + 7, c = 0..3: 2-way bank conflicts where one 64-byte run per lane gave 4-way);
//      k-step i's k indices (2t, 2t+1 | 2t+8, 2t+9) are dims 8 t + 32 (i / 2) + 4 (i % 2) +
//      (0, 1 | 2, 3). Q' is built in the same order, so the dot product over all 128 dims is the
//      same sum, permuted.
//   V: lane reads rows t, t + 4, t + 8, t + 12, dims 16 g .. 16 g + 15 (2 x 16 B each); m-tile
//      mt's row g is dim 16 g + 2 mt, row g + 8 dim 16 g + 2 mt + 1; k indices (2t, 2t+1 |
//      2t+8, 2t+9) are tokens (t, t + 8 | t + 4, t + 12); one byte permute per A register.
//   S^T's accumulator gives lane (g, t) the scores of tokens g and g + 8 for head t, P goes to
//   V through a per-warp 8 x 8 word transpose in shared memory (as the INT4 kernel).
// Rows past the context (the last chunk) may hold anything, even NaN: their scores become -inf
// and their V registers zero.
//
// Softmax reference: as the INT4 kernel with V scale 1. p = 2^(score - mT) against a running
// reference mT that moves only when some p of a chunk would pass 2^15 (f16 range with margin),
// then to the head's chunk max - 13 with an exact rescale; the partial results store mT as the
// max, (acc, l) relative to it, and the split reduce merges them unchanged.
//
// Memory: per warp a ring of S stages of one chunk [K 4096 B][V 4096 B], filled S - 1 chunks
// ahead by two bulk copies (TMA engine) that lane 0 issues, completing on one mbarrier per stage.
// With `evictFirst` (the launcher: when the KV exceeds L2) the copies carry an L2 evict-first
// policy: the KV bytes are read once, and the table, q and partial results then stay in L2 between
// launches (H100 32k: -1 us).
// Block-table entries come 32 chunks at a time, one per lane, a batch ahead (INT4 kernel).
// Chunk ownership: v3's (warpChunks); grid (splits, kvHeads), 4 warps per
// block sharing one kv head (HW false), or (HW true, "head warps") grid (splits), one warp per kv
// head, every warp of a block on the same chunks: the kv heads of a KV block (contiguous in the
// block's K and V sections) are then read by one multiprocessor at about the same time instead of
// by kvHeads blocks that drift apart; each warp writes its own partial results.
#pragma once
#include "paged-attention-mma.cuh"

namespace hil::cuda {

constexpr int kMmaF16StageBytes = 8192;  // FP16 chunk of one kv head at D 128: K 4 KB, V 4 KB

template <int S, bool HW = false>
struct MmaF16Cfg {
  static constexpr int kWarps = HW ? kMmaHeadWarps : kMmaWarps;  // the most warps of a block
  // dynamic shared memory of a block of `warps` warps
  static constexpr int smemBytes(int warps) { return warps * S * kMmaF16StageBytes; }
  static constexpr int kSmemBytes = kWarps * S * kMmaF16StageBytes;
  static constexpr int kMinBlocks = HW ? 1 : S <= 2 ? 3 : S <= 3 ? 2 : 1;  // blocks per SM the shared memory allows
};

// HW false: grid (splits, kvHeads), block kMmaWarps * 32, dynamic shared memory
// MmaF16Cfg<S>::kSmemBytes. HW true: grid (splits), block kvHeads * 32 (kvHeads <= kMmaHeadWarps),
// dynamic shared memory MmaF16Cfg<S, true>::smemBytes(kvHeads).
// Every block-table entry must be FP16 (the caller's promise, AttentionArgs::uniformPrecision):
// any other entry, like a bad one, makes the output NaN; nothing outside the arena is read.
template <int S, bool HW>
__global__ void __launch_bounds__(MmaF16Cfg<S, HW>::kWarps * 32, MmaF16Cfg<S, HW>::kMinBlocks) pagedAttentionMmaFp16(
    AttentionShape s, int gq, const uint8_t* __restrict__ arena, size_t arenaBytes,
    const BlockEntry* __restrict__ table, const float* __restrict__ q,
    float* __restrict__ partAcc, float* __restrict__ partMl, float* __restrict__ out, int early, bool evictFirst) {
  static_assert(S >= 2 && S <= 32, "stages: one bit each in okMask");
  constexpr int D = kMmaD;
  constexpr int W = kMmaWarps;
  constexpr int WM = MmaF16Cfg<S, HW>::kWarps;
  constexpr int SB = kMmaF16StageBytes;
  constexpr int RB = D * 2;  // bytes of one FP16 row
  extern __shared__ __align__(16) uint8_t smem[];
  __shared__ __align__(16) uint32_t sP[WM][8 * kMmaPStride];  // P^T in f16 pairs (token t, t + 8)

  // the warp index in a uniform register (see the INT4 kernel): the copies take uniform operands
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
  const size_t vOff = vOffset(geo, kFp16);
  const size_t bb = blockBytes(geo, kFp16);
  const bool anyFits = arenaBytes >= bb;
  const uint64_t lastOffset = anyFits ? arenaBytes - bb : 0;
  // an entry as its block's offset, or 1 (offsets are 16-aligned) when unusable
  auto checkedEntry = [&](int block) -> uint64_t { return usableOffset(table[block], kFp16, anyFits, lastOffset); };

  const WarpChunks wc = HW ? warpChunks(s.contextTokens, split, gridDim.x, 0, 1) : warpChunks(s.contextTokens, split, gridDim.x, warp, W);
  const int first = wc.first, step = wc.step, n = wc.n;
  const int stepSub = step % cpb;
  int sub = first % cpb;
  auto loadEnt = [&](int kk) -> uint64_t { return kk < n ? checkedEntry((first + kk * step) / cpb) : 1; };
  uint64_t entCur = loadEnt(lane), entNxt = loadEnt(32 + lane);

  const uint32_t headRow = static_cast<uint32_t>(h * s.blockTokens);
  unsigned okMask = 0, fillMask = 0, lastMask = 0;
  bool bad = false;
  __shared__ __align__(8) uint64_t sBar[WM][S];
  const uint32_t bar0 = static_cast<uint32_t>(__cvta_generic_to_shared(&sBar[warp][0]));
  initStageBarriers<S>(bar0, lane);
  const uint64_t pol = evictFirst ? l2EvictFirstPolicy() : 0;
  // Fills stage `slot` with the warp's k-th chunk, if any.
  auto issue = [&](int k, int slot) {
    const unsigned bit = 1u << slot;
    const bool has = k < n;
    uint64_t offset = 1;
    uint32_t row = 0;
    if (has) {
      offset = fromLane(entCur, k & 31, lane);
      if ((k & 31) == 31) {
        entCur = entNxt;
        entNxt = loadEnt(k + 33 + lane);
      }
      row = headRow + static_cast<uint32_t>(sub * kChunkTokens);
      sub += stepSub;
      if (sub >= cpb) sub -= cpb;
    }
    fillMask = has ? fillMask | bit : fillMask & ~bit;
    lastMask = has && first + k * step == totalChunks - 1 ? lastMask | bit : lastMask & ~bit;
    if (has) {
      const bool ok = (offset & 1u) == 0;
      okMask = ok ? okMask | bit : okMask & ~bit;
      if (!ok) bad = true;
      if (lane == 0) {
        const uint32_t bar = bar0 + 8 * slot;
        if (ok) {
          // no proxy fence: the stage's last reads are ordered by the __syncwarp that ends its chunk
          const uint8_t* kc = arena + offset + static_cast<size_t>(row) * RB;
          mbarArriveExpectTx(bar, SB);
          if (evictFirst) {  // the KV stream leaves L2 first: the table, q and partials stay
            bulkCopyHint(ringS + slot * SB, kc, 4096, bar, pol);
            bulkCopyHint(ringS + slot * SB + 4096, kc + vOff, 4096, bar, pol);
          } else {
            bulkCopy(ringS + slot * SB, kc, 4096, bar);
            bulkCopy(ringS + slot * SB + 4096, kc + vOff, 4096, bar);
          }
        } else {
          mbarArrive(bar);  // completes the phase: the stage is skipped
        }
      }
    }
  };
  // `early` (1 .. S - 1) chunks before q is prepared, the rest of the ring after
  const int nEarly = max(1, min(early, S - 1));
  for (int k = 0; k < nEarly; ++k) issue(k, k);

  // ---- q' hi / lo as the B operand of S^T = K . Q'^T, built once per kv head ----
  // HW false: warp j takes query head j of the block's kv head; HW true: each warp all of its own.
  __shared__ __align__(16) __half sQ[HW ? WM : 1][2][4][D];  // [warp or 0][hi, lo][query head][dim]
  __shared__ float sQmax[W];
  constexpr int QJ = HW ? 4 : 1;  // query heads this thread loads
  float qx[QJ][4];  // query head (HW: j; else: warp), dims 4 lane .. 4 lane + 3
  const float qabs = loadScaledQ<HW>(qx, q, s.softmaxScale * kLog2e, h, gq, warp, lane, sQmax);
  int ex = 0;
  frexpf(qabs, &ex);  // qabs < 2^ex (ex = 0 for qabs = 0)
  const int e = 14 - ex;  // |q'| < 2^14
  {
    const float f1 = ldexpf(1.0f, max(min(e, 126), -126)), f2 = ldexpf(1.0f, e - max(min(e, 126), -126));
    const int wq = HW ? warp : 0;
#pragma unroll
    for (int jj = 0; jj < QJ; ++jj) {
      const int j = HW ? jj : warp;
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const float x = qx[jj][u] * f1 * f2;
        const __half hi = __float2half_rn(x);
        sQ[wq][0][j][4 * lane + u] = hi;
        sQ[wq][1][j][4 * lane + u] = __float2half_rn(x - __half2float(hi));
      }
    }
  }
  if constexpr (HW) __syncwarp();
  else __syncthreads();
  // B fragment of k-step i: column g = head g / 2, part g % 2; k (2t, 2t+1 | 2t+8, 2t+9) = dims
  // 8 t + 32 (i / 2) + 4 (i % 2) + (0, 1 | 2, 3): two consecutive words
  uint32_t qb[8][2];
  {
    const __half* qrow = &sQ[HW ? warp : 0][g & 1][g >> 1][8 * t4];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint2 v = *reinterpret_cast<const uint2*>(qrow + 32 * (i >> 1) + 4 * (i & 1));
      qb[i][0] = v.x, qb[i][1] = v.y;
    }
  }
  const float qUnit = ldexpf(1.0f, -e);

  // ---- running state of head t4 ----
  float mT = -INFINITY;  // reference of the exponents (log2 domain), uniform over the lanes of the head
  float lS = 0.0f;       // sum of 2^(score - mT), this lane's tokens
  float o[8][4];         // O^T: rows 16 g + 2 mt (+1), columns 2 t4 (hi), 2 t4 + 1 (lo)
#pragma unroll
  for (int mt = 0; mt < 8; ++mt) o[mt][0] = o[mt][1] = o[mt][2] = o[mt][3] = 0.0f;
  uint32_t* sPw = sP[warp];
  const int lastValid = s.contextTokens - (totalChunks - 1) * kChunkTokens;  // rows of the last chunk, 1..16
  const uint32_t kOff = g * RB + t4 * 16;         // rows g (and g + 8), dims 8 t4 + 32 c ..
  const uint32_t vOffL = 4096 + t4 * RB + 32 * g;  // rows t4 (+ 4, 8, 12), dims 16 g ..

#pragma unroll
  for (int k = nEarly; k < S - 1; ++k) issue(k, k);

  int slot = 0;
  unsigned phases = 0;  // bit i = parity of stage i's next phase
  for (int k = 0;; ++k) {
    issue(k + S - 1, slot == 0 ? S - 1 : slot - 1);
    const unsigned bit = 1u << slot;
    if (!(fillMask & bit)) break;  // chunks come in order: no later stage holds one
    mbarWait(bar0 + 8 * slot, (phases >> slot) & 1u);  // chunk k has landed (or was skipped)
    phases ^= bit;
    const uint8_t* st = ring + slot * SB;
    const bool ok = (okMask & bit) != 0;  // uniform over the warp, as every mask
    const bool last = (lastMask & bit) != 0;
    // the chunk's K (rows g, g + 8, four 16-byte pieces each) and V (rows t4, t4 + 4, t4 + 8, t4 + 12,
    // dims 16 g .. 16 g + 15) into registers
    if (ok) {
      uint4 ka[4], kb[4];
      uint32_t vw[4][8];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        ka[c] = *reinterpret_cast<const uint4*>(st + kOff + 64 * c);
        kb[c] = *reinterpret_cast<const uint4*>(st + kOff + 8 * RB + 64 * c);
      }
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const uint4 a = *reinterpret_cast<const uint4*>(st + vOffL + r * 4 * RB);
        const uint4 b = *reinterpret_cast<const uint4*>(st + vOffL + r * 4 * RB + 16);
        vw[r][0] = a.x, vw[r][1] = a.y, vw[r][2] = a.z, vw[r][3] = a.w;
        vw[r][4] = b.x, vw[r][5] = b.y, vw[r][6] = b.z, vw[r][7] = b.w;
      }
      // S^T = K . Q'^T: rows = tokens g, g + 8; columns 2 t4 (hi), 2 t4 + 1 (lo) of head t4
      float sacc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        mma16816(sacc, ka[c].x, kb[c].x, ka[c].y, kb[c].y, qb[2 * c][0], qb[2 * c][1]);
        mma16816(sacc, ka[c].z, kb[c].z, ka[c].w, kb[c].w, qb[2 * c + 1][0], qb[2 * c + 1][1]);
      }
      float sc0 = (sacc[0] + sacc[1]) * qUnit;  // token g
      float sc1 = (sacc[2] + sacc[3]) * qUnit;  // token g + 8
      if (last) {  // rows past the context may hold anything, even NaN
        if (g >= lastValid) sc0 = -INFINITY;
        if (g + 8 >= lastValid) sc1 = -INFINITY;
      }
      float p0 = ex2Ftz(sc0 - mT), p1 = ex2Ftz(sc1 - mT);
      if (__any_sync(kFullMask, fmaxf(p0, p1) > 32768.0f)) {  // the first chunk, then rare
        lS *= moveReference(mT, fmaxf(sc0, sc1), o);
        p0 = ex2Ftz(sc0 - mT), p1 = ex2Ftz(sc1 - mT);
      }
      lS += p0 + p1;
      // p of tokens (g, g + 8) as f16 pairs: hi in column 2 t4, lo = p - hi in column 2 t4 + 1
      const __half2 hi = __floats2half2_rn(p0, p1);
      const float2 fh = __half22float2(hi);
      sPw[(2 * t4) * kMmaPStride + g] = h2bits(hi);
      sPw[(2 * t4 + 1) * kMmaPStride + g] = h2bits(__floats2half2_rn(p0 - fh.x, p1 - fh.y));
      // V rows past the context (the last chunk) may hold anything: zero
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const bool z = last && t4 + 4 * r >= lastValid;
#pragma unroll
        for (int u = 0; u < 8; ++u) vw[r][u] = z ? 0u : vw[r][u];
      }
      __syncwarp();
      const uint32_t b0 = sPw[g * kMmaPStride + t4], b1 = sPw[g * kMmaPStride + t4 + 4];  // column g, pairs t4, t4 + 4
      // O^T += V^T . P^T: A rows g / g + 8 of m-tile mt = dims 16 g + 2 mt / + 1; k = tokens
      // (t4, t4 + 8 | t4 + 4, t4 + 12) = rows (0, 2 | 1, 3) of vw
#pragma unroll
      for (int mt = 0; mt < 8; ++mt) {
        const uint32_t a0 = __byte_perm(vw[0][mt], vw[2][mt], 0x5410);  // even dim, tokens t4, t4 + 8
        const uint32_t a1 = __byte_perm(vw[0][mt], vw[2][mt], 0x7632);  // odd dim
        const uint32_t a2 = __byte_perm(vw[1][mt], vw[3][mt], 0x5410);  // even dim, tokens t4 + 4, t4 + 12
        const uint32_t a3 = __byte_perm(vw[1][mt], vw[3][mt], 0x7632);
        float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // this chunk alone (Accumulation in paged-attention-mma.cuh)
        mma16816(c, a0, a1, a2, a3, b0, b1);
        o[mt][0] += c[0], o[mt][1] += c[1], o[mt][2] += c[2], o[mt][3] += c[3];
      }
    }
    __syncwarp();  // every lane is done with this stage (and sP) before they are refilled
    slot = slot == S - 1 ? 0 : slot + 1;
  }

  // ---- merge: hi + lo columns, the lanes of a head, then the warps (as v3) ----
#pragma unroll
  for (int o2 = 4; o2 < 32; o2 <<= 1) lS += __shfl_xor_sync(kFullMask, lS, o2);
  if constexpr (HW) {  // the warp holds all of its kv head's share of this split: store it
    if (t4 < gq) storeHeadPartials(o, 0.0f, mT, lS, bad, D, h * gq + t4, split, s.qHeads, g, out, partAcc, partMl);
    return;
  }
  float* sAcc = reinterpret_cast<float*>(smem);  // [W][4][D], reuses the stage ring
  __shared__ float sM[W][4], sL[W][4];  // (HW false)
  __shared__ int sBad;
  if (threadIdx.x == 0) sBad = 0;
  __syncthreads();  // every warp is past its ring
  if (bad) sBad = 1;
  {
    float* a0 = sAcc + (warp * 4 + t4) * D + 16 * g;
#pragma unroll
    for (int mt = 0; mt < 8; ++mt) {
      a0[2 * mt] = o[mt][0] + o[mt][1];
      a0[2 * mt + 1] = o[mt][2] + o[mt][3];
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
