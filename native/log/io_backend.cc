#include "log/io_backend.h"

#include <unistd.h>

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

class ThreadBackend final : public IoBackend {
 public:
  const char* name() const override { return "thread"; }
  void RunWrites(std::vector<IoOp>& ops) override {
    for (auto& op : ops) op.error = PwriteFull(op.fd, op.buf, op.len, op.offset);
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
  void Run(std::vector<IoOp>& ops, bool sync) {
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
        }
        next++;
      }
      unsigned want = static_cast<unsigned>(next - first);
      int rc = ring_->SubmitAndWait(want);
      if (rc < 0) {
        // The ring itself failed (not an individual op): do this chunk synchronously.
        for (size_t i = first; i < next; i++) Fallback(ops[i], sync);
        continue;
      }
      unsigned got = 0;
      while (got < want) {
        io_uring_cqe cqe;
        if (!ring_->PopCqe(&cqe)) {
          int w = ring_->SubmitAndWait(1);
          if (w < 0) {
            for (size_t i = first; i < next; i++)
              if (ops[i].error == 0) Fallback(ops[i], sync);
            return;
          }
          continue;
        }
        got++;
        IoOp& op = ops[cqe.user_data];
        if (cqe.res < 0) {
          op.error = -cqe.res;
        } else if (!sync && static_cast<size_t>(cqe.res) < op.len) {
          // Short write: rare (ENOSPC on the way, signals). Finish it with pwrite,
          // which reports the real errno if the remainder fails too.
          op.error = PwriteFull(op.fd, op.buf + cqe.res, op.len - cqe.res, op.offset + cqe.res);
        }
      }
    }
  }

  static void Fallback(IoOp& op, bool sync) {
    op.error = sync ? DataSync(op.fd) : PwriteFull(op.fd, op.buf, op.len, op.offset);
  }

  std::unique_ptr<IoUring> ring_;
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
