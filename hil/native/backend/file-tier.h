// The NVMe tier: one file opened with O_DIRECT (page cache bypassed), 4096-byte aligned
// requests split into chunks served by a small I/O thread pool. Where the filesystem
// refuses O_DIRECT (tmpfs, some overlays) it falls back to buffered I/O and says so.
// readBatch takes many requests at once (a layer's runs): every chunk of every request is
// queued on the pool together, so up to `threads` preads are in flight whatever the caller's
// own thread pool (a promise per request is bounded by libuv's 4 worker threads).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include "io-pool.h"

namespace hil {

constexpr size_t kFileAlign = 4096;

struct FileIoResult {
  double ms;
  size_t bytes;
  bool direct;
  /** pread/pwrite calls issued (chunks) */
  size_t requests = 0;
};

/** one request of a batch: `bytes` from the file at `fileOffset` into `dst` */
struct FileSpan {
  char* dst;
  uint64_t fileOffset;
  size_t bytes;
};

class FileTier {
 public:
  FileTier(const std::string& path, size_t bytes, bool wantDirect, int threads, bool removeOnClose);
  ~FileTier();
  FileIoResult write(const char* src, uint64_t fileOffset, size_t len, size_t chunk, bool sync);
  FileIoResult read(char* dst, uint64_t fileOffset, size_t len, size_t chunk);
  /** all spans at once on the pool, each split at `chunk`; returns when every one has landed */
  FileIoResult readBatch(const std::vector<FileSpan>& spans, size_t chunk);
  bool direct() const { return direct_; }
  const std::string& bufferedReason() const { return bufferedReason_; }
  size_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }
  int threads() const { return pool_->size(); }

 private:
  void checkRange(const void* buf, uint64_t off, size_t len, size_t chunk) const;
  void preadAll(char* dst, uint64_t off, size_t size) const;
  std::string path_;
  size_t bytes_;
  int fd_ = -1;
  bool direct_ = false;
  bool remove_;
  std::string bufferedReason_;
  std::unique_ptr<IoPool> pool_;
};

}  // namespace hil
