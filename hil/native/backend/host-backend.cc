// The host backend: every tier is ordinary (page-aligned) host memory, streams are worker
// threads, events are steady_clock stamps, kernels are the CPU versions in host/.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <tuple>
#include <vector>
#include "../host/gemv.h"
#include "../host/hadamard.h"
#include "../host/paged-attention.h"
#include "../host/quantize.h"
#include "../launch/check-shapes.h"
#include "backend.h"
#include "host-stream.h"
#include "io-pool.h"

namespace hil {
namespace {

using Clock = std::chrono::steady_clock;

struct HostEvent {
  std::mutex mu;
  std::condition_variable cv;
  bool recorded = false;  // a record was enqueued
  bool done = false;      // the last enqueued record has run
  Clock::time_point at;
};

class HostBackend final : public Backend {
 public:
  ~HostBackend() override {
    synchronizeQuietly();
    releaseAll();
  }
  const char* name() const override { return "host"; }
  DeviceInfo info() const override {
    DeviceInfo d;
    d.name = "host CPU";
    d.hostThreads = static_cast<int>(std::thread::hardware_concurrency());
    return d;
  }

  void write(RegionSpan dst, const void* src, size_t n) override {
    char* p = at(dst, n, "write");
    synchronize(-1);
    std::memcpy(p, src, n);
  }
  void read(RegionSpan src, void* dst, size_t n) override {
    const char* p = at(src, n, "read");
    synchronize(-1);
    std::memcpy(dst, p, n);
  }

  void copy(int stream, RegionSpan dst, RegionSpan src, size_t n, int repeat) override {
    char* d = at(dst, n, "copy destination");
    const char* s = at(src, n, "copy source");
    streamOf(stream).push([d, s, n, repeat] {
      for (int i = 0; i < repeat; ++i) std::memmove(d, s, n);
    });
  }

  void copyBatch(int stream, const std::vector<CopyItem>& items) override {
    HostStream& st = streamOf(stream);
    std::vector<std::tuple<char*, const char*, size_t>> list;
    list.reserve(items.size());
    for (const CopyItem& c : items) list.emplace_back(at(c.dst, c.bytes, "copy destination"), at(c.src, c.bytes, "copy source"), c.bytes);
    st.push([list = std::move(list)] {
      for (const auto& [d, s, n] : list) std::memmove(d, s, n);
    });
  }

  void quantize(int stream, const QuantizeArgs& a) override {
    checkQuantShape(a.n, a.bits, a.groupSize);
    auto src = reinterpret_cast<const uint16_t*>(at(a.src, a.n * 2, "quantize source"));
    auto codes = reinterpret_cast<uint8_t*>(at(a.codes, quantCodesBytes(a.n, a.bits), "quantize codes"));
    auto meta = reinterpret_cast<uint16_t*>(at(a.meta, quantMetaBytes(a.n, a.groupSize), "quantize meta"));
    streamOf(stream).push([=] { host::quantize(src, a.n, a.bits, a.groupSize, codes, meta); });
  }

  void dequantize(int stream, const DequantizeArgs& a) override {
    checkQuantShape(a.n, a.bits, a.groupSize);
    auto codes = reinterpret_cast<const uint8_t*>(at(a.codes, quantCodesBytes(a.n, a.bits), "dequantize codes"));
    auto meta = reinterpret_cast<const uint16_t*>(at(a.meta, quantMetaBytes(a.n, a.groupSize), "dequantize meta"));
    auto dst = reinterpret_cast<uint16_t*>(at(a.dst, a.n * 2, "dequantize destination"));
    streamOf(stream).push([=] { host::dequantize(codes, meta, a.n, a.bits, a.groupSize, dst); });
  }

  void hadamard(int stream, const HadamardArgs& a) override {
    checkHadamardShape(a.rows, a.n);
    char* p = at(a.data, a.rows * a.n * (a.f16 ? 2 : 4), "hadamard data");
    streamOf(stream).push([=] {
      if (a.f16) host::hadamardF16(reinterpret_cast<uint16_t*>(p), a.rows, a.n);
      else host::hadamardF32(reinterpret_cast<float*>(p), a.rows, a.n);
    });
  }

  void attention(int stream, const AttentionArgs& a, int repeat) override {
    const AttentionShape s = a.shape;
    checkAttentionShape(s);
    const auto arena = reinterpret_cast<const uint8_t*>(at(a.arena, a.arenaBytes, "attention arena"));
    const auto table = reinterpret_cast<const BlockEntry*>(
        at(a.table, static_cast<size_t>(numBlocks(s)) * sizeof(BlockEntry), "attention block table"));
    const size_t qBytes = static_cast<size_t>(s.qHeads) * s.headDim * 4;
    const auto q = reinterpret_cast<const float*>(at(a.q, qBytes, "attention q"));
    const auto out = reinterpret_cast<float*>(at(a.out, qBytes, "attention out"));
    const size_t arenaBytes = a.arenaBytes;
    const int uniform = a.uniformPrecision;
    streamOf(stream).push([=] {
      checkBlockTable(s, table, arenaBytes);  // when it runs: earlier ops may have written the table
      checkUniformPrecision(s, table, uniform);
      for (int r = 0; r < repeat; ++r) runAttention(s, arena, table, q, out);
    });
  }

  AttentionPlan attentionPlan(const AttentionShape& s, int uniformPrecision) override {
    checkAttentionShape(s);
    AttentionPlan p;
    p.kernel = AttentionKernel::Host;
    p.splits = p.gridX = p.gridY = 1;
    p.chunksPerWarp = attentionChunks(s);
    return p;
  }

