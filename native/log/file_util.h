// Small checked wrappers over file syscalls used by the log. Each returns 0 or errno.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uringmq {

int PreadAll(int fd, uint8_t* buf, size_t len, int64_t off, size_t* got);
int PwriteFull(int fd, const uint8_t* buf, size_t len, int64_t off);
int FsyncDir(const std::string& dir);
std::string SegmentFileName(int64_t base_offset, const char* ext);

// Reads a file through a sliding window so a scan over many small batches costs a
// few large preads. Owned by one thread for one scan.
class FileScanner {
 public:
  FileScanner(int fd, int64_t limit) : fd_(fd), limit_(limit) {}
  // Pointer to bytes [pos, pos+n), or null when they pass `limit` (*err = 0) or a
  // read fails (*err = errno). Valid until the next call.
  const uint8_t* Ensure(int64_t pos, size_t n, int* err);
  int64_t limit() const { return limit_; }

 private:
  int fd_;
  int64_t limit_;
  std::vector<uint8_t> win_;
  int64_t win_pos_ = 0;
  size_t win_len_ = 0;
};

}  // namespace uringmq
