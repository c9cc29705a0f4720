// Test hook (EngineOptions::test_power_cut): models a disk with a volatile write cache,
// so that a SIGKILL of the process followed by SimulatePowerCut() loses exactly what a
// power cut could lose, which a SIGKILL alone never does (the kernel finishes every
// write the process issued, and the disk keeps whatever it took).
//
// Design: writes go to the file as usual, so the live process (and its readers) sees
// everything it wrote. Before each data write the journal records the bytes it is about
// to overwrite (an undo record); when a flush that covers the write completes, a mark
// says so. After the process died, SimulatePowerCut() puts back the old bytes of every
// write no flush covered, newest first. The journal is a plain append-only file: it
// needs no fsync, because only the process dies, never the kernel's page cache.
//
// What covers a write (a disk with a volatile cache, e.g. ext4 on SATA/virtio):
//  - a completed fdatasync/fsync of any file on the same file system (st_dev): the
//    device flush it sends persists every write the disk completed before it;
//  - a completed RWF_DSYNC write on that file system (a write plus a flush, without
//    FUA) for itself and every write that completed before it was issued.
// Flushes the hook is not told of (the log's own fdatasync of a segment it seals, of
// an index, of a directory) only make the model harsher than a real disk: the log
// never relies on them for the data of an acknowledged append in sync mode.
// Not modelled: buffered writes (the sparse index files) and metadata (file sizes,
// extents, directory entries); recovery treats both as untrusted anyway.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "log/io_backend.h"

namespace uringmq {

class PowerCutJournal {
 public:
  // Creates (or empties) the journal at `path`. With kill_after > 0 the process kills
  // itself (SIGKILL) after that many write batches have completed with writes no flush
  // covered yet: at the next flush's start, or the next write's if no flush came. A
  // random kill lands mostly between cycles, where nothing is held; this one lands
  // where a power cut hurts. It first pauses (kKillPauseMs), so that any append
  // acknowledged before its flush reaches the client and the test can see it lost.
  static Status Open(const std::string& path, uint64_t kill_after, std::unique_ptr<PowerCutJournal>* out);
  ~PowerCutJournal();
  PowerCutJournal(const PowerCutJournal&) = delete;
  PowerCutJournal& operator=(const PowerCutJournal&) = delete;

  // I/O thread only, all of it. A journal that cannot be written aborts the process:
  // the hook's failure is no I/O error of the broker's, and going on would make the
  // test's verdict meaningless.
  // Before a batch of writes is issued: one undo record each (the bytes about to be
  // overwritten), in the journal before the write can start.
  // Returns the flush token of the batch (see Flushed).
  uint64_t BeforeWrites(const std::vector<IoOp>& writes);
  // After the batch completed: every RWF_DSYNC write that succeeded is durable, and
  // flushed what completed before the batch began (`token`: conservatively, not its
  // siblings, which on io_uring ran alongside it).
  void AfterWrites(const std::vector<IoOp>& writes, uint64_t token);
  // The same for one plain write (ZeroAhead); returns nothing, its flush follows.
  void BeforeWrite(int fd, const std::string& path, int64_t off, size_t len);
  // Taken before a flush is issued; after it succeeded, Flushed() with its fd marks
  // every write recorded before the token, on that fd's file system, durable.
  uint64_t Token() {
    if (kill_armed_) Kill();
    return next_seq_;
  }
  void Flushed(int fd, uint64_t token);
  // For RunSyncs: Flushed() for each op that succeeded.
  void AfterSyncs(const std::vector<IoOp>& syncs, uint64_t token);

 private:
  PowerCutJournal() = default;
  uint64_t Record(int fd, const std::string& path, int64_t off, size_t len);
  void Append(const std::vector<uint8_t>& rec);
  void Compact();
  [[noreturn]] void Kill();

  std::string path_;
  int fd_ = -1;
  uint64_t next_seq_ = 1;
  uint64_t kill_after_ = 0;  // see Open
  uint64_t held_batches_ = 0;
  bool kill_armed_ = false;
  struct Pending {
    uint64_t seq;
    uint64_t dev;
  };
  // Writes no flush has covered yet: bounded by what one cycle writes (with `sync`,
  // every cycle ends with a flush) or one interval's, and then the journal is emptied
  // (Compact). Durability 'none' is refused (LogEngine::Create): nothing would empty it.
  std::vector<Pending> pending_;
};

struct PowerCutResult {
  uint64_t writes = 0;          // undo records in the journal
  uint64_t lost_writes = 0;     // of which no flush covered
  uint64_t sectors_undone = 0;  // 512-byte sectors put back to their old bytes
  uint64_t sectors_kept = 0;    // sectors of lost writes the disk persisted early (seed)
};

// After the process that wrote `journal` died: puts back the old bytes of every write no
// flush covered, newest first, then removes the journal. With seed != 0 a seeded random
// half of those writes' 512-byte sectors are kept instead, as a disk may persist any
// part of its cache before the power goes (and a torn write keeps some of its sectors).
Status SimulatePowerCut(const std::string& journal, uint64_t seed, PowerCutResult* out);

}  // namespace uringmq
