// The cuda backend: device tier = cudaMalloc, pinned = cudaMallocHost, pageable = malloc;
// a compute stream (highest priority) and two memory streams (lowest = normal priority);
// CUDA events time everything; kernels come through the launcher layer.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>
#include "../launch/check-shapes.h"
#include "../launch/cuda-check.h"
#include "../launch/launch.h"
#include "backend.h"

namespace hil {
namespace {

std::string sysfsRead(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

// PCIe link from sysfs (best effort): "32.0 GT/s PCIe" -> generation 5.
void pciLink(const cudaDeviceProp& p, DeviceInfo& d) {
  char bus[32];
  std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  const std::string base = std::string("/sys/bus/pci/devices/") + bus + "/";
  const double gts = std::atof(sysfsRead(base + "max_link_speed").c_str());
  d.pciGeneration = gts >= 60 ? 6 : gts >= 30 ? 5 : gts >= 15 ? 4 : gts >= 7 ? 3 : gts >= 4 ? 2 : gts > 0 ? 1 : 0;
  d.pciWidth = std::atoi(sysfsRead(base + "current_link_width").c_str());
}

DeviceInfo describe(int device) {
  cudaDeviceProp p;
  HIL_CUDA(cudaGetDeviceProperties(&p, device));
  DeviceInfo d;
  d.name = p.name;
  d.ccMajor = p.major;
  d.ccMinor = p.minor;
  d.totalMemBytes = p.totalGlobalMem;
  d.multiprocessors = p.multiProcessorCount;
  d.l2Bytes = static_cast<size_t>(p.l2CacheSize);
  d.sharedMemPerSmBytes = static_cast<int>(p.sharedMemPerMultiprocessor);
  d.reservedSharedMemPerBlockBytes = static_cast<int>(p.reservedSharedMemPerBlock);
  pciLink(p, d);
  cudaRuntimeGetVersion(&d.runtimeVersion);
  cudaDriverGetVersion(&d.driverVersion);
  return d;
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device) : device_(device) {
    HIL_CUDA(cudaSetDevice(device));
    info_ = describe(device);
    int least = 0, greatest = 0;
    HIL_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    HIL_CUDA(cudaStreamCreateWithPriority(&streams_[kCompute], cudaStreamNonBlocking, greatest));
    HIL_CUDA(cudaStreamCreateWithPriority(&streams_[kMemory], cudaStreamNonBlocking, least));
    HIL_CUDA(cudaStreamCreateWithPriority(&streams_[kMemory2], cudaStreamNonBlocking, least));
    info_.computePriority = greatest;
    info_.memoryPriority = least;
  }
  ~CudaBackend() override {
    cudaSetDevice(device_);
    for (auto s : streams_) cudaStreamSynchronize(s);
    releaseAll();
    for (auto& sc : scratch_) if (sc.ptr) cudaFree(sc.ptr);
    for (auto& [id, ev] : events_) cudaEventDestroy(ev);
    for (auto s : streams_) cudaStreamDestroy(s);
  }
  const char* name() const override { return "cuda"; }
  DeviceInfo info() const override { return info_; }

  void write(RegionSpan dst, const void* src, size_t n) override {
    char* p = at(dst, n, "write");
    synchronize(-1);
    if (region(dst.region).kind == MemKind::Device) HIL_CUDA(cudaMemcpy(p, src, n, cudaMemcpyHostToDevice));
    else std::memcpy(p, src, n);
  }
  void read(RegionSpan src, void* dst, size_t n) override {
    const char* p = at(src, n, "read");
    synchronize(-1);
    if (region(src.region).kind == MemKind::Device) HIL_CUDA(cudaMemcpy(dst, p, n, cudaMemcpyDeviceToHost));
    else std::memcpy(dst, p, n);
  }

  void copy(int stream, RegionSpan dst, RegionSpan src, size_t n, int repeat) override {
    char* d = at(dst, n, "copy destination");
    const char* s = at(src, n, "copy source");
    for (int i = 0; i < repeat; ++i) HIL_CUDA(cudaMemcpyAsync(d, s, n, cudaMemcpyDefault, streamOf(stream)));
  }

  // One cudaMemcpyBatchAsync for all items (source read in stream order, no location hints).
  void copyBatch(int stream, const std::vector<CopyItem>& items) override {
    cudaStream_t st = streamOf(stream);
    if (items.empty()) return;
    std::vector<void*> dsts;
    std::vector<const void*> srcs;
    std::vector<size_t> sizes;
    for (const CopyItem& c : items) {
      dsts.push_back(at(c.dst, c.bytes, "copy destination"));
      srcs.push_back(at(c.src, c.bytes, "copy source"));
      sizes.push_back(c.bytes);
    }
#if CUDART_VERSION >= 12080
    cudaMemcpyAttributes attr{};
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t attrIdx = 0;
#if CUDART_VERSION >= 13000
    HIL_CUDA(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), items.size(), &attr, &attrIdx, 1, st));
#else
    size_t failIdx = 0;
    HIL_CUDA(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), items.size(), &attr, &attrIdx, 1, &failIdx, st));
