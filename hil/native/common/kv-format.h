// Layout of the paged, mixed-precision KV cache: shared by the CUDA kernels, the host
// kernels and (mirrored) hil/kv-format.ts. Changing anything here changes the format.
//
// A block holds `blockTokens` tokens of one layer, all kv heads, K then V.
// Element order inside the K (and V) section: [kvHead][token][dim].
// FP16 block:   [K: H*T*D halves][V: H*T*D halves]
// INT-b block:  [K codes][V codes][K meta][V meta], each section padded to 16 bytes.
//   codes: b-bit unsigned codes as one little-endian bit stream: element i occupies bits
//          [i*b, i*b + b) of the section (bit k of the stream is bit k % 8 of byte k / 8). For
//          b = 8, 4, 2 that is element i of a byte-group at bits (i % (8/b)) * b; for b = 3 every
//          8 elements fill 3 bytes (a 24-bit little-endian word, element j at bits 3j), and a
//          code may straddle two bytes of its word. Meta: one (scale, zero) pair of FP16 per group of
//          `groupSize` consecutive elements (groups never straddle a (head, token) row).
//   value = zero + code * scale (FP32 arithmetic).
#pragma once
#include <cstddef>
#include <cstdint>
#include "hd.h"

namespace hil {

enum Precision : int32_t { kFp16 = 0, kInt8 = 1, kInt4 = 2, kInt2 = 3, kInt3 = 4 };

HIL_HD int precisionBits(int p) {
  return p == kFp16 ? 16 : p == kInt8 ? 8 : p == kInt4 ? 4 : p == kInt3 ? 3 : 2;
}
HIL_HD bool validPrecision(int p) { return p >= kFp16 && p <= kInt3; }
HIL_HD size_t align16(size_t n) { return (n + 15) & ~static_cast<size_t>(15); }

struct BlockGeometry {
  int kvHeads;
  int blockTokens;
  int headDim;
  int groupSize;
};

HIL_HD size_t sectionElems(const BlockGeometry& g) {
  return static_cast<size_t>(g.kvHeads) * g.blockTokens * g.headDim;
}
// Sections hold a multiple of 8 elements (groupSize is a multiple of 8), so b-bit codes fill whole bytes.
HIL_HD size_t codesBytes(const BlockGeometry& g, int p) {
  return sectionElems(g) * precisionBits(p) / 8;
}
HIL_HD size_t metaBytes(const BlockGeometry& g) { return sectionElems(g) / g.groupSize * 4; }
HIL_HD size_t vOffset(const BlockGeometry& g, int p) { return align16(codesBytes(g, p)); }
HIL_HD size_t kMetaOffset(const BlockGeometry& g, int p) { return 2 * align16(codesBytes(g, p)); }
HIL_HD size_t vMetaOffset(const BlockGeometry& g, int p) {
  return kMetaOffset(g, p) + align16(metaBytes(g));
}
HIL_HD size_t blockBytes(const BlockGeometry& g, int p) {
  return p == kFp16 ? 2 * align16(codesBytes(g, p)) : vMetaOffset(g, p) + align16(metaBytes(g));
}

// One entry of the block table: where block i of the sequence lives in the arena.
struct BlockEntry {
  uint64_t offset;    // bytes from the arena base, 16-aligned
  int32_t precision;  // Precision
  int32_t reserved;
};
static_assert(sizeof(BlockEntry) == 16, "BlockEntry is 16 bytes");

}  // namespace hil
