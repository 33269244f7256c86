// The backend interface: memory tiers as real allocations, three streams (compute, memory,
// memory2), events and the kernels. Implemented by the host backend (CPU, always) and the
// cuda backend (GPU).
// Region ids name allocations; every op checks its byte ranges against them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include "../common/attention-plan.h"
#include "error.h"

namespace hil {

enum class MemKind { Device, Pinned, Pageable };
enum StreamId : int { kCompute = 0, kMemory = 1, kMemory2 = 2, kStreamCount = 3 };
// Throws a HilError naming the valid stream ids unless 0 <= s < kStreamCount.
void checkStream(int s);

struct Region {
  void* ptr;
  size_t bytes;
  MemKind kind;
};

struct DeviceInfo {
  std::string name;
  int ccMajor = 0, ccMinor = 0;
  size_t totalMemBytes = 0;
  int multiprocessors = 0;
  size_t l2Bytes = 0;
  int pciGeneration = 0;  // 0 = unknown
  int pciWidth = 0;
  int runtimeVersion = 0, driverVersion = 0;
  int computePriority = 0, memoryPriority = 0;  // lower number = higher priority (CUDA)
  int hostThreads = 0;
  int sharedMemPerSmBytes = 0;
  int reservedSharedMemPerBlockBytes = 0;
};

struct RegionSpan {  // a byte range inside a region
  uint32_t region;
  size_t offset;
};

struct QuantizeArgs {
  RegionSpan src, codes, meta;
  size_t n;
  int bits, groupSize;
};
struct DequantizeArgs {
  RegionSpan codes, meta, dst;
  size_t n;
  int bits, groupSize;
};
struct HadamardArgs {
  RegionSpan data;
  size_t rows;
  int n;
  bool f16;
};
struct AttentionArgs {
  AttentionShape shape;
  RegionSpan arena, table, q, out;
  size_t arenaBytes;  // bytes of the arena from arena.offset that blocks may use
  // The caller's promise that every block-table entry has this precision (-1: no promise).
  // Where the backend can read the table (host backend, pinned tables) a broken promise is
  // an error; on a device table the cuda kernels that rely on it output NaN instead.
  int uniformPrecision = -1;
};
struct GemvArgs {
  RegionSpan w, x, y;
  size_t rows, cols;
};
struct CopyItem {
  RegionSpan dst, src;
  size_t bytes;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual DeviceInfo info() const = 0;

  uint32_t alloc(MemKind kind, size_t bytes);
  void free(uint32_t id);
  const Region& region(uint32_t id) const;
  // Bounds-checked pointer to [offset, offset + len) of a region.
  char* at(RegionSpan s, size_t len, const char* what) const;

  // Synchronous, for setup and tests: waits for every stream first.
  virtual void write(RegionSpan dst, const void* src, size_t n) = 0;
  virtual void read(RegionSpan src, void* dst, size_t n) = 0;

  // Asynchronous: enqueued on a stream, in order.
  virtual void copy(int stream, RegionSpan dst, RegionSpan src, size_t n, int repeat) = 0;
  // Copy i on streams[i % streams.size()] (one stream: back to back; two: alternating).
  // Every stream and range is checked before anything is enqueued.
  void copyMany(const std::vector<int>& streams, const std::vector<CopyItem>& items);
  // All items as one batch on one stream (cuda: one cudaMemcpyBatchAsync); items must not overlap.
  virtual void copyBatch(int stream, const std::vector<CopyItem>& items) = 0;
  virtual void quantize(int stream, const QuantizeArgs& a) = 0;
  virtual void dequantize(int stream, const DequantizeArgs& a) = 0;
  virtual void hadamard(int stream, const HadamardArgs& a) = 0;
  virtual void attention(int stream, const AttentionArgs& a, int repeat) = 0;
  // The kernel configuration an attention call of this shape runs with under this backend's
  // options (the host backend: its CPU loop, one split).
  virtual AttentionPlan attentionPlan(const AttentionShape& s, int uniformPrecision) = 0;
  // The options of every attention call (common/attention-options.h); checked when set.
  void setAttentionOptions(const AttentionOptions& o) {
    checkAttentionOptions(o);
    attentionOptions_ = o;
  }
  const AttentionOptions& attentionOptions() const { return attentionOptions_; }
  virtual void gemv(int stream, const GemvArgs& a, int repeat) = 0;

  virtual uint32_t createEvent() = 0;
  virtual void destroyEvent(uint32_t ev) = 0;
  virtual void record(int stream, uint32_t ev) = 0;
  virtual void waitEvent(int stream, uint32_t ev) = 0;
  virtual double elapsedMs(uint32_t from, uint32_t to) = 0;  // both must have completed
  virtual void synchronize(int stream) = 0;                  // -1: every stream

 protected:
  virtual void* rawAlloc(MemKind kind, size_t bytes) = 0;
  virtual void rawFree(MemKind kind, void* p) = 0;
  void releaseAll();  // derived destructors call this before tearing down

 private:
  std::map<uint32_t, Region> regions_;
  uint32_t nextId_ = 1;
  AttentionOptions attentionOptions_;
};

const char* memKindName(MemKind k);
MemKind parseMemKind(const std::string& s);

std::unique_ptr<Backend> makeHostBackend();

struct CudaProbe {
  bool compiled = false;   // the addon was built with the cuda backend
  bool available = false;  // a usable device answered
  std::string reason;      // why not, when not
  DeviceInfo info;
};
CudaProbe probeCuda();
std::unique_ptr<Backend> makeCudaBackend(int device);  // throws HilError when unavailable

}  // namespace hil