#endif
#else
    (void)st;
    throw HilError("copyBatch needs cudaMemcpyBatchAsync (CUDA runtime >= 12.8); the addon was built with " + std::to_string(CUDART_VERSION));
#endif
  }

  void quantize(int stream, const QuantizeArgs& a) override {
    checkQuantShape(a.n, a.bits, a.groupSize);
    auto src = reinterpret_cast<const uint16_t*>(deviceAt(a.src, a.n * 2, "quantize source"));
    auto codes = reinterpret_cast<uint8_t*>(deviceAt(a.codes, quantCodesBytes(a.n, a.bits), "quantize codes"));
    auto meta = reinterpret_cast<uint16_t*>(deviceAt(a.meta, quantMetaBytes(a.n, a.groupSize), "quantize meta"));
    launch::quantize(streamOf(stream), src, a.n, a.bits, a.groupSize, codes, meta);
  }
  void dequantize(int stream, const DequantizeArgs& a) override {
    checkQuantShape(a.n, a.bits, a.groupSize);
    auto codes = reinterpret_cast<const uint8_t*>(deviceAt(a.codes, quantCodesBytes(a.n, a.bits), "dequantize codes"));
    auto meta = reinterpret_cast<const uint16_t*>(deviceAt(a.meta, quantMetaBytes(a.n, a.groupSize), "dequantize meta"));
    auto dst = reinterpret_cast<uint16_t*>(deviceAt(a.dst, a.n * 2, "dequantize destination"));
    launch::dequantize(streamOf(stream), codes, meta, a.n, a.bits, a.groupSize, dst);
  }
  void hadamard(int stream, const HadamardArgs& a) override {
    checkHadamardShape(a.rows, a.n);
    char* p = deviceAt(a.data, a.rows * a.n * (a.f16 ? 2 : 4), "hadamard data");
    launch::hadamard(streamOf(stream), p, a.rows, a.n, a.f16);
  }
  void attention(int stream, const AttentionArgs& a, int repeat) override {
    const AttentionShape& s = a.shape;
    checkAttentionShape(s);
    const auto arena = reinterpret_cast<const uint8_t*>(deviceAt(a.arena, a.arenaBytes, "attention arena"));
    const size_t tableBytes = static_cast<size_t>(numBlocks(s)) * sizeof(BlockEntry);
    const auto table = reinterpret_cast<const BlockEntry*>(deviceAt(a.table, tableBytes, "attention block table"));
    if (region(a.table.region).kind == MemKind::Pinned) {
      checkBlockTable(s, table, a.arenaBytes);
      checkUniformPrecision(s, table, a.uniformPrecision);
    }
    const size_t qBytes = static_cast<size_t>(s.qHeads) * s.headDim * 4;
    const auto q = reinterpret_cast<const float*>(deviceAt(a.q, qBytes, "attention q"));
    const auto out = reinterpret_cast<float*>(deviceAt(a.out, qBytes, "attention out"));
    const AttentionPlan plan = planOf(s, a.uniformPrecision);
    float* scratch = scratchFor(stream, launch::attentionScratchFloats(s, plan.splits));
    for (int r = 0; r < repeat; ++r) launch::attention(streamOf(stream), plan, s, arena, a.arenaBytes, table, q, out, scratch);
  }
  AttentionPlan attentionPlan(const AttentionShape& s, int uniformPrecision) override {
    checkAttentionShape(s);
    HIL_CUDA(cudaSetDevice(device_));  // may be asked on any thread
    return planOf(s, uniformPrecision);
  }
  // The plan on the calling thread's current device (the constructor set it on the JS thread).
  AttentionPlan planOf(const AttentionShape& s, int uniformPrecision) const {
    DeviceFacts d;
    d.multiprocessors = info_.multiprocessors;
    d.l2Bytes = static_cast<double>(info_.l2Bytes);
    d.sharedMemPerSmBytes = info_.sharedMemPerSmBytes;
    d.reservedSharedMemPerBlockBytes = info_.reservedSharedMemPerBlockBytes;
    return launch::attentionPlan(s, uniformPrecision, attentionOptions(), d);
  }
  void gemv(int stream, const GemvArgs& a, int repeat) override {
    checkGemvShape(a.rows, a.cols);
    auto w = reinterpret_cast<const uint16_t*>(deviceAt(a.w, a.rows * a.cols * 2, "gemv weights"));
    auto x = reinterpret_cast<const float*>(deviceAt(a.x, a.cols * 4, "gemv x"));
    auto y = reinterpret_cast<float*>(deviceAt(a.y, a.rows * 4, "gemv y"));
    for (int r = 0; r < repeat; ++r) launch::gemv(streamOf(stream), w, x, y, a.rows, a.cols);
  }

  uint32_t createEvent() override {
    cudaEvent_t ev;
    HIL_CUDA(cudaEventCreate(&ev));
    const uint32_t id = nextEvent_++;
    events_[id] = ev;
    return id;
  }
  void destroyEvent(uint32_t id) override {
    HIL_CUDA(cudaEventDestroy(event(id)));
    events_.erase(id);
  }
  void record(int stream, uint32_t id) override { HIL_CUDA(cudaEventRecord(event(id), streamOf(stream))); }
  void waitEvent(int stream, uint32_t id) override { HIL_CUDA(cudaStreamWaitEvent(streamOf(stream), event(id), 0)); }
  double elapsedMs(uint32_t from, uint32_t to) override {
    float ms = 0;
    HIL_CUDA(cudaEventElapsedTime(&ms, event(from), event(to)));
    return ms;
  }
  void synchronize(int stream) override {
    HIL_CUDA(cudaSetDevice(device_));  // may run on a worker thread
    if (stream == -1) {
      HIL_CUDA(cudaStreamSynchronize(streams_[kCompute]));
      HIL_CUDA(cudaStreamSynchronize(streams_[kMemory]));
      HIL_CUDA(cudaStreamSynchronize(streams_[kMemory2]));
    } else {
      HIL_CUDA(cudaStreamSynchronize(streamOf(stream)));
    }
  }

 protected:
  void* rawAlloc(MemKind kind, size_t bytes) override {
    void* p = nullptr;
    if (kind == MemKind::Device) HIL_CUDA(cudaMalloc(&p, bytes));
    else if (kind == MemKind::Pinned) HIL_CUDA(cudaMallocHost(&p, bytes));
    else {
      p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
      if (!p) throw HilError("aligned_alloc of " + std::to_string(bytes) + " bytes failed");
    }
    return p;
  }
  void rawFree(MemKind kind, void* p) override {
    if (kind == MemKind::Device) cudaFree(p);
    else if (kind == MemKind::Pinned) cudaFreeHost(p);
    else std::free(p);
  }

 private:
  cudaStream_t streamOf(int s) const {
    checkStream(s);
    return streams_[s];
  }
  cudaEvent_t event(uint32_t id) const {
    auto it = events_.find(id);
    if (it == events_.end()) throw HilError("unknown event " + std::to_string(id));
    return it->second;
  }
  // Kernels read device memory or pinned (mapped) host memory, never pageable memory.
  char* deviceAt(RegionSpan s, size_t len, const char* what) const {
    if (region(s.region).kind == MemKind::Pageable)
      throw HilError(std::string(what) + ": a kernel cannot read pageable memory; use a device or pinned region");
    return at(s, len, what);
  }
  float* scratchFor(int stream, size_t floats) {
    Scratch& sc = scratch_[stream];
    if (sc.floats < floats) {
      HIL_CUDA(cudaStreamSynchronize(streamOf(stream)));
      if (sc.ptr) HIL_CUDA(cudaFree(sc.ptr));
      sc.ptr = nullptr;
      HIL_CUDA(cudaMalloc(&sc.ptr, floats * sizeof(float)));
      sc.floats = floats;
    }
    return sc.ptr;
  }
  struct Scratch {
    float* ptr = nullptr;
    size_t floats = 0;
  };
  int device_;
  DeviceInfo info_;
  cudaStream_t streams_[kStreamCount] = {nullptr, nullptr, nullptr};
  Scratch scratch_[kStreamCount];
  std::map<uint32_t, cudaEvent_t> events_;
  uint32_t nextEvent_ = 1;
};

}  // namespace

CudaProbe probeCuda() {
  CudaProbe p;
  p.compiled = true;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    p.reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
    return p;
  }
  if (count == 0) {
    p.reason = "no CUDA device is visible";
    return p;
  }
  try {
    p.info = describe(0);
  } catch (const HilError& e) {
    p.reason = e.what();
    return p;
  }
  if (p.info.ccMajor < 9) {
    p.reason = "device " + p.info.name + " has compute capability " + std::to_string(p.info.ccMajor) + "." +
               std::to_string(p.info.ccMinor) + "; the addon is built for sm_90 (Hopper)";
    return p;
  }
  p.available = true;
  return p;
}

std::unique_ptr<Backend> makeCudaBackend(int device) {
  const CudaProbe p = probeCuda();
  if (!p.available) throw HilError("cuda backend unavailable: " + p.reason);
  return std::make_unique<CudaBackend>(device);
}

}  // namespace hil
