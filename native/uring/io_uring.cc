#include "uring/io_uring.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace uringmq {
namespace {

int SysSetup(unsigned entries, io_uring_params* p) {
  return static_cast<int>(syscall(__NR_io_uring_setup, entries, p));
}
int SysEnter(int fd, unsigned to_submit, unsigned min_complete, unsigned flags) {
  return static_cast<int>(syscall(__NR_io_uring_enter, fd, to_submit, min_complete, flags, nullptr, 0));
}
int SysRegister(int fd, unsigned opcode, void* arg, unsigned nr) {
  return static_cast<int>(syscall(__NR_io_uring_register, fd, opcode, arg, nr));
}

// The ops the log engine issues. A kernel lacking any of them gets the thread backend.
constexpr int kNeededOps[] = {IORING_OP_WRITE, IORING_OP_FSYNC, IORING_OP_READ};

}  // namespace

std::unique_ptr<IoUring> IoUring::Create(unsigned entries, std::string* why) {
  io_uring_params params;
  std::memset(&params, 0, sizeof params);
  int fd = SysSetup(entries, &params);
  if (fd < 0) {
    *why = std::string("io_uring_setup: ") + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<IoUring> r(new IoUring());
  r->fd_ = fd;
  r->sq_entries_ = params.sq_entries;
  r->cq_entries_ = params.cq_entries;

  // Probe before mapping: cheaper to bail out early on an old kernel.
  const size_t probe_size = sizeof(io_uring_probe) + 256 * sizeof(io_uring_probe_op);
  std::vector<uint8_t> probe_mem(probe_size, 0);
  auto* probe = reinterpret_cast<io_uring_probe*>(probe_mem.data());
  if (SysRegister(fd, IORING_REGISTER_PROBE, probe, 256) < 0) {
    *why = std::string("io_uring_register(PROBE): ") + std::strerror(errno);
    return nullptr;
  }
  r->features_ = params.features;
  for (int op = 0; op <= probe->last_op && op < 256; op++)
    r->supported_[op] = (probe->ops[op].flags & IO_URING_OP_SUPPORTED) ? 1 : 0;
  for (int op : kNeededOps) {
    if (op > probe->last_op || !(probe->ops[op].flags & IO_URING_OP_SUPPORTED)) {
      *why = "io_uring: kernel lacks opcode " + std::to_string(op);
      return nullptr;
    }
  }

  r->sq_ring_size_ = params.sq_off.array + params.sq_entries * sizeof(unsigned);
  r->cq_ring_size_ = params.cq_off.cqes + params.cq_entries * sizeof(io_uring_cqe);
  const bool single_mmap = params.features & IORING_FEAT_SINGLE_MMAP;
  if (single_mmap) r->sq_ring_size_ = r->cq_ring_size_ = std::max(r->sq_ring_size_, r->cq_ring_size_);
  r->sq_ring_ = mmap(nullptr, r->sq_ring_size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                     IORING_OFF_SQ_RING);
  if (r->sq_ring_ == MAP_FAILED) {
    r->sq_ring_ = nullptr;
    *why = std::string("mmap(io_uring SQ ring): ") + std::strerror(errno);
    return nullptr;
  }
  if (single_mmap) {
    r->cq_ring_ = r->sq_ring_;
  } else {
    r->cq_ring_ = mmap(nullptr, r->cq_ring_size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                       IORING_OFF_CQ_RING);
    if (r->cq_ring_ == MAP_FAILED) {
      r->cq_ring_ = nullptr;
      *why = std::string("mmap(io_uring CQ ring): ") + std::strerror(errno);
      return nullptr;
    }
  }
  r->sqes_size_ = params.sq_entries * sizeof(io_uring_sqe);
  void* sqes = mmap(nullptr, r->sqes_size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                    IORING_OFF_SQES);
  if (sqes == MAP_FAILED) {
    *why = std::string("mmap(io_uring SQEs): ") + std::strerror(errno);
    return nullptr;
  }
  r->sqes_ = static_cast<io_uring_sqe*>(sqes);

  auto* sq = static_cast<uint8_t*>(r->sq_ring_);
  r->sq_head_ = reinterpret_cast<unsigned*>(sq + params.sq_off.head);
  r->sq_tail_ = reinterpret_cast<unsigned*>(sq + params.sq_off.tail);
  r->sq_mask_ = reinterpret_cast<unsigned*>(sq + params.sq_off.ring_mask);
  r->sq_array_ = reinterpret_cast<unsigned*>(sq + params.sq_off.array);
  auto* cq = static_cast<uint8_t*>(r->cq_ring_);
  r->cq_head_ = reinterpret_cast<unsigned*>(cq + params.cq_off.head);
  r->cq_tail_ = reinterpret_cast<unsigned*>(cq + params.cq_off.tail);
  r->cq_mask_ = reinterpret_cast<unsigned*>(cq + params.cq_off.ring_mask);
  r->cqes_ = reinterpret_cast<io_uring_cqe*>(cq + params.cq_off.cqes);
  r->sqe_local_tail_ = *r->sq_tail_;
  return r;
}

IoUring::~IoUring() {
  if (sqes_) munmap(sqes_, sqes_size_);
  if (cq_ring_ && cq_ring_ != sq_ring_) munmap(cq_ring_, cq_ring_size_);
  if (sq_ring_) munmap(sq_ring_, sq_ring_size_);
  if (fd_ >= 0) close(fd_);
}

io_uring_sqe* IoUring::GetSqe() {
  // The kernel advances sq_head as it consumes entries; acquire pairs with its store.
  unsigned head = __atomic_load_n(sq_head_, __ATOMIC_ACQUIRE);
  if (sqe_local_tail_ - head >= sq_entries_) return nullptr;
  unsigned idx = sqe_local_tail_ & *sq_mask_;
  io_uring_sqe* sqe = &sqes_[idx];
  std::memset(sqe, 0, sizeof *sqe);
  sq_array_[idx] = idx;
  sqe_local_tail_++;
  to_submit_++;
  return sqe;
}

int IoUring::SubmitAndWait(unsigned wait_nr, unsigned max_submit) {
  // Publish the filled SQEs: release so the kernel sees their contents.
  __atomic_store_n(sq_tail_, sqe_local_tail_, __ATOMIC_RELEASE);
  unsigned submit = std::min(to_submit_, max_submit);
  for (;;) {
    int ret = SysEnter(fd_, submit, wait_nr, wait_nr ? IORING_ENTER_GETEVENTS : 0);
    if (ret < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    to_submit_ -= static_cast<unsigned>(ret) <= to_submit_ ? static_cast<unsigned>(ret) : to_submit_;
    return ret;
  }
}

bool IoUring::PopCqe(io_uring_cqe* out) {
  unsigned head = *cq_head_;
  if (head == __atomic_load_n(cq_tail_, __ATOMIC_ACQUIRE)) return false;
  *out = cqes_[head & *cq_mask_];
  __atomic_store_n(cq_head_, head + 1, __ATOMIC_RELEASE);
  return true;
}

bool IoUring::Supports(int opcode) const { return opcode >= 0 && opcode < 256 && supported_[opcode]; }

int IoUring::SubmitAndWaitTimeout(unsigned wait_nr, int64_t timeout_ns) {
  __atomic_store_n(sq_tail_, sqe_local_tail_, __ATOMIC_RELEASE);
  __kernel_timespec ts;
  ts.tv_sec = timeout_ns / 1000000000;
  ts.tv_nsec = timeout_ns % 1000000000;
  io_uring_getevents_arg arg;
  std::memset(&arg, 0, sizeof arg);
  arg.ts = reinterpret_cast<uint64_t>(&ts);
  for (;;) {
    int ret = static_cast<int>(syscall(__NR_io_uring_enter, fd_, to_submit_, wait_nr,
                                       IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg, sizeof arg));
    if (ret < 0) {
      if (errno == EINTR) continue;
      if (errno == ETIME) return 0;  // nothing completed in time; everything was submitted
      return -errno;
    }
    to_submit_ -= static_cast<unsigned>(ret) <= to_submit_ ? static_cast<unsigned>(ret) : to_submit_;
    return ret;
  }
}

int IoUring::SetMaxWorkers(unsigned bounded, unsigned unbounded) {
  unsigned v[2] = {bounded, unbounded};
  return SysRegister(fd_, IORING_REGISTER_IOWQ_MAX_WORKERS, v, 2) < 0 ? -errno : 0;
}

bool ProbeIoUring(std::string* why) { return IoUring::Create(4, why) != nullptr; }

}  // namespace uringmq
