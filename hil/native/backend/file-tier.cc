#include "file-tier.h"
#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include "error.h"

namespace hil {
namespace {

std::string errnoText(const char* call, const std::string& path) {
  return std::string(call) + "(" + path + ") failed: " + std::strerror(errno);
}

// A 4096-byte aligned write then read at offset 0 tells whether direct I/O really works.
bool probeDirect(int fd, std::string& why) {
  void* buf = std::aligned_alloc(kFileAlign, kFileAlign);
  std::memset(buf, 0, kFileAlign);
  bool ok = pwrite(fd, buf, kFileAlign, 0) == static_cast<ssize_t>(kFileAlign) &&
            pread(fd, buf, kFileAlign, 0) == static_cast<ssize_t>(kFileAlign);
  if (!ok) why = std::string("O_DIRECT I/O refused: ") + std::strerror(errno);
  std::free(buf);
  return ok;
}

}  // namespace

FileTier::FileTier(const std::string& path, size_t bytes, bool wantDirect, int threads, bool removeOnClose)
    : path_(path), bytes_(bytes), remove_(removeOnClose) {
  if (bytes == 0 || bytes % kFileAlign != 0) invalidParameter("bytes", "a positive multiple of 4096", bytes);
  if (threads < 1 || threads > 64) invalidParameter("threads", "1 to 64", threads);
  if (wantDirect) {
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_DIRECT, 0644);
    if (fd_ < 0) {
      bufferedReason_ = std::string("open with O_DIRECT refused: ") + std::strerror(errno);
    } else if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
      const std::string e = errnoText("ftruncate", path);
      close(fd_);
      throw HilError(e);
    } else if (!probeDirect(fd_, bufferedReason_)) {
      close(fd_);
      fd_ = -1;
    } else {
      direct_ = true;
    }
  } else {
    bufferedReason_ = "direct I/O not requested";
  }
  if (fd_ < 0) {
    fd_ = open(path.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd_ < 0) throw HilError(errnoText("open", path));
    if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
      const std::string e = errnoText("ftruncate", path);
      close(fd_);
      throw HilError(e);
    }
  }
  posix_fallocate(fd_, 0, static_cast<off_t>(bytes));  // best effort: real blocks, not holes
  pool_ = std::make_unique<IoPool>(threads);
}

FileTier::~FileTier() {
  pool_.reset();
  if (fd_ >= 0) close(fd_);
  if (remove_) unlink(path_.c_str());
}

void FileTier::checkRange(const void* buf, uint64_t off, size_t len, size_t chunk) const {
  if (reinterpret_cast<uintptr_t>(buf) % kFileAlign != 0) throw HilError("file I/O buffer not 4096-byte aligned");
  if (off % kFileAlign != 0) invalidParameter("fileOffset", "a multiple of 4096", off);
  if (len == 0 || len % kFileAlign != 0) invalidParameter("bytes", "a positive multiple of 4096", len);
  if (chunk == 0 || chunk % kFileAlign != 0) invalidParameter("chunkBytes", "a positive multiple of 4096", chunk);
  if (off > bytes_ || len > bytes_ - off) throw HilError("file I/O range outside the file tier");
}

FileIoResult FileTier::write(const char* src, uint64_t off, size_t len, size_t chunk, bool sync) {
  checkRange(src, off, len, chunk);
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n = (len + chunk - 1) / chunk;
  pool_->run(n, [&](size_t i) {
    size_t done = 0;
    const size_t begin = i * chunk, size = std::min(chunk, len - begin);
    while (done < size) {
      const ssize_t w = pwrite(fd_, src + begin + done, size - done, static_cast<off_t>(off + begin + done));
      if (w < 0) {
        if (errno == EINTR) continue;
        throw HilError(errnoText("pwrite", path_));
      }
      done += static_cast<size_t>(w);
    }
  });
  if (sync && fdatasync(fd_) != 0) throw HilError(errnoText("fdatasync", path_));
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return {ms, len, direct_, n};
}

FileIoResult FileTier::read(char* dst, uint64_t off, size_t len, size_t chunk) {
  checkRange(dst, off, len, chunk);
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n = (len + chunk - 1) / chunk;
  pool_->run(n, [&](size_t i) {
    const size_t begin = i * chunk;
    preadAll(dst + begin, off + begin, std::min(chunk, len - begin));
  });
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return {ms, len, direct_, n};
}

FileIoResult FileTier::readBatch(const std::vector<FileSpan>& spans, size_t chunk) {
  struct Piece {
    char* dst;
    uint64_t off;
    size_t len;
  };
  std::vector<Piece> pieces;
  size_t total = 0;
  for (const FileSpan& s : spans) {
    checkRange(s.dst, s.fileOffset, s.bytes, chunk);
    for (size_t d = 0; d < s.bytes; d += chunk) pieces.push_back({s.dst + d, s.fileOffset + d, std::min(chunk, s.bytes - d)});
    total += s.bytes;
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (!pieces.empty()) pool_->run(pieces.size(), [&](size_t i) { preadAll(pieces[i].dst, pieces[i].off, pieces[i].len); });
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return {ms, total, direct_, pieces.size()};
}

void FileTier::preadAll(char* dst, uint64_t off, size_t size) const {
  size_t done = 0;
  while (done < size) {
    const ssize_t r = pread(fd_, dst + done, size - done, static_cast<off_t>(off + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw HilError(errnoText("pread", path_));
    }
    if (r == 0) throw HilError("pread(" + path_ + ") hit end of file");
    done += static_cast<size_t>(r);
  }
}

}  // namespace hil
