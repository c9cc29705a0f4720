#include "log/log_engine.h"

#include "common/clock.h"

#include <poll.h>
#include <pthread.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace uringmq {
namespace {

constexpr int64_t kRetentionCheckMs = 1000;
// A step holds the I/O thread for one write of up to kZeroStepBytes and a sync (about
// 2 ms here), once per MiB of a small-cycled writer's data: few and large, because what
// an append arriving meanwhile waits is mostly the sync, whatever the size. At most
// 50 MB/s of zeros; a faster writer simply overtakes them.
constexpr size_t kZeroStepBytes = 1u << 20;
constexpr int64_t kZeroStepGapUs = 20000;

}  // namespace

LogEngine::LogEngine(const EngineOptions& opts, Sink sink)
    : opts_(opts), sink_(std::move(sink)), ring_(opts.ring_capacity) {}

Status LogEngine::Create(const EngineOptions& opts, Sink sink, std::unique_ptr<LogEngine>* out) {
  std::unique_ptr<LogEngine> e(new LogEngine(opts, std::move(sink)));
  e->backend_ = CreateIoBackend(opts.backend, &e->backend_note_);
  if (!e->backend_)
    return Status::Error(Code::kUnavailable, "io_uring backend requested but unavailable: " + e->backend_note_ +
                                                 " (use ioBackend 'auto' or 'thread')");
  if (opts.test_uring_fault) e->backend_->InjectFault(opts.test_uring_fault);
  if (!opts.test_power_cut.empty()) {
    // Without syncs nothing would ever empty the journal: it would hold every write's old bytes.
    if (opts.durability == Durability::kNone)
      return Status::Error(Code::kInvalidArgument, "testPowerCut needs durability 'sync' or 'interval'");
    Status s = PowerCutJournal::Open(opts.test_power_cut, opts.test_power_cut_kill_after, &e->power_cut_);
    if (!s.ok()) return s;
  }
  e->event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (e->event_fd_ < 0) return SysError("eventfd", "", -1, errno);
  if (opts.durability == Durability::kSync && !opts.flush_dir.empty()) e->OpenFlushFile();
  e->last_sync_ms_ = e->last_retention_ms_ = MonoMs();
  e->thread_ = std::thread([raw = e.get()] { raw->Run(); });
  *out = std::move(e);
  return Status::Ok();
}

