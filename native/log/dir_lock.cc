#include "log/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace uringmq {

Status DirLock::Acquire(const std::string& dir, DirLock* out) {
  std::string path = dir + "/.lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return SysError("open lock file", path, -1, errno);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    close(fd);
    if (e == EWOULDBLOCK)
      return Status::Error(Code::kDirLocked, "data directory " + dir +
                                                 " is locked by another broker (another process, or an unclosed Broker "
                                                 "in this one); close it first or use another dir");
    return SysError("flock", path, -1, e);
  }
  // The pid is informational (for a human looking at the dir); the flock is the lock.
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%d\n", static_cast<int>(getpid()));
  if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, static_cast<size_t>(n), 0) < 0) {
    // not fatal: the lock is held either way
  }
  out->Release();
  out->fd_ = fd;
  return Status::Ok();
}

void DirLock::Release() {
  if (fd_ >= 0) {
    flock(fd_, LOCK_UN);
    close(fd_);
    fd_ = -1;
  }
}

}  // namespace uringmq
