// Shape of one paged decode-attention call (one layer, one sequence, batch 1).
#pragma once
#include "kv-format.h"

namespace hil {

struct AttentionShape {
  int qHeads;         // query heads; a multiple of kvHeads (GQA)
  int kvHeads;
  int headDim;
  int blockTokens;
  int groupSize;      // quantization group of the INT blocks
  int contextTokens;  // tokens attended; blocks = ceil(contextTokens / blockTokens)
  float softmaxScale;
  int splits;         // context splits (flash-decoding); 0 = choose
};

HIL_HD int numBlocks(const AttentionShape& s) {
  return (s.contextTokens + s.blockTokens - 1) / s.blockTokens;
}
HIL_HD BlockGeometry geometryOf(const AttentionShape& s) {
  return BlockGeometry{s.kvHeads, s.blockTokens, s.headDim, s.groupSize};
}

}  // namespace hil