void LogEngine::OpenFlushFile() {
  // ext4 without a journal writes the inode table block holding a file's inode on every
  // fsync of it, dirty from whichever inode in the block changed: a flush file among the
  // segments' inodes (each O_DIRECT write moves their timestamps once per clock tick)
  // would bring back the very metadata write it is there to avoid. Inodes go to the
  // group of their directory, and a directory made inside one marked FS_TOPDIR_FL (chattr
  // +T) to another group than its parent's (ext4's Orlov allocator): so the file lives
  // in such a directory, with nothing else in it. Where the flag is refused, it still
  // works, only without that placement. Only an optimisation: whatever goes wrong here
  // leaves every write on RWF_DSYNC, says why in flush_note_, and opens the broker.
  const std::string& dir = opts_.flush_dir;
  const size_t slash = dir.find_last_of('/');
  const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
  struct statfs fs;
  if (statfs(parent.c_str(), &fs) != 0 || fs.f_type != 0xEF53) return;  // only ext4 gains (PartitionLog)
  auto off = [this](const std::string& why) {
    if (flush_fd_ >= 0) close(flush_fd_);
    flush_fd_ = -1;
    flush_note_ = "writes over written blocks stay O_DSYNC (no cache flushes): " + why;
  };
  struct stat st;
  if (lstat(dir.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
    // An early build kept the flush file itself at this path.
    if (unlink(dir.c_str()) != 0) return off(SysError("unlink", dir, -1, errno).message);
  }
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return off(SysError("mkdir", dir, -1, errno).message);
  const std::string sub = dir + "/d";
  if (lstat(sub.c_str(), &st) != 0) {
    if (errno != ENOENT) return off(SysError("lstat", sub, -1, errno).message);
    int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return off(SysError("open", dir, -1, errno).message);
    int flags = 0;
    if (ioctl(dfd, FS_IOC_GETFLAGS, &flags) == 0 && !(flags & FS_TOPDIR_FL)) {
      flags |= FS_TOPDIR_FL;
      (void)ioctl(dfd, FS_IOC_SETFLAGS, &flags);  // best effort, above
    }
    close(dfd);
    if (mkdir(sub.c_str(), 0755) != 0 && errno != EEXIST) return off(SysError("mkdir", sub, -1, errno).message);
  } else if (!S_ISDIR(st.st_mode)) {
    return off(sub + " is not a directory (remove it: the broker makes it again)");
  }
  flush_path_ = sub + "/flush";
  // Read-only is enough for fdatasync; O_NONBLOCK so that a FIFO put there cannot hang the open.
  flush_fd_ = open(flush_path_.c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (flush_fd_ < 0) return off(SysError("open", flush_path_, -1, errno).message);
  if (fstat(flush_fd_, &st) != 0) return off(SysError("fstat", flush_path_, -1, errno).message);
  // Its fdatasync must reach the file system's disk: not a FIFO's or a device node's.
  if (!S_ISREG(st.st_mode)) return off(flush_path_ + " is not a regular file (remove it: the broker makes it again)");
  flush_dev_ = static_cast<uint64_t>(st.st_dev);
  flush_ino_ = static_cast<uint64_t>(st.st_ino);
  if (fstatfs(flush_fd_, &fs) != 0) return off(SysError("fstatfs", flush_path_, -1, errno).message);
  // The most inodes a table block can hold (128-byte inodes, the smallest ext4 has).
  inodes_per_block_ = std::max<uint64_t>(1, static_cast<uint64_t>(fs.f_bsize) / 128);
}

LogEngine::~LogEngine() {
  Stop();
  if (event_fd_ >= 0) close(event_fd_);
  if (flush_fd_ >= 0) close(flush_fd_);
}

bool LogEngine::Submit(IoRequest&& r) {
  r.submitted_us = MonoUs();
  if (!ring_.TryPush(std::move(r))) return false;
  // Pairs with the fence in Sleep(): either we see sleeping_ or it sees our push.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  Wake(false);
  return true;
}

void LogEngine::Wake(bool always) {
  if (always || sleeping_.load(std::memory_order_seq_cst)) {
    uint64_t one = 1;
    // EAGAIN means the counter is already non-zero: the thread will wake anyway.
    ssize_t n = write(event_fd_, &one, sizeof one);
    (void)n;
  }
}

void LogEngine::Sleep(int timeout_ms) {
  sleeping_.store(true, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (ring_.EmptyApprox()) {
    pollfd pfd{event_fd_, POLLIN, 0};
    poll(&pfd, 1, timeout_ms);
    uint64_t v;
    ssize_t n = read(event_fd_, &v, sizeof v);
    (void)n;
  }
  sleeping_.store(false, std::memory_order_relaxed);
}

void LogEngine::PauseUntil(int64_t mono_us) {
  const int64_t now = MonoUs();
  if (mono_us <= now) return;
  // A plain sleep, not a wait on the eventfd: submissions meanwhile are what it waits to
  // gather. Stop() waits at most the gap. Relative, so a signal's EINTR only shortens it.
  timespec ts{static_cast<time_t>((mono_us - now) / 1000000), static_cast<long>(((mono_us - now) % 1000000) * 1000)};
  (void)nanosleep(&ts, nullptr);  // its arguments are valid: EINTR is its only failure
}

void LogEngine::Register(const std::shared_ptr<PartitionLog>& p) {
  std::lock_guard<std::mutex> lk(registry_mu_);
  registry_.push_back(p);
}

void LogEngine::Unregister(PartitionLog* p) {
  p->closed.store(true);
  std::lock_guard<std::mutex> lk(registry_mu_);
  registry_.erase(std::remove_if(registry_.begin(), registry_.end(),
                                 [p](const std::shared_ptr<PartitionLog>& x) { return x.get() == p; }),
                  registry_.end());
}

void LogEngine::Stop() {
  if (stopped_) return;
  stopped_ = true;
  IoRequest r;
  r.kind = IoRequest::Kind::kStop;
  while (!ring_.TryPush(std::move(r))) std::this_thread::yield();
  Wake(true);
  if (thread_.joinable()) thread_.join();
  // Not left to the destructor, which waits for the JS wrapper's collection: a closed
  // broker holds nothing open on its file system (an unmount right after close()).
  if (flush_fd_ >= 0) {
    close(flush_fd_);
    flush_fd_ = -1;
  }
}

void LogEngine::Run() {
  pthread_setname_np(pthread_self(), "uringmq-io");  // names the thread in perf and top
  std::vector<IoRequest> reqs;
  for (;;) {
    reqs.clear();
    size_t bytes = 0;
    bool stop = false;
    IoRequest r;
    // Appends queued up while the last cycle ran: more are coming at once, so let them
    // gather until the gap since that cycle began has passed (see min_cycle_gap_us).
    if (next_cycle_us_ > 0) {
      // The pause is the I/O thread's only idle time at steady high rates: zero ahead in
      // it (a step may outlast it, by about a millisecond at most, a few times a second).
      ZeroAheadStep();
      PauseUntil(next_cycle_us_);
    }
    while (bytes < opts_.max_cycle_bytes && ring_.TryPop(r)) {
      if (r.kind == IoRequest::Kind::kStop) {
        stop = true;
        break;
      }
      bytes += r.len;
      reqs.push_back(std::move(r));
    }
    next_cycle_us_ = 0;
    if (!reqs.empty()) {
      const int64_t start = MonoUs();
      ProcessCycle(reqs);
      // Only when others arrived meanwhile: a lone writer that waits for each append
      // before sending the next would only be slowed, nothing joining it. A backlog (the
      // cycle stopped at max_cycle_bytes) goes on at once.
      if (opts_.min_cycle_gap_us > 0 && bytes < opts_.max_cycle_bytes && !ring_.EmptyApprox()) next_cycle_us_ = start + opts_.min_cycle_gap_us;
    }
    if (stop) {
      RunTimers(/*force_sync=*/true);
      return;
    }
    RunTimers(false);
    if (reqs.empty()) {
      // Nothing waits: a moment to zero ahead; then look at the ring again.
      if (ZeroAheadStep()) continue;
      int timeout = static_cast<int>(kRetentionCheckMs);
      if (opts_.durability == Durability::kInterval && !dirty_.empty())
        timeout = static_cast<int>(std::max<int64_t>(1, opts_.interval_ms - (MonoMs() - last_sync_ms_)));
      // The last step wrote, or none has looked since the last appends: back when the next may run.
      if (zero_pending_)
        timeout = std::min<int>(timeout, static_cast<int>(std::max<int64_t>(1, (last_zero_us_ + kZeroStepGapUs - MonoUs()) / 1000 + 1)));
      Sleep(timeout);
    }
  }
}

bool LogEngine::ZeroAheadStep() {
  if (opts_.durability != Durability::kSync || opts_.zero_ahead_bytes == 0) return false;
  const int64_t mono = MonoUs();
  if (mono - last_zero_us_ < kZeroStepGapUs) {
    // Not looked at since the last step: appends since may have left work, so the idle
    // loop comes back when the gap is over (else it could sleep past the last second in
    // which their partition counts as written).
    zero_pending_ = true;
    return false;
  }
  last_zero_us_ = mono;
  std::vector<std::shared_ptr<PartitionLog>> parts;
  {
    std::lock_guard<std::mutex> lk(registry_mu_);
    parts = registry_;
  }
  if (parts.empty()) {
    zero_pending_ = false;
    return false;
  }
  if (!zeros_.data()) {
    zeros_.Reserve(kZeroStepBytes, 0);
    std::memset(zeros_.data(), 0, kZeroStepBytes);
  }
  const int64_t now = MonoMs();
  for (size_t i = 0; i < parts.size(); i++) {
    PartitionLog* p = parts[(zero_cursor_ + i) % parts.size()].get();
    const size_t n = p->ZeroAhead(zeros_.data(), kZeroStepBytes, opts_.zero_ahead_bytes, now, power_cut_.get());
    if (n > 0) {
      zero_cursor_ = (zero_cursor_ + i + 1) % parts.size();
      zero_ahead_bytes_.fetch_add(n, std::memory_order_relaxed);
      zero_pending_ = true;
      return true;
    }
  }
  zero_pending_ = false;
  return false;
}

void LogEngine::ProcessCycle(std::vector<IoRequest>& reqs) {
  const int64_t now = NowMs();
  std::vector<Completion> done;
  done.reserve(reqs.size());
  std::vector<std::shared_ptr<PartitionLog>> touched;
  std::vector<int64_t> bases(reqs.size(), -1);
  std::vector<Status> rejected(reqs.size());
  bool want_sync = false;

  for (size_t i = 0; i < reqs.size(); i++) {
    IoRequest& r = reqs[i];
    PartitionLog* p = r.partition.get();
    if (p->failed.load(std::memory_order_acquire)) continue;
    want_sync = want_sync || r.sync;
    if (r.resume) p->space_refused = false;
    if (r.len == 0) continue;  // a sync barrier or a resume: nothing to stage
    if (p->space_refused) {
      rejected[i] = p->space_refusal;
      continue;
    }
    Status s = p->Stage(r.data, r.len, r.mode, &bases[i]);
    if (!s.ok()) {
      if (s.code == Code::kResourceExhausted) {
        p->space_refused = true;
        p->space_refusal = s;
      }
      // These refuse the batch and leave the log as it was (a refusal for space also the
      // partition's later batches, above); any other error fences the partition.
      if (s.code == Code::kCorruptBatch || s.code == Code::kOffsetOutOfRange || s.code == Code::kResourceExhausted)
        rejected[i] = s;
      else p->Fail(s);
      // A batch refused after it rolled the segment leaves the old one to seal: this
      // cycle's Publish seals it, as if the batch had been written (a clean close would
      // otherwise leave it unsealed on disk, and a later open take damage in it for a
      // torn tail, dropping the segments after it).
      if (!p->failed.load() && p->HasStaged() && std::find(touched.begin(), touched.end(), r.partition) == touched.end())
        touched.push_back(r.partition);
      continue;
    }
    if (std::find(touched.begin(), touched.end(), r.partition) == touched.end()) touched.push_back(r.partition);
  }

  if (opts_.test_io_delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(opts_.test_io_delay_ms));

  std::vector<IoOp> writes;
  std::vector<PartitionLog*> owner;
  for (auto& p : touched) {
    if (p->failed.load()) continue;
    size_t before = writes.size();
    Status s = p->CollectWrites(&writes);
    if (!s.ok()) {
      writes.resize(before);
      p->Fail(s);
      continue;
    }
    owner.resize(writes.size(), p.get());
  }
  // In sync mode every write of this cycle is durable before the cycle completes: with
  // RWF_DSYNC, or, over blocks already written (in_place) on the flush file's file
  // system, as a plain write followed by one flush of the disk's cache for all of them.
  // Everything written in earlier cycles is already durable, so no fdatasync pass of
  // the segments is needed.
  const bool sync_mode = opts_.durability == Durability::kSync;
  bool flush = false;
  for (IoOp& w : writes) {
    // A file whose inode shares a table block with the flush file's gains nothing: that
    // fdatasync writes the block too (OpenFlushFile).
    const bool by_flush = sync_mode && flush_fd_ >= 0 && w.in_place && w.dev == flush_dev_ &&
                          (w.ino - 1) / inodes_per_block_ != (flush_ino_ - 1) / inodes_per_block_;
    w.dsync = sync_mode && !by_flush;
    flush = flush || by_flush;
  }
  const int64_t write_start = MonoUs();
  const uint64_t pc_token = power_cut_ ? power_cut_->BeforeWrites(writes) : 0;
  backend_->RunWrites(writes);
  if (power_cut_) power_cut_->AfterWrites(writes, pc_token);
  for (size_t i = 0; i < writes.size(); i++)
    if (writes[i].error)
      owner[i]->Fail(SysError(writes[i].dsync ? "write (RWF_DSYNC)" : "write", *writes[i].path, writes[i].offset, writes[i].error));
  if (sync_mode && flush) {
    bool any = false;
    for (size_t i = 0; i < writes.size(); i++) {
      IoOp& w = writes[i];
      if (w.dsync || w.error) continue;
      // ext4 turns a direct write it cannot keep out of the page cache into a buffered one
      // and writes it back, but drops that write-back's error, leaving it in the file's
      // error sequence: RWF_DSYNC would report it, a flush of another file never does.
      // With a clean page cache this returns at once.
      if (sync_file_range(w.fd, w.offset, static_cast<off64_t>(w.len),
                          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) != 0) {
        w.error = errno;
        owner[i]->Fail(SysError("sync_file_range", *w.path, w.offset, w.error));
        continue;
      }
      any = true;
    }
    if (any) {
      // After every write completed: a flush covers what the disk acknowledged before it.
      // That an fdatasync of a clean file flushes is what ext4 does in every mode that
      // flushes at all: without a journal ext4_fsync_nojournal sets needs_barrier; with
      // one, ext4_fsync_journal finds the file's transaction committed (or commits it, with
      // a preflush) and jbd2_trans_will_send_data_barrier() false, and flushes itself.
      std::vector<IoOp> one(1);
      one[0].fd = flush_fd_;
      one[0].path = &flush_path_;
      const uint64_t flush_token = power_cut_ ? power_cut_->Token() : 0;
      backend_->RunSyncs(one);
      // Insurance for a file system made read-only under the broker without an error
      // (an emergency remount): ext4's fsync then returns success with no flush, for
      // RWF_DSYNC writes as for this one. After an ext4 error the writes and this fsync
      // fail on their own (EROFS, or EIO on 6.6-6.14), and 6.15+ leaves the mount
      // read-write (emergency_ro), so there this never fires.
      struct statvfs v;
      if (!one[0].error && fstatvfs(flush_fd_, &v) == 0 && (v.f_flag & ST_RDONLY)) one[0].error = EROFS;
      if (one[0].error) {
        const std::string what = "flush of the disk's cache (fdatasync " + flush_path_ + ") after a write to";
        for (size_t i = 0; i < writes.size(); i++)
          if (!writes[i].dsync && !writes[i].error) owner[i]->Fail(SysError(what.c_str(), *writes[i].path, writes[i].offset, one[0].error));
      } else {
        if (power_cut_) power_cut_->Flushed(flush_fd_, flush_token);
        cache_flushes_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  if (!writes.empty()) write_latency_.Record(static_cast<uint64_t>(MonoUs() - write_start));

  if (sync_mode) {
    for (auto& p : touched)
      if (!p->failed.load()) p->MarkSynced();
  } else {
    for (auto& p : touched)
      if (!p->failed.load()) dirty_.insert(p);
  }

  // Publish makes the cycle's batches readable first, then writes the index and seals.
  // A failure there fences the partition only after this cycle's appends complete as
  // written: they are (durable, in sync mode) and consumers already read them, so an
  // IO_ERROR for them made a producer's retry write them twice.
  // Not in sync mode, a failure there may have left this cycle's data unsynced: a seal
  // that failed before or in its fdatasync (its segment is no longer among the files
  // SyncDirty syncs, and a second fdatasync after EIO proves nothing), and a crash then
  // cut the log at that segment's torn tail, dropping the segments after it. So a
  // partition with a request that asked to be on disk (sync) is fenced at once, as
  // before: that cycle's appends are refused, none acknowledged as durable.
  std::vector<std::pair<PartitionLog*, Status>> failed_after_publish;
  std::vector<PartitionLog*> sync_asked;
  if (!sync_mode && want_sync)
    for (const IoRequest& r : reqs)
      if (r.sync) sync_asked.push_back(r.partition.get());
  for (auto& p : touched) {
    if (p->failed.load()) continue;
    Status s = p->Publish(now);
    if (s.ok()) continue;
    if (std::find(sync_asked.begin(), sync_asked.end(), p.get()) != sync_asked.end()) p->Fail(s);
    else failed_after_publish.emplace_back(p.get(), std::move(s));
  }
  // A batch that asked to be on disk before it completes: sync now (a failed sync
  // fences its partition, and the completions below report that).
  if (want_sync && !sync_mode && !dirty_.empty()) SyncDirty();

  for (size_t i = 0; i < reqs.size(); i++) {
    IoRequest& r = reqs[i];
    PartitionLog* p = r.partition.get();
    if (!rejected[i].ok()) {
      done.push_back({r.id, rejected[i].code, -1, rejected[i].message});
    } else if ((bases[i] >= 0 || r.len == 0) && !p->failed.load()) {
      done.push_back({r.id, Code::kOk, bases[i], {}});
    } else {
      done.push_back({r.id, Code::kIoError, -1,
                      "partition " + p->label() + " is fenced after an I/O error (reopen the broker to recover): " +
                          p->FailureMessage()});
    }
    r.partition.reset();
  }
  for (auto& [p, s] : failed_after_publish) p->Fail(s);
  const int64_t done_us = MonoUs();
  for (const IoRequest& r : reqs) append_latency_.Record(static_cast<uint64_t>(std::max<int64_t>(0, done_us - r.submitted_us)));
  sink_(std::move(done));
}

template <typename It>
void LogEngine::SyncPartitions(It begin, It end) {
  std::vector<IoOp> syncs;
  std::vector<PartitionLog*> owner;
  for (It it = begin; it != end; ++it) {
    if ((*it)->failed.load()) continue;
    (*it)->CollectSyncs(&syncs);
    owner.resize(syncs.size(), it->get());
  }
  const uint64_t pc_token = power_cut_ ? power_cut_->Token() : 0;
  backend_->RunSyncs(syncs);  // all files at once: io_uring syncs them in parallel
  if (power_cut_) power_cut_->AfterSyncs(syncs, pc_token);
  sync_passes_.fetch_add(1, std::memory_order_relaxed);
  for (size_t i = 0; i < syncs.size(); i++)
    if (syncs[i].error) owner[i]->Fail(SysError("fdatasync", *syncs[i].path, -1, syncs[i].error));
  for (It it = begin; it != end; ++it) (*it)->MarkSynced();
}

void LogEngine::SyncDirty() {
  SyncPartitions(dirty_.begin(), dirty_.end());
  dirty_.clear();
  last_sync_ms_ = MonoMs();
}

void LogEngine::RunTimers(bool force_sync) {
  const int64_t mono = MonoMs();
  // A closed partition (its topic deleted) needs no sync, and holding it here would
  // keep its files, fds and staging buffer alive until the broker closes: with
  // durability 'none' nothing else ever empties dirty_.
  for (auto it = dirty_.begin(); it != dirty_.end();) {
    if (!force_sync && (*it)->closed.load()) it = dirty_.erase(it);
    else ++it;
  }
  if (!dirty_.empty() &&
      (force_sync || (opts_.durability == Durability::kInterval && mono - last_sync_ms_ >= opts_.interval_ms)))
    SyncDirty();
  if (mono - last_retention_ms_ >= kRetentionCheckMs) {
    last_retention_ms_ = mono;
    std::vector<std::shared_ptr<PartitionLog>> parts;
    {
      std::lock_guard<std::mutex> lk(registry_mu_);
      parts = registry_;
    }
    const int64_t now = NowMs();
    for (auto& p : parts) {
      if (p->closed.load()) continue;
      // A fenced partition too: a full disk is a common cause of the fence, and retention
      // is what gives space back. It removes only whole sealed segments below the active
      // one (RetireSegments), which the fence guards nothing of: no writer touches them,
      // readers keep their fds, and the reopen recovers from the first file left.
      PartitionLog::RemovalTrouble trouble;
      p->EnforceRetention(now, &trouble);
      if (trouble.failures > 0) retention_remove_failures_.fetch_add(trouble.failures, std::memory_order_relaxed);
      if (!trouble.warning.empty()) AddWarning(std::move(trouble.warning));
      if (!p->failed.load()) p->ReleaseIdleMemory(now);
    }
  }
}

void LogEngine::AddWarning(std::string w) {
  constexpr size_t kMaxWarnings = 64;
  std::lock_guard<std::mutex> lk(warnings_mu_);
  if (warnings_.size() < kMaxWarnings) warnings_.push_back(std::move(w));
  else warnings_dropped_++;
}

std::vector<std::string> LogEngine::TakeWarnings() {
  std::lock_guard<std::mutex> lk(warnings_mu_);
  std::vector<std::string> out;
  out.swap(warnings_);
  if (warnings_dropped_ > 0) {
    out.push_back(std::to_string(warnings_dropped_) + " more warnings of the log's I/O thread were dropped (too many at once)");
    warnings_dropped_ = 0;
  }
  return out;
}

}  // namespace uringmq
