// The NVMe tier: one file opened with O_DIRECT (page cache bypassed), 4096-byte aligned
// requests split into chunks served by a small I/O thread pool. Where the filesystem
// refuses O_DIRECT (tmpfs, some overlays) it falls back to buffered I/O and says so.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include "io-pool.h"

namespace hil {

constexpr size_t kFileAlign = 4096;

struct FileIoResult {
  double ms;
  size_t bytes;
  bool direct;
};

class FileTier {
 public:
  FileTier(const std::string& path, size_t bytes, bool wantDirect, int threads, bool removeOnClose);
  ~FileTier();
  FileIoResult write(const char* src, uint64_t fileOffset, size_t len, size_t chunk, bool sync);
  FileIoResult read(char* dst, uint64_t fileOffset, size_t len, size_t chunk);
  bool direct() const { return direct_; }
  const std::string& bufferedReason() const { return bufferedReason_; }
  size_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }
  int threads() const { return pool_->size(); }

 private:
  void checkRange(const void* buf, uint64_t off, size_t len, size_t chunk) const;
  std::string path_;
  size_t bytes_;
  int fd_ = -1;
  bool direct_ = false;
  bool remove_;
  std::string bufferedReason_;
  std::unique_ptr<IoPool> pool_;
};

}  // namespace hil
