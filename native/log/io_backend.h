// How the I/O thread issues its writes and syncs: io_uring (many ops per syscall,
// syncs of different files in parallel) or plain pwrite/fdatasync where io_uring is
// refused. Owned by the LogEngine I/O thread; never called from anywhere else.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace uringmq {

struct IoOp {
  int fd = -1;
  const uint8_t* buf = nullptr;  // writes only
  size_t len = 0;
  int64_t offset = 0;
  const std::string* path = nullptr;  // for error messages; outlives the op
  // Writes only: durable when the write completes (RWF_DSYNC: the data and the metadata
  // needed to read it back, as a following fdatasync would make it).
  bool dsync = false;
  // Writes only, set by the log: the write lands on blocks that are already written and
  // inside the file's durable size, so its data needs no metadata to read back after a
  // crash, only the disk's write cache flushed (LogEngine: one flush for all such writes
  // of a cycle, on any file of the same file system: dev).
  bool in_place = false;
  uint64_t dev = 0;
  uint64_t ino = 0;
  int error = 0;  // 0 or a positive errno after Run*
};

class IoBackend {
 public:
  virtual ~IoBackend() = default;
  virtual const char* name() const = 0;
  // Performs every write completely (short writes are continued), each with RWF_DSYNC
  // where op.dsync says so: the sync mode then needs one I/O per file per cycle instead
  // of a write and then a sync. Sets op.error.
  virtual void RunWrites(std::vector<IoOp>& ops) = 0;
  // fdatasync on every op.fd, concurrently where the backend can.
  virtual void RunSyncs(std::vector<IoOp>& ops) = 0;
  // Test hook: make the ring's next submission (1) or next wait for completions (2)
  // fail as io_uring_enter can (-EIO); or (3) the next submission short (the kernel
  // takes one entry, as when it stops at one it cannot start or cannot allocate a
  // request) and the wait after it fail. No effect on backends without a ring.
  virtual void InjectFault(int /*kind*/) {}
};

enum class BackendChoice { kAuto, kIoUring, kThread };

// kAuto tries io_uring and falls back to threads, recording why in *note.
// kIoUring fails (null, *note says why) when io_uring is unavailable.
std::unique_ptr<IoBackend> CreateIoBackend(BackendChoice choice, std::string* note);

}  // namespace uringmq
