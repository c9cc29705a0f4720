#include "log/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace uringmq {

int PreadAll(int fd, uint8_t* buf, size_t len, int64_t off, size_t* got) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd, buf + done, len - done, off + static_cast<int64_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  *got = done;
  return 0;
}

int PwriteFull(int fd, const uint8_t* buf, size_t len, int64_t off) {
  while (len > 0) {
    ssize_t n = pwrite(fd, buf, len, off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;  // no progress and no error: do not spin
    buf += n;
    len -= static_cast<size_t>(n);
    off += n;
  }
  return 0;
}

int FsyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  int rc = 0;
  while (fsync(fd) != 0) {
    if (errno != EINTR) {
      rc = errno;
      break;
    }
  }
  close(fd);
  return rc;
}

std::string SegmentFileName(int64_t base_offset, const char* ext) {
  char name[40];
  std::snprintf(name, sizeof name, "%020lld%s", static_cast<long long>(base_offset), ext);
  return name;
}

const uint8_t* FileScanner::Ensure(int64_t pos, size_t n, int* err) {
  *err = 0;
  if (pos < 0 || pos + static_cast<int64_t>(n) > limit_) return nullptr;
  if (pos >= win_pos_ && pos + static_cast<int64_t>(n) <= win_pos_ + static_cast<int64_t>(win_len_))
    return win_.data() + (pos - win_pos_);
  size_t want = std::max<size_t>(n, 256 * 1024);
  want = std::min<size_t>(want, static_cast<size_t>(limit_ - pos));
  win_.resize(want);
  size_t got = 0;
  int rc = PreadAll(fd_, win_.data(), want, pos, &got);
  if (rc != 0) {
    *err = rc;
    win_len_ = 0;
    return nullptr;
  }
  win_pos_ = pos;
  win_len_ = got;
  if (got < n) {
    *err = EIO;  // file shorter than the size we recorded: someone truncated it
    return nullptr;
  }
  return win_.data();
}

}  // namespace uringmq
