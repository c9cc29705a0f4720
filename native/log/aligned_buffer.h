// A growable buffer whose memory is aligned for O_DIRECT. Owned by whoever holds it;
// not thread-safe. Copy is deleted: these are large and their address is handed to
// the kernel.
#pragma once

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace uringmq {

class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t align = 4096) : align_(align) {}
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& o) noexcept { *this = std::move(o); }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(cap_, o.cap_);
    std::swap(align_, o.align_);
    return *this;
  }

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t capacity() const { return cap_; }

  // Ensures capacity >= n, keeping the first `keep` bytes. Throws std::bad_alloc.
  void Reserve(size_t n, size_t keep) {
    if (n <= cap_) return;
    size_t cap = cap_ ? cap_ : align_;
    while (cap < n) cap *= 2;
    void* p = nullptr;
    if (posix_memalign(&p, align_, cap) != 0) throw std::bad_alloc();
    if (keep) std::memcpy(p, data_, keep);
    std::free(data_);
    data_ = static_cast<uint8_t*>(p);
    cap_ = cap;
  }

  // Drops a large allocation, keeping `keep` bytes, so an idle partition does not
  // pin the memory a burst needed.
  void ShrinkTo(size_t n, size_t keep) {
    if (cap_ <= n) return;
    void* p = nullptr;
    if (posix_memalign(&p, align_, n) != 0) return;  // keep the big one; not fatal
    if (keep) std::memcpy(p, data_, keep);
    std::free(data_);
    data_ = static_cast<uint8_t*>(p);
    cap_ = n;
  }

 private:
  uint8_t* data_ = nullptr;
  size_t cap_ = 0;
  size_t align_ = 4096;
};

}  // namespace uringmq
