// Paged mixed-precision decode attention on the CPU: out[hq] = softmax(q[hq]·K^T · scale)·V
// over the blocks listed in the table, each read at its own precision (common/kv-format.h).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>
#include "../common/attention-shape.h"
#include "../common/half-bits.h"
#include "quantize.h"

namespace hil::host {

// Reads element e of the K (isV = false) or V section of one block as FP32.
inline float blockElement(const uint8_t* block, const BlockGeometry& g, int precision, bool isV,
                          size_t e) {
  if (precision == kFp16) {
    const uint16_t* base = reinterpret_cast<const uint16_t*>(block + (isV ? vOffset(g, kFp16) : 0));
    return halfToFloat(base[e]);
  }
  const uint8_t* codes = block + (isV ? vOffset(g, precision) : 0);
  const uint16_t* meta =
      reinterpret_cast<const uint16_t*>(block + (isV ? vMetaOffset(g, precision) : kMetaOffset(g, precision)));
  return dequantValue(codes, meta, e, precisionBits(precision), g.groupSize);
}

// q: [qHeads][headDim] FP32; out: [qHeads][headDim] FP32. Heads [h0, h1) of kv heads only.
inline void pagedAttentionHeads(const AttentionShape& s, const uint8_t* arena, const BlockEntry* table,
                                const float* q, float* out, int h0, int h1) {
  const BlockGeometry g = geometryOf(s);
  const int group = s.qHeads / s.kvHeads;
  const int D = s.headDim;
  const int L = s.contextTokens;
  std::vector<float> k(D), v(D);
  std::vector<double> scores(static_cast<size_t>(group) * L);
  std::vector<double> acc(static_cast<size_t>(group) * D);
  for (int h = h0; h < h1; ++h) {
    for (int t = 0; t < L; ++t) {
      const BlockEntry& b = table[t / s.blockTokens];
      const uint8_t* block = arena + b.offset;
      const size_t row = (static_cast<size_t>(h) * s.blockTokens + t % s.blockTokens) * D;
      for (int d = 0; d < D; ++d) k[d] = blockElement(block, g, b.precision, false, row + d);
      for (int j = 0; j < group; ++j) {
        const float* qh = q + static_cast<size_t>(h * group + j) * D;
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += static_cast<double>(qh[d]) * k[d];
        scores[static_cast<size_t>(j) * L + t] = dot * s.softmaxScale;
      }
    }
    for (int j = 0; j < group; ++j) {
      double* sj = scores.data() + static_cast<size_t>(j) * L;
      double mx = -std::numeric_limits<double>::infinity();
      for (int t = 0; t < L; ++t) mx = std::max(mx, sj[t]);
      double sum = 0;
      for (int t = 0; t < L; ++t) {
        sj[t] = std::exp(sj[t] - mx);
        sum += sj[t];
      }
      for (int t = 0; t < L; ++t) sj[t] /= sum;
    }
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int t = 0; t < L; ++t) {
      const BlockEntry& b = table[t / s.blockTokens];
      const uint8_t* block = arena + b.offset;
      const size_t row = (static_cast<size_t>(h) * s.blockTokens + t % s.blockTokens) * D;
      for (int d = 0; d < D; ++d) v[d] = blockElement(block, g, b.precision, true, row + d);
      for (int j = 0; j < group; ++j) {
        const double p = scores[static_cast<size_t>(j) * L + t];
        double* a = acc.data() + static_cast<size_t>(j) * D;
        for (int d = 0; d < D; ++d) a[d] += p * v[d];
      }
    }
    for (int j = 0; j < group; ++j) {
      float* o = out + static_cast<size_t>(h * group + j) * D;
      for (int d = 0; d < D; ++d) o[d] = static_cast<float>(acc[static_cast<size_t>(j) * D + d]);
    }
  }
}

}  // namespace hil::host
