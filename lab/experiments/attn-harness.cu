// Standalone timing harness for the v3 attention launcher (not part of the addon): includes
// launch-attention.cu, builds a Llama-3-8B layer cache (32 q / 8 kv heads, D 128, 16-token
// blocks, G 128) with random data, checks the output against a float64 CPU reference, and times
// 10 trials x 5 back-to-back launches (median), as the addon bench does. Optional per-warp
// globaltimer trace (built with -DHIL_V3_TRACE).
#include "../../hil/native/launch/launch-attention.cu"  // lab/experiments/ -> the launcher (with the patch applied for -DHIL_V3_TRACE)
#include <cstdio>
#include <cmath>
#include <random>
#include <string>
#include <algorithm>

using namespace hil;
static uint16_t f2h(float f) { __half h = __float2half(f); return *reinterpret_cast<uint16_t*>(&h); }
static float h2f(uint16_t b) { __half h; *reinterpret_cast<uint16_t*>(&h) = b; return __half2float(h); }
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void readKernel(const uint4* __restrict__ p, size_t n, float* out) {
  float acc = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride), d = __ldcs(p + i + 3 * stride);
    acc += __uint_as_float(a.x ^ b.y ^ c.z ^ d.w);
  }
  for (; i < n; i += stride) acc += __uint_as_float(p[i].x);
  if (acc == 1.2345f) out[0] = acc;
}

struct Case {
  int L; int prec; bool mixed;
};

