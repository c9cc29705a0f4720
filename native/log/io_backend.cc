#include "log/io_backend.h"

#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "log/file_util.h"
#include "uring/io_uring.h"

namespace uringmq {
namespace {

int DataSync(int fd) {
  for (;;) {
    if (fdatasync(fd) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

// A complete write that is durable on return: pwritev2(RWF_DSYNC), or write and
// fdatasync where the kernel or file system refuses the flag.
int PwriteFullDsync(int fd, const uint8_t* buf, size_t len, int64_t off) {
  while (len > 0) {
    iovec iov{const_cast<uint8_t*>(buf), len};
    ssize_t n = pwritev2(fd, &iov, 1, off, RWF_DSYNC);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EOPNOTSUPP || errno == ENOSYS) {
        int e = PwriteFull(fd, buf, len, off);
        return e ? e : DataSync(fd);
      }
      return errno;
    }
    if (n == 0) return EIO;  // no progress and no error: do not spin
    buf += n;
    len -= static_cast<size_t>(n);
    off += n;
  }
  return 0;
}

class ThreadBackend final : public IoBackend {
 public:
  const char* name() const override { return "thread"; }
  void RunWrites(std::vector<IoOp>& ops) override {
    for (auto& op : ops)
      op.error = op.dsync ? PwriteFullDsync(op.fd, op.buf, op.len, op.offset) : PwriteFull(op.fd, op.buf, op.len, op.offset);
  }
  void RunSyncs(std::vector<IoOp>& ops) override {
    for (auto& op : ops) op.error = DataSync(op.fd);
  }
};

class UringBackend final : public IoBackend {
 public:
  explicit UringBackend(std::unique_ptr<IoUring> ring) : ring_(std::move(ring)) {}
  const char* name() const override { return "io_uring"; }

  void RunWrites(std::vector<IoOp>& ops) override { Run(ops, /*sync=*/false); }
  void RunSyncs(std::vector<IoOp>& ops) override { Run(ops, /*sync=*/true); }

 private:
  void InjectFault(int kind) override { fault_ = kind; }

  void Run(std::vector<IoOp>& ops, bool sync) {
    // One op gains nothing from the ring: io_uring would hand a write that must wait
    // for the disk (O_DIRECT into preallocated extents, RWF_DSYNC) or an fsync to one
    // of its io-wq worker threads, and that extra thread wake-up costs more latency
    // than the ring saves. The ring pays off when several files are written at once.
    if (ops.size() == 1 || broken_) {
      for (auto& op : ops) Fallback(op, sync);
      return;
    }
    size_t next = 0;
    while (next < ops.size()) {
      // Fill as much of the SQ as the batch needs, submit once, reap all.
      size_t first = next;
      while (next < ops.size()) {
        io_uring_sqe* sqe = ring_->GetSqe();
        if (!sqe) break;
        IoOp& op = ops[next];
        sqe->fd = op.fd;
        sqe->user_data = next;
        if (sync) {
          sqe->opcode = IORING_OP_FSYNC;
          sqe->fsync_flags = IORING_FSYNC_DATASYNC;
        } else {
          sqe->opcode = IORING_OP_WRITE;
          sqe->addr = reinterpret_cast<uint64_t>(op.buf);
          sqe->len = static_cast<uint32_t>(op.len);
          sqe->off = static_cast<uint64_t>(op.offset);
          if (op.dsync) sqe->rw_flags = RWF_DSYNC;
        }
        next++;
      }
      unsigned want = static_cast<unsigned>(next - first);
      int rc = Enter(want, /*submitting=*/true);
      // The kernel takes entries in order, and may take fewer than queued (it stops at
      // one it cannot start, or when it cannot allocate a request): ops [first, first +
      // submitted) are in flight, the rest still wait in the SQ for a later enter (each
      // wait below submits them too).
      size_t submitted = rc > 0 ? static_cast<size_t>(rc) : 0;
      if (rc < 0) {
        // The kernel took none of these entries (io_uring_enter fails only when it
        // consumed none), and without SQPOLL it runs entries only inside
        // io_uring_enter. So the ring is never entered again: those published
        // entries, which point into buffers later cycles reuse, never run. This
        // chunk and everything after it are written the plain way, now and from now on.
        broken_ = true;
        for (size_t i = first; i < ops.size(); i++) Fallback(ops[i], sync);
        return;
      }
      std::vector<bool> done(want, false);
      unsigned got = 0;
      while (got < want) {
        io_uring_cqe cqe;
        // An injected wait fault fires even when the completions are already posted
        // (writes the kernel finished inside the submit), so the test sees it every time.
        if (fault_ == 2 || !ring_->PopCqe(&cqe)) {
          int w = Enter(1, /*submitting=*/false);
          if (w >= 0) submitted = std::min(submitted + static_cast<size_t>(w), next - first);
          if (w < 0) {
            // The ring is not entered again. The ops in flight were submitted, and the
            // kernel runs them whether or not anyone waits: each still reads its buffer
            // (the partition's staging memory, which Fail() frees for a sealing segment
            // and a later cycle or the log's close reuses) and rewrites its file from a
            // block-aligned start below data already acknowledged. Returning now let a
            // write land with whatever the memory held by then, over acknowledged records.
            // So their completions are awaited first (DrainInFlight), from the completion
            // queue, which the kernel fills without io_uring_enter. Each is then reported
            // failed all the same (its partition is fenced, and reopening it recovers what
            // reached the disk), never as done. Ops the kernel never took (left in the SQ
            // by a short submit, which no enter will now run) have no completion to await:
            // they and the ops not yet queued go the plain way.
            broken_ = true;
            const size_t in_flight_end = first + submitted;
            const std::vector<bool> reaped = done;
            DrainInFlight(first, in_flight_end, done);
            for (size_t i = first; i < in_flight_end; i++)
              if (!reaped[i - first]) ops[i].error = -w;
            for (size_t i = in_flight_end; i < ops.size(); i++) Fallback(ops[i], sync);
            return;
          }
          continue;
        }
        if (cqe.user_data < first || cqe.user_data >= next || done[cqe.user_data - first]) continue;  // not ours
        done[cqe.user_data - first] = true;
        got++;
        IoOp& op = ops[cqe.user_data];
        if (cqe.res == -EOPNOTSUPP && !sync && op.dsync) {
          Fallback(op, false);  // the flag refused: write and sync the plain way
        } else if (cqe.res < 0) {
          op.error = -cqe.res;
        } else if (!sync && static_cast<size_t>(cqe.res) < op.len) {
          // Short write: rare (ENOSPC on the way, signals). Finish it synchronously,
          // which reports the real errno if the remainder fails too.
          op.error = op.dsync ? PwriteFullDsync(op.fd, op.buf + cqe.res, op.len - cqe.res, op.offset + cqe.res)
                           : PwriteFull(op.fd, op.buf + cqe.res, op.len - cqe.res, op.offset + cqe.res);
        }
      }
    }
  }

  // io_uring_enter (EINTR is retried inside), with a few retries for the transient
  // failures (EAGAIN, ENOMEM, EBUSY) before giving up on the ring.
  int Enter(unsigned wait_nr, bool submitting) {
    if (fault_ == (submitting ? 1 : 2)) {
      fault_ = 0;
      return -EIO;
    }
    // A short submit (the kernel takes the first entry only), then a wait that fails.
    if (fault_ == 3 && submitting) {
      fault_ = 2;
      return ring_->SubmitAndWait(0, 1);
    }
    // A wait fault needs ops in flight that have not completed: submit without waiting.
    if (fault_ == 2 && submitting) return ring_->SubmitAndWait(0);
    int rc = 0;
    for (int attempt = 0; attempt < 10; attempt++) {
      rc = ring_->SubmitAndWait(wait_nr);
      if (rc >= 0 || (rc != -EAGAIN && rc != -ENOMEM && rc != -EBUSY)) return rc;
      usleep(1000);
    }
    return rc;
  }

  // After io_uring_enter failed with ops [first, next) taken by the kernel: waits until the kernel
  // has posted the completion of every one not yet in `done`, by polling the completion
  // queue (the ring's memory, no syscall on the ring). A sleep between polls returns to
  // user mode, which runs the task work that posts completions for this thread's ring.
  // Unbounded, as the plain backend's pwrite is: a write the disk never finishes holds
  // either backend's I/O thread, and no bound is safe here (the buffers stay in use).
  void DrainInFlight(size_t first, size_t next, std::vector<bool>& done) {
    size_t left = 0;
    for (size_t i = first; i < next; i++) left += done[i - first] ? 0 : 1;
    while (left > 0) {
      io_uring_cqe cqe;
      if (!ring_->PopCqe(&cqe)) {
        timespec ts{0, 200 * 1000};
        (void)nanosleep(&ts, nullptr);  // valid arguments: EINTR is its only failure, and only shortens it
        continue;
      }
      if (cqe.user_data < first || cqe.user_data >= next || done[cqe.user_data - first]) continue;  // not ours
      done[cqe.user_data - first] = true;
      left--;
    }
  }

  static void Fallback(IoOp& op, bool sync) {
    if (sync) op.error = DataSync(op.fd);
    else op.error = op.dsync ? PwriteFullDsync(op.fd, op.buf, op.len, op.offset) : PwriteFull(op.fd, op.buf, op.len, op.offset);
  }

  std::unique_ptr<IoUring> ring_;
  bool broken_ = false;  // io_uring_enter failed for good: plain syscalls from then on
  int fault_ = 0;        // InjectFault
};

}  // namespace

std::unique_ptr<IoBackend> CreateIoBackend(BackendChoice choice, std::string* note) {
  if (choice == BackendChoice::kThread) {
    *note = "thread backend requested";
    return std::make_unique<ThreadBackend>();
  }
  std::string why;
  auto ring = IoUring::Create(256, &why);
  if (ring) {
    *note = "io_uring available";
    return std::make_unique<UringBackend>(std::move(ring));
  }
  *note = why;
  if (choice == BackendChoice::kIoUring) return nullptr;
  return std::make_unique<ThreadBackend>();
}

}  // namespace uringmq
