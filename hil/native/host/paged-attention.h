// Paged mixed-precision decode attention on the CPU: out[hq] = softmax(q[hq]·K^T · scale)·V
// over the blocks listed in the table, each read at its own precision (common/kv-format.h).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>
#include "../common/attention-shape.h"
#include "../common/half-bits.h"
#include "half-row.h"
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

// Elements [e, e + n) of the K or V section of one block as FP32, the values blockElement gives:
// an FP16 row converted at once; a quantized row with each group's (scale, zero) converted once.
inline void blockRow(const uint8_t* block, const BlockGeometry& g, int precision, bool isV, size_t e, int n,
                     float* out) {
  if (precision == kFp16) {
    const uint16_t* base = reinterpret_cast<const uint16_t*>(block + (isV ? vOffset(g, kFp16) : 0));
    halfRowToFloat(base + e, out, static_cast<size_t>(n));
    return;
  }
  const uint8_t* codes = block + (isV ? vOffset(g, precision) : 0);
  const uint16_t* meta =
      reinterpret_cast<const uint16_t*>(block + (isV ? vMetaOffset(g, precision) : kMetaOffset(g, precision)));
  const int bits = precisionBits(precision);
  size_t group = static_cast<size_t>(-1);
  float zero = 0, scale = 0;
  for (int d = 0; d < n; ++d) {
    const size_t i = e + d;
    if (i / g.groupSize != group) {
      group = i / g.groupSize;
      zero = halfToFloat(meta[2 * group + 1]);
      scale = halfToFloat(meta[2 * group]);
    }
    out[d] = zero + static_cast<float>(codeAt(codes, i, bits)) * scale;
  }
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
  std::vector<double> dots(group);
  for (int h = h0; h < h1; ++h) {
    const float* qg = q + static_cast<size_t>(h) * group * D;
    for (int t = 0; t < L; ++t) {
      const BlockEntry& b = table[t / s.blockTokens];
      const uint8_t* block = arena + b.offset;
      const size_t row = (static_cast<size_t>(h) * s.blockTokens + t % s.blockTokens) * D;
      blockRow(block, g, b.precision, false, row, D, k.data());
      // the group's dot products side by side (independent chains); each sums d = 0..D-1 in order
      std::fill(dots.begin(), dots.end(), 0.0);
      for (int d = 0; d < D; ++d) {
        const double kd = k[d];
        for (int j = 0; j < group; ++j) dots[j] += static_cast<double>(qg[static_cast<size_t>(j) * D + d]) * kd;
      }
      for (int j = 0; j < group; ++j) scores[static_cast<size_t>(j) * L + t] = dots[j] * s.softmaxScale;
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
      blockRow(block, g, b.precision, true, row, D, v.data());
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