int main(int argc, char** argv) {
  int L = argc > 1 ? atoi(argv[1]) : 32768;
  std::string pr = argc > 2 ? argv[2] : "fp16";
  int splitsArg = argc > 3 ? atoi(argv[3]) : 0;
  int check = argc > 4 ? atoi(argv[4]) : 1;
  const char* mode = argc > 5 ? argv[5] : "full";  // full | kernel (no reduce) | read
  AttentionShape s{32, 8, 128, 16, 128, L, 1.0f / std::sqrt(128.0f), splitsArg};
  const BlockGeometry g = geometryOf(s);
  const int blocks = numBlocks(s);
  std::vector<int> precs(blocks);
  const bool mixed = pr == "mixed";
  int fp16Share = 0;
  for (int i = 0; i < blocks; ++i) {
    if (mixed) {
      // share of FP16 blocks at INT8's average bits (as the bench): (8.25 - 4.25) / (16 - 4.25)
      const double share = (8.25 - 4.25) / (16 - 4.25);
      const int recent = (int)std::lround(share * blocks) - 1;
      precs[i] = (i == 0 || i >= blocks - recent) ? kFp16 : kInt4;
    } else precs[i] = pr == "fp16" ? kFp16 : pr == "int8" ? kInt8 : pr == "int4" ? kInt4 : kInt2;
    fp16Share += precs[i] == kFp16;
  }
  std::vector<BlockEntry> table(blocks);
  size_t at = 0;
  for (int i = 0; i < blocks; ++i) { table[i] = BlockEntry{at, precs[i], 0}; at += blockBytes(g, precs[i]); }
  std::vector<uint8_t> arena(at);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> U(-1.f, 1.f);
  // 8 template blocks per precision, replicated (as the bench)
  for (int p = 0; p < 4; ++p) {
    std::vector<std::vector<uint8_t>> tpl(8, std::vector<uint8_t>(blockBytes(g, p)));
    for (auto& t : tpl) {
      if (p == kFp16) { for (size_t e = 0; e < t.size() / 2; ++e) { uint16_t h = f2h(U(rng)); memcpy(&t[e * 2], &h, 2); } }
      else {
        for (size_t e = 0; e < kMetaOffset(g, p); ++e) t[e] = rng() & 0xff;
        const size_t groups = metaBytes(g) / 4;
        for (int sec = 0; sec < 2; ++sec) {
          const size_t base = sec == 0 ? kMetaOffset(g, p) : vMetaOffset(g, p);
          for (size_t q = 0; q < groups; ++q) {
            uint16_t sc = f2h(2.0f / ((1 << precisionBits(p)) - 1) * (0.5f + 0.5f * std::fabs(U(rng)))), z = f2h(-1.0f + 0.1f * U(rng));
            memcpy(&t[base + q * 4], &sc, 2); memcpy(&t[base + q * 4 + 2], &z, 2);
          }
        }
      }
    }
    for (int i = 0; i < blocks; ++i) if (precs[i] == p) memcpy(&arena[table[i].offset], tpl[i % 8].data(), tpl[i % 8].size());
  }
  std::vector<float> qh(s.qHeads * s.headDim);
  for (size_t i = 0; i < qh.size(); ++i) qh[i] = std::sin(i * 0.37f);

  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  uint8_t* dArena; BlockEntry* dTable; float *dQ, *dOut, *dScratch;
  CK(cudaMalloc(&dArena, at)); CK(cudaMemcpy(dArena, arena.data(), at, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&dTable, blocks * sizeof(BlockEntry))); CK(cudaMemcpy(dTable, table.data(), blocks * sizeof(BlockEntry), cudaMemcpyHostToDevice));
  CK(cudaMalloc(&dQ, qh.size() * 4)); CK(cudaMemcpy(dQ, qh.data(), qh.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&dOut, qh.size() * 4));
  int uni = mixed ? -1 : precs[0];
  const int splits = launch::attentionSplits(s, prop.multiProcessorCount, uni);
  CK(cudaMalloc(&dScratch, launch::attentionScratchFloats(s, splits) * 4));
  cudaStream_t st; CK(cudaStreamCreate(&st));
  size_t kvBytes = 0;
  for (int i = 0; i < blocks; ++i) kvBytes += blockBytes(g, precs[i]);
  float* dSink; CK(cudaMalloc(&dSink, 4));
  std::string md = mode;
  auto enqueue = [&]() {
    if (md == "read") {
      readKernel<<<prop.multiProcessorCount * 8, 256, 0, st>>>(reinterpret_cast<const uint4*>(dArena), at / 16, dSink);
    } else if (md == "read264") {
      readKernel<<<264, 128, 0, st>>>(reinterpret_cast<const uint4*>(dArena), at / 16, dSink);
    } else if (md == "kernel") {  // the attention kernel alone, no reduce (output not valid)
      const int cps = (launch::totalChunks(s) + splits - 1) / splits;
      launch::launchV3<128, 4, 3>(st, s, dim3(splits, s.kvHeads), dArena, at, dTable, dQ, cps, dScratch,
                                  dScratch + (size_t)splits * s.qHeads * s.headDim, dOut, nullptr, 0);
    } else {
      launch::attention(st, s, splits, dArena, at, dTable, dQ, dOut, dScratch, uni);
    }
  };
#ifdef HIL_V3_TRACE
  unsigned long long* dTrace = nullptr;
  const size_t traceN = (size_t)splits * s.kvHeads * cuda::kV3Warps * 8;
  CK(cudaMalloc(&dTrace, traceN * 8));
#endif
  // warm-up + correctness
  CK(cudaMemset(dOut, 0xff, qh.size() * 4));
  enqueue(); enqueue();
  CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
  double relErr = -1;
  if (check && md == "full") {
    std::vector<float> out(qh.size());
    CK(cudaMemcpy(out.data(), dOut, out.size() * 4, cudaMemcpyDeviceToHost));
    const int D = s.headDim, gq = s.qHeads / s.kvHeads;
    double num = 0, den = 0;
    std::vector<double> kv(D), vv(D), sc(L);
    std::vector<double> o(D);
    auto elem = [&](int t, int h, int d, bool isV) -> double {
      const BlockEntry& e = table[t / s.blockTokens];
      const uint8_t* b = &arena[e.offset];
      const size_t idx = ((size_t)h * s.blockTokens + t % s.blockTokens) * D + d;
      const int p = e.precision;
      if (p == kFp16) { uint16_t x; memcpy(&x, b + (isV ? vOffset(g, p) : 0) + idx * 2, 2); return h2f(x); }
      const int bits = precisionBits(p), per = 8 / bits;
      const uint8_t byte = b[(isV ? vOffset(g, p) : 0) + idx / per];
      const int code = (byte >> ((idx % per) * bits)) & ((1 << bits) - 1);
      uint16_t sc2, z; const uint8_t* m = b + (isV ? vMetaOffset(g, p) : kMetaOffset(g, p)) + (idx / s.groupSize) * 4;
      memcpy(&sc2, m, 2); memcpy(&z, m + 2, 2);
      return (double)h2f(z) + code * (double)h2f(sc2);
    };
    for (int hq = 0; hq < s.qHeads; hq += 5) {  // a subset of heads
      const int h = hq / gq;
      double mx = -1e300;
      for (int t = 0; t < L; ++t) { double d = 0; for (int k = 0; k < D; ++k) d += qh[hq * D + k] * elem(t, h, k, false); sc[t] = d * s.softmaxScale; mx = std::max(mx, sc[t]); }
      double l = 0; std::fill(o.begin(), o.end(), 0.0);
      for (int t = 0; t < L; ++t) { double p = std::exp(sc[t] - mx); l += p; for (int k = 0; k < D; ++k) o[k] += p * elem(t, h, k, true); }
      for (int k = 0; k < D; ++k) { double r = o[k] / l; num += (out[hq * D + k] - r) * (out[hq * D + k] - r); den += r * r; }
    }
    relErr = std::sqrt(num / den);
  }
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  std::vector<float> per;
  for (int t = 0; t < 10; ++t) {
    CK(cudaEventRecord(e0, st));
    for (int r = 0; r < 5; ++r) enqueue();
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); per.push_back(ms * 1000 / 5);
  }
  CK(cudaGetLastError());
  std::sort(per.begin(), per.end());
  const float med = (per[4] + per[5]) / 2;
  printf("RESULT L=%d %s mode=%s splits=%d us=%.2f (min %.2f max %.2f) GB/s=%.0f relErr=%.2e\n", L, pr.c_str(), mode, splits, med, per[0], per[9], kvBytes / (med * 1e3), relErr);
