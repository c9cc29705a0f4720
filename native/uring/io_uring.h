// A thin io_uring binding over the kernel uapi header (no liburing), so that
// `npm install` needs nothing but Node's own toolchain. Owned by one thread: the
// LogEngine I/O thread that creates it; never shared.
#pragma once

#include <linux/io_uring.h>

#include <cstdint>
#include <memory>
#include <string>

namespace uringmq {

class IoUring {
 public:
  // Sets up a ring and probes that the kernel supports every op we use. Returns null
  // and fills *why (e.g. "io_uring_setup: Operation not permitted") when io_uring is
  // unavailable: old kernel, seccomp (Docker's default), kernel.io_uring_disabled.
  static std::unique_ptr<IoUring> Create(unsigned entries, std::string* why);
  ~IoUring();
  IoUring(const IoUring&) = delete;
  IoUring& operator=(const IoUring&) = delete;

  // Next free submission entry (zeroed), or null when the SQ is full.
  io_uring_sqe* GetSqe();
  // Submits everything queued (at most max_submit: a test hook's short submit) and
  // waits for at least wait_nr completions. Returns the number submitted or -errno.
  // EINTR is retried.
  int SubmitAndWait(unsigned wait_nr, unsigned max_submit = ~0u);
  // Pops one completion if one is ready.
  bool PopCqe(io_uring_cqe* out);
  unsigned sq_entries() const { return sq_entries_; }

  // --- for native/fetch, which needs more than the log engine ---
  // Whether the kernel supports `opcode` (from the probe taken at setup).
  bool Supports(int opcode) const;
  unsigned features() const { return features_; }
  // Free submission entries (GetSqe succeeds this many times before a submit).
  unsigned SqSpace() const { return sq_entries_ - (sqe_local_tail_ - __atomic_load_n(sq_head_, __ATOMIC_ACQUIRE)); }
  // Like SubmitAndWait, but gives up waiting after timeout_ns (needs
  // IORING_FEAT_EXT_ARG). A timeout is not an error: returns the number submitted.
  int SubmitAndWaitTimeout(unsigned wait_nr, int64_t timeout_ns);
  // Caps the kernel's io-wq worker threads for this ring (bounded, unbounded work);
  // 0 leaves a limit unchanged. Returns 0 or -errno.
  int SetMaxWorkers(unsigned bounded, unsigned unbounded);

 private:
  IoUring() = default;
  int fd_ = -1;
  unsigned sq_entries_ = 0;
  unsigned cq_entries_ = 0;
  void* sq_ring_ = nullptr;
  size_t sq_ring_size_ = 0;
  void* cq_ring_ = nullptr;
  size_t cq_ring_size_ = 0;
  io_uring_sqe* sqes_ = nullptr;
  size_t sqes_size_ = 0;
  unsigned* sq_head_ = nullptr;
  unsigned* sq_tail_ = nullptr;
  unsigned* sq_mask_ = nullptr;
  unsigned* sq_array_ = nullptr;
  unsigned* cq_head_ = nullptr;
  unsigned* cq_tail_ = nullptr;
  unsigned* cq_mask_ = nullptr;
  io_uring_cqe* cqes_ = nullptr;
  unsigned sqe_local_tail_ = 0;  // entries handed out but not yet published
  unsigned to_submit_ = 0;
  unsigned features_ = 0;
  uint8_t supported_[256] = {};  // IO_URING_OP_SUPPORTED per opcode, from the probe
};

// Probes io_uring support without keeping a ring. Used for reporting.
bool ProbeIoUring(std::string* why);

}  // namespace uringmq
