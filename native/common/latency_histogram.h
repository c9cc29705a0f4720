// Durations in power-of-two buckets of microseconds, counted with relaxed atomics: one
// thread records, any thread reads, nothing crosses into JavaScript per event.
#pragma once

#include <atomic>
#include <cstdint>

namespace uringmq {

class LatencyHistogram {  // recorded by one thread (the I/O thread), read by any
 public:
  // Bucket i counts durations of at most 2^(i+4) µs (16 µs .. 16.8 s); the last, longer ones.
  static constexpr int kBuckets = 21;
  static constexpr int kShift = 4;

  struct Snapshot {
    uint64_t counts[kBuckets + 1];
    uint64_t count;
    uint64_t sum_us;
  };

  void Record(uint64_t us) {
    int i = 0;
    while (i < kBuckets && us > (uint64_t{1} << (i + kShift))) i++;
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    sum_us_.fetch_add(us, std::memory_order_relaxed);
  }

  // The fields are read one by one, so a snapshot may straddle a Record.
  Snapshot Read() const {
    Snapshot s{};
    for (int i = 0; i <= kBuckets; i++) {
      s.counts[i] = counts_[i].load(std::memory_order_relaxed);
      s.count += s.counts[i];
    }
    s.sum_us = sum_us_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  std::atomic<uint64_t> counts_[kBuckets + 1] = {};
  std::atomic<uint64_t> sum_us_{0};
};

}  // namespace uringmq
