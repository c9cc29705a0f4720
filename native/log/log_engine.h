// The group-commit engine: one I/O thread per broker drains a ring of append
// requests, merges everything waiting into one write per segment and one sync per
// file, and reports every completion of the cycle in one call to the sink.
// Owned by the JS thread that created it; the I/O thread is internal.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "common/latency_histogram.h"
#include "common/status.h"
#include "log/io_backend.h"
#include "log/partition_log.h"
#include "log/power_cut.h"
#include "log/record_batch.h"
#include "ring/spsc_ring.h"

namespace uringmq {

enum class Durability { kSync, kInterval, kNone };

struct IoRequest {
  enum class Kind : uint8_t { kNone, kAppend, kStop };
  Kind kind = Kind::kNone;
  uint64_t id = 0;
  std::shared_ptr<PartitionLog> partition;
  // Batch bytes, owned by the JS caller and kept alive by it until completion.
  const uint8_t* data = nullptr;
  size_t len = 0;
  CrcMode mode = CrcMode::kVerify;
  // Complete only once on disk, whatever the durability mode: the cycle that writes it
  // syncs every dirty partition before reporting (a dead-letter move counts its message
  // as handled only then). With len 0 it is a barrier: nothing is written, and it
  // completes once everything written before it is durable.
  bool sync = false;
  // With len 0: ends a partition's refusal for space (PartitionLog::space_refused).
  // JavaScript sends it once it knows of the refusal, so every batch it had already
  // sent is refused with the one that found no space, and none lands ahead of it.
  bool resume = false;
  // When Submit took it (steady clock, µs), for LogEngine::append_latency().
  int64_t submitted_us = 0;
};

struct Completion {
  uint64_t id;
  Code code;
  int64_t base_offset;  // when ok
  std::string message;  // empty when ok
};

struct EngineOptions {
  BackendChoice backend = BackendChoice::kAuto;
  Durability durability = Durability::kSync;
  int64_t interval_ms = 100;
  size_t ring_capacity = 1u << 14;
  size_t max_cycle_bytes = 32u << 20;  // bounds each partition's staging buffer
  // Group commit: when appends queued up while a cycle ran, the next cycle starts no
  // sooner than this after that one began (0: at once), and what arrives meanwhile joins
  // it: fewer, larger writes and flushes, which on a virtual disk is what the host
  // charges the VM for (see PERFORMANCE-NOTES, 2026-12-05).
  int64_t min_cycle_gap_us = 0;
  // With sync durability: how far ahead of each written partition's data the I/O thread
  // keeps its preallocated blocks zeroed, between cycles (PartitionLog::ZeroAhead; 0: never).
  size_t zero_ahead_bytes = 2u << 20;
  // With sync durability: a directory (created if missing) for an empty file whose
  // fdatasync flushes the disk's write cache. A cycle's writes over blocks already
  // written (IoOp::in_place) on that file system then go without RWF_DSYNC, and one
  // fdatasync of that file makes them all durable: on ext4 an O_DSYNC write also writes
  // the file's inode whenever its timestamps moved (once per clock tick), which no data
  // needs. Empty: RWF_DSYNC always.
  std::string flush_dir;
  uint32_t test_io_delay_ms = 0;        // test hook: a slow disk
  int test_uring_fault = 0;             // test hook: IoBackend::InjectFault before the thread starts
  // Test hook: a path for a PowerCutJournal (log/power_cut.h), which models a disk with a
  // volatile write cache: after a SIGKILL, SimulatePowerCut on it loses what a power cut
  // could. Empty (off): one untaken branch per write or sync pass.
  std::string test_power_cut;
  uint64_t test_power_cut_kill_after = 0;  // PowerCutJournal::Open's kill_after
};

class LogEngine {
 public:
  using Sink = std::function<void(std::vector<Completion>&&)>;  // runs on the I/O thread

  static Status Create(const EngineOptions& opts, Sink sink, std::unique_ptr<LogEngine>* out);
  ~LogEngine();
  LogEngine(const LogEngine&) = delete;
  LogEngine& operator=(const LogEngine&) = delete;

