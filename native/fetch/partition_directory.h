// What the fetch thread needs from the engine: the open partitions by name, and a
// wake-up when new batches are published. Both are shared between the JS thread
// (which opens and closes partitions), the engine's I/O thread (which publishes)
// and the fetch thread; each member says which thread touches it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "log/partition_log.h"

namespace uringmq {

// Open partitions keyed by their label "topic/partition" (topic names never hold a
// '/', so the key is unambiguous). Written by the JS thread, read by the fetch thread.
class PartitionDirectory {
 public:
  void Add(const std::shared_ptr<PartitionLog>& log) {
    std::lock_guard<std::mutex> lk(mu_);
    map_[log->label()] = log;
  }
  void Remove(PartitionLog* log) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = map_.find(log->label());
    if (it != map_.end() && it->second.get() == log) map_.erase(it);
  }
  // The engine closed: its logs (and their segment fds) must not outlive it here.
  void Clear() {
    std::lock_guard<std::mutex> lk(mu_);
    map_.clear();
  }
  std::shared_ptr<PartitionLog> Find(const std::string& label) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = map_.find(label);
    return it == map_.end() ? nullptr : it->second;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<PartitionLog>> map_;
};

// Wakes the fetch thread after a group-commit cycle published batches, but only
// while it has long-polls waiting: otherwise a busy producer would wake it for
// nothing on every cycle. The fetch thread sets `waiting` and then re-reads the
// partitions it waits for; the I/O thread publishes and then reads `waiting`. With a
// full fence on both sides (Dekker), one of them always sees the other's write.
class PublishSignal {
 public:
  // Fetch thread (any thread for Detach): where to write the wake-up.
  bool Attach(int event_fd) {
    std::lock_guard<std::mutex> lk(mu_);
    if (fd_ >= 0) return false;
    fd_ = event_fd;
    return true;
  }
  void Detach(int event_fd) {
    std::lock_guard<std::mutex> lk(mu_);
    if (fd_ == event_fd) fd_ = -1;
    waiting_.store(false, std::memory_order_relaxed);
  }
  // Fetch thread.
  void SetWaiting(bool w) {
    if (waiting_.load(std::memory_order_relaxed) == w) return;
    waiting_.store(w, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  // I/O thread, after Publish() of a cycle.
  void Notify();

 private:
  std::mutex mu_;  // guards fd_ against Detach + close while Notify writes
  int fd_ = -1;
  std::atomic<bool> waiting_{false};
};

}  // namespace uringmq
