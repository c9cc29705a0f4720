// An exclusive flock on <dir>/.lock held for the life of a Broker, so a second
// process (or a second Broker in this one) cannot open the same data directory.
// Owned by the JS thread that opened the broker.
#pragma once

#include <string>

#include "common/status.h"

namespace uringmq {

class DirLock {
 public:
  static Status Acquire(const std::string& dir, DirLock* out);
  DirLock() = default;
  ~DirLock() { Release(); }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  void Release();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace uringmq