  const char* backend_name() const { return backend_->name(); }
  const std::string& backend_note() const { return backend_note_; }
  // Why writes over written blocks stay on RWF_DSYNC though the flush file was asked for
  // (EngineOptions::flush_dir could not be set up); empty otherwise.
  const std::string& flush_note() const { return flush_note_; }
  size_t ring_capacity() const { return ring_.capacity(); }
  // Any thread. How many sync passes (fdatasync of every dirty file) have run.
  uint64_t sync_passes() const { return sync_passes_.load(std::memory_order_relaxed); }
  // Durations of the write cycles' disk writes (with sync durability each is written and
  // flushed), so an operator sees the disk's tail: a stall holds every message queued behind it.
  const LatencyHistogram& write_latency() const { return write_latency_; }
  // Any thread. Cycles whose in-place writes were made durable by a flush of the disk's
  // cache (an fdatasync of the file in EngineOptions::flush_dir) instead of RWF_DSYNC.
  uint64_t cache_flushes() const { return cache_flushes_.load(std::memory_order_relaxed); }
  // Any thread. Bytes of zeros written ahead of the data (EngineOptions::zero_ahead_bytes).
  uint64_t zero_ahead_bytes() const { return zero_ahead_bytes_.load(std::memory_order_relaxed); }
  // Each append's time in the core, from Submit to its completion handed to the sink:
  // waiting in the ring and behind the cycle in flight, staging, the writes, the
  // publish. Beside write_latency() it tells a slow disk from a busy or descheduled
  // I/O thread.
  const LatencyHistogram& append_latency() const { return append_latency_; }
  // Any thread. Removals of retired segment files (or syncs of their directory) that
  // failed: each is retried at the next retention pass, a second later.
  uint64_t retention_remove_failures() const { return retention_remove_failures_.load(std::memory_order_relaxed); }
  // Any thread. Warnings of the I/O thread's background work (retention) since the
  // last call, oldest first: for the operator, who has no other way to hear of them.
  std::vector<std::string> TakeWarnings();
  // Any thread. Queues a warning for TakeWarnings (at most 64 held; past that, counted).
  void AddWarning(std::string w);

  // JS thread. False when the ring is full: the caller retries after completions.
  bool Submit(IoRequest&& r);
  // JS thread. Partitions the timers (interval sync, retention) look after.
  void Register(const std::shared_ptr<PartitionLog>& p);
  void Unregister(PartitionLog* p);
  // JS thread. Processes everything already submitted, syncs, joins the thread.
  void Stop();

 private:
  LogEngine(const EngineOptions& opts, Sink sink);
  void Run();
  void ProcessCycle(std::vector<IoRequest>& reqs);
  void RunTimers(bool force_sync);
  void SyncDirty();
  template <typename It>
  void SyncPartitions(It begin, It end);
  void Sleep(int timeout_ms);
  // One ZeroAhead step for one partition, at most every kZeroStepGapUs: true if it wrote.
  bool ZeroAheadStep();
  void PauseUntil(int64_t mono_us);
  void OpenFlushFile();
  void Wake(bool always);

  const EngineOptions opts_;
  Sink sink_;
  std::unique_ptr<IoBackend> backend_;
  std::string backend_note_;
  std::unique_ptr<PowerCutJournal> power_cut_;  // EngineOptions::test_power_cut; null when off
  SpscRing<IoRequest> ring_;
  int event_fd_ = -1;
  alignas(kCacheLine) std::atomic<bool> sleeping_{false};
  std::thread thread_;
  bool stopped_ = false;  // JS thread

  std::mutex registry_mu_;
  std::vector<std::shared_ptr<PartitionLog>> registry_;

  // I/O thread only.
  std::unordered_set<std::shared_ptr<PartitionLog>> dirty_;
  int64_t last_sync_ms_ = 0;
  int64_t last_retention_ms_ = 0;
  int64_t next_cycle_us_ = 0;  // when set, the earliest start of the next cycle (min_cycle_gap_us)
  std::atomic<uint64_t> sync_passes_{0};  // written by the I/O thread, read by any
  AlignedBuffer zeros_;       // ZeroAhead's source, allocated at its first use
  int64_t last_zero_us_ = 0;  // the last ZeroAheadStep that looked for work
  bool zero_pending_ = false; // that step wrote, or was due and skipped: there may be work
  size_t zero_cursor_ = 0;    // where in registry_ the next step starts looking
  std::atomic<uint64_t> zero_ahead_bytes_{0};  // written by the I/O thread, read by any
  std::string flush_path_;  // the file in EngineOptions::flush_dir (OpenFlushFile)
  std::string flush_note_;
  int flush_fd_ = -1;       // open for the engine's life
  uint64_t flush_dev_ = 0;  // its file system (st_dev)
  uint64_t flush_ino_ = 0;
  uint64_t inodes_per_block_ = 32;  // at most, in an inode table block of that file system
  std::atomic<uint64_t> cache_flushes_{0};  // written by the I/O thread, read by any
  LatencyHistogram write_latency_;   // recorded by the I/O thread, read by any
  LatencyHistogram append_latency_;  // recorded by the I/O thread, read by any
  std::atomic<uint64_t> retention_remove_failures_{0};  // written by the I/O thread, read by any
  // Bounded (kMaxWarnings): nobody may be taking them (an engine used without a broker).
  std::mutex warnings_mu_;
  std::vector<std::string> warnings_;
  uint64_t warnings_dropped_ = 0;
};

}  // namespace uringmq