  void gemv(int stream, const GemvArgs& a, int repeat) override {
    checkGemvShape(a.rows, a.cols);
    auto w = reinterpret_cast<const uint16_t*>(at(a.w, a.rows * a.cols * 2, "gemv weights"));
    auto x = reinterpret_cast<const float*>(at(a.x, a.cols * 4, "gemv x"));
    auto y = reinterpret_cast<float*>(at(a.y, a.rows * 4, "gemv y"));
    streamOf(stream).push([=] {
      for (int r = 0; r < repeat; ++r) runGemv(w, x, y, a.rows, a.cols);
    });
  }

  uint32_t createEvent() override {
    const uint32_t id = nextEvent_++;
    events_[id] = std::make_shared<HostEvent>();
    return id;
  }
  void destroyEvent(uint32_t ev) override { events_.erase(ev); }
  void record(int stream, uint32_t id) override {
    auto ev = event(id);
    {
      std::lock_guard<std::mutex> lock(ev->mu);
      ev->recorded = true;
      ev->done = false;
    }
    streamOf(stream).push([ev] {
      std::lock_guard<std::mutex> lock(ev->mu);
      ev->at = Clock::now();
      ev->done = true;
      ev->cv.notify_all();
    });
  }
  void waitEvent(int stream, uint32_t id) override {
    auto ev = event(id);
    {
      std::lock_guard<std::mutex> lock(ev->mu);
      if (!ev->recorded) return;  // as in CUDA: nothing recorded, nothing to wait for
    }
    streamOf(stream).push([ev] {
      std::unique_lock<std::mutex> lock(ev->mu);
      ev->cv.wait(lock, [&] { return ev->done; });
    });
  }
  double elapsedMs(uint32_t from, uint32_t to) override {
    auto a = event(from), b = event(to);
    std::lock_guard<std::mutex> la(a->mu);
    std::lock_guard<std::mutex> lb(b->mu);
    if (!a->done || !b->done) throw HilError("elapsedMs: event not completed (synchronize first)");
    return std::chrono::duration<double, std::milli>(b->at - a->at).count();
  }
  void synchronize(int stream) override {
    if (stream == -1) {
      std::exception_ptr first;
      for (auto& s : streams_) {
        try {
          s.wait();
        } catch (...) {
          if (!first) first = std::current_exception();
        }
      }
      if (first) std::rethrow_exception(first);
    } else {
      streamOf(stream).wait();
    }
  }

 protected:
  void* rawAlloc(MemKind, size_t bytes) override {
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    void* p = std::aligned_alloc(4096, rounded);
    if (!p) throw HilError("aligned_alloc of " + std::to_string(bytes) + " bytes failed");
    return p;
  }
  void rawFree(MemKind, void* p) override { std::free(p); }

 private:
  HostStream& streamOf(int s) {
    checkStream(s);
    return streams_[s];
  }
  std::shared_ptr<HostEvent> event(uint32_t id) {
    auto it = events_.find(id);
    if (it == events_.end()) throw HilError("unknown event " + std::to_string(id));
    return it->second;
  }
  void synchronizeQuietly() {
    try {
      synchronize(-1);
    } catch (...) {
    }
  }
  // Threads of the kernels: the streams' workers hand a kernel's independent parts (kv heads,
  // row ranges) to this pool and wait for them, as a GPU kernel's blocks run across its SMs.
  static int kernelThreads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

  void runAttention(const AttentionShape& s, const uint8_t* arena, const BlockEntry* table, const float* q,
                    float* out) {
    const long work = static_cast<long>(s.contextTokens) * s.kvHeads;
    const int parts = work < 4096 ? 1 : std::min(pool_.size(), s.kvHeads);
    if (parts == 1) {
      host::pagedAttentionHeads(s, arena, table, q, out, 0, s.kvHeads);
      return;
    }
    pool_.run(static_cast<size_t>(parts), [&](size_t t) {
      const int h0 = s.kvHeads * static_cast<int>(t) / parts, h1 = s.kvHeads * (static_cast<int>(t) + 1) / parts;
      host::pagedAttentionHeads(s, arena, table, q, out, h0, h1);
    });
  }

  // Rows in parts of a multiple of 4 rows (the SIMD path's row group), a few per thread.
  void runGemv(const uint16_t* w, const float* x, float* y, size_t rows, size_t cols) {
    const size_t minRows = std::max<size_t>(4, (size_t{1} << 16) / std::max<size_t>(1, cols));
    const size_t parts = std::min<size_t>(static_cast<size_t>(pool_.size()) * 4, (rows + minRows - 1) / minRows);
    if (parts <= 1) {
      host::gemv(w, x, y, rows, cols);
      return;
    }
    const size_t per = ((rows + parts - 1) / parts + 3) / 4 * 4;
    pool_.run(parts, [&](size_t i) {
      const size_t r0 = std::min(rows, i * per), r1 = std::min(rows, r0 + per);
      host::gemvRows(w, x, y, r0, r1, cols);
    });
  }

  IoPool pool_{kernelThreads()};  // before the streams: they use it until they stop
  HostStream streams_[kStreamCount];
  std::map<uint32_t, std::shared_ptr<HostEvent>> events_;
  uint32_t nextEvent_ = 1;
};

}  // namespace

std::unique_ptr<Backend> makeHostBackend() { return std::make_unique<HostBackend>(); }

}  // namespace hil
