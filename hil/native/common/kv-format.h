// Layout of the paged, mixed-precision KV cache: shared by the CUDA kernels, the host
// kernels and (mirrored) hil/kv-format.ts. Changing anything here changes the format.
//
// A block holds `blockTokens` tokens of one layer, all kv heads, K then V.
// Element order inside the K (and V) section: [kvHead][token][dim].
// FP16 block:   [K: H*T*D halves][V: H*T*D halves]
// INT-b block:  [K codes][V codes][K meta][V meta], each section padded to 16 bytes.
//   codes: b-bit unsigned codes packed little-end-first: element i of a byte-group sits
//          at bits (i % (8/b)) * b. Meta: one (scale, zero) pair of FP16 per group of
//          `groupSize` consecutive elements (groups never straddle a (head, token) row).
//   value = zero + code * scale (FP32 arithmetic).
#pragma once
#include <cstddef>
#include <cstdint>
#include "hd.h"

namespace hil {

enum Precision : int32_t { kFp16 = 0, kInt8 = 1, kInt4 = 2, kInt2 = 3 };

HIL_HD int precisionBits(int p) { return p == kFp16 ? 16 : p == kInt8 ? 8 : p == kInt4 ? 4 : 2; }
HIL_HD bool validPrecision(int p) { return p >= kFp16 && p <= kInt2; }
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
