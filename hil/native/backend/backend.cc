#include "backend.h"

namespace hil {

void checkStream(int s) {
  if (s < 0 || s >= kStreamCount) invalidParameter("stream", "0 (compute), 1 (memory) or 2 (memory2)", s);
}

void Backend::copyMany(const std::vector<int>& streams, const std::vector<CopyItem>& items) {
  if (streams.empty()) throw HilError("copyMany: Expected at least one stream");
  for (int s : streams) checkStream(s);
  for (const CopyItem& c : items) {
    at(c.dst, c.bytes, "copy destination");
    at(c.src, c.bytes, "copy source");
  }
  for (size_t i = 0; i < items.size(); ++i) copy(streams[i % streams.size()], items[i].dst, items[i].src, items[i].bytes, 1);
}

uint32_t Backend::alloc(MemKind kind, size_t bytes) {
  if (bytes == 0) invalidParameter("bytes", "a positive size", bytes);
  void* p = rawAlloc(kind, bytes);
  const uint32_t id = nextId_++;
  regions_[id] = Region{p, bytes, kind};
  return id;
}

void Backend::free(uint32_t id) {
  auto it = regions_.find(id);
  if (it == regions_.end()) throw HilError("free: unknown region " + std::to_string(id));
  synchronize(-1);
  rawFree(it->second.kind, it->second.ptr);
  regions_.erase(it);
}

const Region& Backend::region(uint32_t id) const {
  auto it = regions_.find(id);
  if (it == regions_.end()) throw HilError("unknown region " + std::to_string(id));
  return it->second;
}

char* Backend::at(RegionSpan s, size_t len, const char* what) const {
  const Region& r = region(s.region);
  if (s.offset > r.bytes || len > r.bytes - s.offset) {
    throw HilError(std::string(what) + ": bytes [" + std::to_string(s.offset) + ", " +
                   std::to_string(s.offset + len) + ") outside region " + std::to_string(s.region) +
                   " of " + std::to_string(r.bytes) + " bytes");
  }
  return static_cast<char*>(r.ptr) + s.offset;
}

void Backend::releaseAll() {
  for (auto& [id, r] : regions_) rawFree(r.kind, r.ptr);
  regions_.clear();
}

const char* memKindName(MemKind k) {
  return k == MemKind::Device ? "device" : k == MemKind::Pinned ? "pinned" : "pageable";
}

MemKind parseMemKind(const std::string& s) {
  if (s == "device") return MemKind::Device;
  if (s == "pinned") return MemKind::Pinned;
  if (s == "pageable") return MemKind::Pageable;
  throw HilError("Expected 'device', 'pinned' or 'pageable' for memory kind but received '" + s + "'");
}

}  // namespace hil