#ifdef HIL_V3_TRACE
  if (md == "full" || md == "kernel") {
    CK(cudaMemset(dTrace, 0, traceN * 8));
    CK(cudaMemcpyToSymbol(cuda::gV3Trace, &dTrace, sizeof(dTrace)));
    enqueue(); enqueue(); enqueue();  // the trace holds the last launch
    CK(cudaStreamSynchronize(st));
    std::vector<unsigned long long> tr(traceN);
    CK(cudaMemcpy(tr.data(), dTrace, traceN * 8, cudaMemcpyDeviceToHost));
    unsigned long long* nullp = nullptr;
    CK(cudaMemcpyToSymbol(cuda::gV3Trace, &nullp, sizeof(nullp)));
    const size_t nw = traceN / 8;
    unsigned long long t0 = ~0ull;
    for (size_t w = 0; w < nw; ++w) if (tr[w * 8]) t0 = std::min(t0, tr[w * 8]);
    for (int k = 0; k < 5; ++k) {
      std::vector<double> v;
      for (size_t w = 0; w < nw; ++w) if (tr[w * 8 + k]) v.push_back((tr[w * 8 + k] - t0) / 1000.0);
      if (v.empty()) continue;
      std::sort(v.begin(), v.end());
      printf("TRACE L=%d %s point %d: n=%zu min %.2f p10 %.2f p50 %.2f p90 %.2f max %.2f us\n", L, pr.c_str(), k, v.size(), v[0], v[v.size() / 10], v[v.size() / 2], v[v.size() * 9 / 10], v.back());
    }
  }
#endif
  return 0;
}
