// Shape rules shared by both backends, so an argument that one refuses the other refuses too.
#pragma once
#include <cstddef>
#include <string>
#include "../backend/error.h"
#include "../common/attention-shape.h"

namespace hil {

inline void checkQuantShape(size_t n, int bits, int groupSize) {
  if (bits != 2 && bits != 3 && bits != 4 && bits != 8) invalidParameter("bits", "2, 3, 4 or 8", bits);
  if (groupSize < 8 || groupSize % 8 != 0) invalidParameter("groupSize", "a positive multiple of 8", groupSize);
  if (n == 0 || n % groupSize != 0) invalidParameter("n", "a positive multiple of groupSize", n);
}
inline size_t quantCodesBytes(size_t n, int bits) { return n * bits / 8; }
inline size_t quantMetaBytes(size_t n, int groupSize) { return n / groupSize * 4; }

inline void checkHadamardShape(size_t rows, int n) {
  if (n < 2 || n > 4096 || (n & (n - 1)) != 0) invalidParameter("n", "a power of two in [2, 4096]", n);
  if (rows == 0) invalidParameter("rows", "a positive count", rows);
}

inline void checkAttentionShape(const AttentionShape& s) {
  if (s.kvHeads < 1) invalidParameter("kvHeads", "a positive count", s.kvHeads);
  if (s.qHeads < s.kvHeads || s.qHeads % s.kvHeads != 0 || s.qHeads / s.kvHeads > 8)
    invalidParameter("qHeads", "a multiple of kvHeads, at most 8 per kv head", s.qHeads);
  if (s.headDim != 64 && s.headDim != 128 && s.headDim != 256) invalidParameter("headDim", "64, 128 or 256", s.headDim);
  if (s.blockTokens < 16 || s.blockTokens % 16 != 0) invalidParameter("blockTokens", "a positive multiple of 16", s.blockTokens);
  if (s.groupSize < 8 || s.groupSize % 8 != 0 || s.headDim % s.groupSize != 0)
    invalidParameter("groupSize", "a multiple of 8 dividing headDim", s.groupSize);
  if (s.contextTokens < 1) invalidParameter("contextTokens", "a positive count", s.contextTokens);
  if (!(s.softmaxScale > 0.0f)) invalidParameter("softmaxScale", "a positive number", s.softmaxScale);
  if (s.splits < 0) invalidParameter("splits", "0 (choose) or a positive count", s.splits);
}

// Validates a block table that the host can read.
inline void checkBlockTable(const AttentionShape& s, const BlockEntry* table, size_t arenaBytes) {
  const BlockGeometry g = geometryOf(s);
  for (int i = 0; i < numBlocks(s); ++i) {
    const BlockEntry& e = table[i];
    if (!validPrecision(e.precision))
      throw HilError("block table entry " + std::to_string(i) + ": precision " + std::to_string(e.precision) + " is not 0..4");
    if (e.offset % 16 != 0) throw HilError("block table entry " + std::to_string(i) + ": offset not 16-byte aligned");
    if (e.offset > arenaBytes || blockBytes(g, e.precision) > arenaBytes - e.offset)
      throw HilError("block table entry " + std::to_string(i) + ": block outside the arena");
  }
}

// A uniform-precision promise (AttentionArgs::uniformPrecision) on a table the host can read.
inline void checkUniformPrecision(const AttentionShape& s, const BlockEntry* table, int uniformPrecision) {
  if (uniformPrecision < 0) return;
  if (!validPrecision(uniformPrecision)) invalidParameter("uniformPrecision", "a precision 0..4 or -1", uniformPrecision);
  for (int i = 0; i < numBlocks(s); ++i) {
    if (table[i].precision != uniformPrecision)
      throw HilError("block table entry " + std::to_string(i) + ": precision " + std::to_string(table[i].precision) +
                     " breaks the uniformPrecision promise (" + std::to_string(uniformPrecision) + ")");
  }
}

inline void checkGemvShape(size_t rows, size_t cols) {
  if (rows == 0) invalidParameter("rows", "a positive count", rows);
  if (cols == 0 || cols % 8 != 0) invalidParameter("cols", "a positive multiple of 8", cols);
}

}  // namespace hil
