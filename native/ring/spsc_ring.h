// Bounded single-producer/single-consumer ring. The producer is the JavaScript thread
// that owns the LogEngine; the consumer is the engine's I/O thread. head and tail sit
// on their own 64-byte cache lines so the two cores do not false-share; each side also
// caches the other's index to touch the shared line only when it looks full/empty.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

namespace uringmq {

inline constexpr size_t kCacheLine = 64;

template <typename T>
class SpscRing {
 public:
  explicit SpscRing(size_t capacity_pow2)
      : capacity_(capacity_pow2), mask_(capacity_pow2 - 1), slots_(new T[capacity_pow2]) {}

  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  size_t capacity() const { return capacity_; }

  // Producer thread only. Returns false when full; the item is left untouched.
  bool TryPush(T&& item) {
    const uint64_t tail = tail_.value.load(std::memory_order_relaxed);
    if (tail - producer_cached_head_ >= capacity_) {
      producer_cached_head_ = head_.value.load(std::memory_order_acquire);
      if (tail - producer_cached_head_ >= capacity_) return false;
    }
    slots_[tail & mask_] = std::move(item);
    tail_.value.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Consumer thread only.
  bool TryPop(T& out) {
    const uint64_t head = head_.value.load(std::memory_order_relaxed);
    if (head == consumer_cached_tail_) {
      consumer_cached_tail_ = tail_.value.load(std::memory_order_acquire);
      if (head == consumer_cached_tail_) return false;
    }
    out = std::move(slots_[head & mask_]);
    slots_[head & mask_] = T();
    head_.value.store(head + 1, std::memory_order_release);
    return true;
  }

  // Either thread; a snapshot only.
  bool EmptyApprox() const {
    return head_.value.load(std::memory_order_acquire) == tail_.value.load(std::memory_order_acquire);
  }

 private:
  struct alignas(kCacheLine) PaddedIndex {
    std::atomic<uint64_t> value{0};
    char pad[kCacheLine - sizeof(std::atomic<uint64_t>)];
  };

  const size_t capacity_;
  const size_t mask_;
  std::unique_ptr<T[]> slots_;
  PaddedIndex head_;  // written by the consumer
  PaddedIndex tail_;  // written by the producer
  alignas(kCacheLine) uint64_t producer_cached_head_ = 0;
  alignas(kCacheLine) uint64_t consumer_cached_tail_ = 0;
};

static_assert(sizeof(std::atomic<uint64_t>) == 8, "64-bit atomics expected");

}  // namespace uringmq
