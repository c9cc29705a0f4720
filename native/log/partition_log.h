// One partition's log: a directory of segment files named by base offset
// (00000000000000000000.log + .index), appended with O_DIRECT from page-aligned
// staging buffers. Thread roles:
//  - the engine's I/O thread validates batches, assigns offsets, stages, writes,
//    syncs, rolls and deletes segments;
//  - the JS thread only sets `closed`;
//  - any thread (libuv pool for reads) reads whole batches under mu_.
// Durability rule: bytes below Segment::size are written (and, in sync mode,
// synced) and never change again, so readers may pread them without the lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "log/aligned_buffer.h"
#include "log/io_backend.h"
#include "log/record_batch.h"

namespace uringmq {

class PowerCutJournal;

struct PartitionConfig {
  std::string dir;    // must exist
  std::string label;  // "topic/partition", used in every error message
  // Which topic of that name this is (the broker's createdAt of the topic; 0: not
  // known). A topic deleted and made again under the same name has another one: the
  // fetch plane refuses a fetch that names another incarnation than this log's.
  uint64_t incarnation = 0;
  uint64_t segment_bytes = 128ull << 20;
  int64_t retention_bytes = -1;  // -1: unlimited
  int64_t retention_ms = -1;     // -1: unlimited
  uint32_t index_interval_bytes = 4096;
  size_t tail_cache_bytes = 1u << 20;
  uint64_t preallocate_bytes = 16ull << 20;  // fallocate step
  // Appends never take the file system's free space below this: the headroom the
  // broker's own small files (state, offsets, snapshots, new topics) and a restart
  // need when the data has filled the disk.
  uint64_t min_free_bytes = 64ull << 20;
  bool allow_direct = true;
  // Recovery checks every batch of the last segment from its start instead of resuming
  // at its newest index entry. For opens after a crash of a run without `sync`: a
  // power cut can lose any unsynced write of that segment, not only its tail, and the
  // index (written before the data is durable there) may point past the hole.
  bool full_scan = false;
};

// An idempotent producer's batch as the log holds it: what the broker's duplicate
// table needs to answer a retry of it after a restart (src/broker/idempotence.ts).
struct ProducerBatch {
  int64_t producer_id;
  int32_t base_sequence;
  uint32_t record_count;
  int64_t base_offset;
};

struct IndexEntry {
  uint32_t rel_offset;
  uint32_t position;
};

// A read-only descriptor of a segment's log file (buffered, pread only), closed when
// its last holder lets go: a reader keeps using its copy after retention deleted the
// segment or the bound on open files closed the segment's own reference.
struct ReadFd {
  explicit ReadFd(int f) : fd(f) {}
  ~ReadFd();
  ReadFd(const ReadFd&) = delete;
  ReadFd& operator=(const ReadFd&) = delete;
  const int fd;
};

// Sealed segments of one partition whose log file stays open between reads, at most
// (the least recently read of the rest are closed, and reopened when read again):
// without a bound, tiny segments with no retention ran the process out of fds.
inline constexpr size_t kMaxOpenSealedSegments = 32;

// A segment file pair. Shared between the I/O thread and readers through shared_ptr.
struct Segment {
  int64_t base_offset = 0;
  // For messages only. The files are opened, made and removed by name relative to the
  // partition's directory descriptor (PartitionLog::dir_fd_): deleteTopic renames the
  // directory into the trash, and a topic made again under the name has its own files
  // at these paths.
  std::string log_path;
  std::string index_path;
  std::string log_name;    // 00000000000000000000.log
  std::string index_name;  // 00000000000000000000.index
  int write_fd = -1;  // I/O thread only; closed when the segment is sealed
  // Guarded by PartitionLog::mu_ once the log is open; null while closed by the bound
  // above. The active segment's is never closed, so the I/O thread reads it unlocked.
  std::shared_ptr<ReadFd> file;
  // Guarded by PartitionLog::mu_:
  uint64_t last_read = 0;     // PartitionLog::read_clock_ at its last read
  uint64_t size = 0;          // readable (durable) bytes
  int64_t next_offset = 0;    // offset after the last readable batch
  int64_t last_write_ms = 0;  // wall time of the newest append (age retention)
  std::vector<IndexEntry> index;
  bool sealed = false;         // no writer touches its files again; its index ends with the seal entry
  bool index_scanned = false;  // RepairIndex ran on it (at most once per segment and open)
  uint64_t index_version = 0;  // bumped when RepairIndex changes `index`
  bool index_rewrite = false;  // repaired while unsealed: SealUnit writes the index file whole
  // FindNextReadable's last answer for a sealed segment, or one that found a readable
  // batch: the damaged batch's position, the next readable batch's position and base
  // offset, and the note.
  int64_t note_pos = -1;
  int64_t next_readable_pos = -1;
  int64_t next_readable_base = -1;
  std::string note;
  ~Segment();
};

struct PartitionInfo {
  int64_t start_offset;
  int64_t end_offset;  // readable end (next offset after the last durable batch)
  uint64_t bytes;
  uint32_t segments;
  bool direct_io;
  uint32_t block_size;
  uint64_t cached_bytes;  // the tail cache's bytes now
};

// A fetch response planned for the zero-copy fetch plane (native/fetch): whole
// batches from an offset, as pieces to send in order. A file piece lies below its
// segment's stable end — bytes that no writer touches again, not even by rewriting
// the page they sit in — so it may go out by splice/sendfile, which keeps page-cache
// pages pinned until the peer has read them. A memory piece is a copy: batches from
// the tail cache (recent data, which O_DIRECT writes left out of the page cache), or
// the last partial block of a segment, which the appender rewrites every cycle: a
// pinned page there would make the O_DIRECT write's page-cache invalidation fail,
// which the kernel reports as EIO on the next fdatasync of the file.
struct FetchPiece {
  std::shared_ptr<ReadFd> file;  // null for a memory piece
  int64_t pos = 0;               // file piece: byte position in the segment
  uint64_t len = 0;              // file piece: byte count
  std::vector<uint8_t> bytes;    // memory piece
  uint64_t size() const { return file ? len : bytes.size(); }
};

struct FetchPlan {
  std::vector<FetchPiece> pieces;
  uint64_t bytes = 0;         // total of all pieces
  uint64_t memory_bytes = 0;  // of which memory pieces
  int64_t start_offset = 0;   // log start when planned
  int64_t end_offset = 0;     // high watermark (readable end) when planned
};

class PartitionLog {
 public:
  // Opens or creates the log in cfg.dir and recovers it: finds each segment's end by
  // validating batches from its last good index entry, truncates a torn tail, drops
  // segments after a gap, rebuilds a missing or corrupt index.
  static Status Open(const PartitionConfig& cfg, std::shared_ptr<PartitionLog>* out);
  ~PartitionLog();
  PartitionLog(const PartitionLog&) = delete;
  PartitionLog& operator=(const PartitionLog&) = delete;

  const std::string& label() const { return cfg_.label; }
  uint64_t incarnation() const { return cfg_.incarnation; }

  // --- JS thread ---
  std::atomic<bool> closed{false};  // no more appends accepted
  std::atomic<bool> failed{false};  // an I/O error fenced this partition
  // I/O thread: a batch was refused for want of space (kResourceExhausted), and every
  // later one is refused with the same error until a resume request comes through the
  // ring (IoRequest::resume): batches queued behind the refused one are not written
  // ahead of it, which a producer's retry of it could then never follow in order.
  bool space_refused = false;
  Status space_refusal;
  std::string FailureMessage();

  // --- I/O thread ---
  // Copies one batch into the staging buffer (rolling to a new segment first if it
  // would not fit), validates it there (CRC verified, or computed for kSeal), and
  // stamps the next offset. Its disk space is reserved first (fallocate), so a full
  // disk refuses the batch alone. A kCorruptBatch result (or kOffsetOutOfRange:
  // offsets would pass 2^53 - 1, or kResourceExhausted: no space for it) leaves the
  // log as it was and consumes no offset; any other error means the partition must
  // be failed.
  Status Stage(const uint8_t* data, size_t len, CrcMode mode, int64_t* base_out);
  bool HasStaged() const;
  // Preallocates as needed and appends one write per staged segment.
  Status CollectWrites(std::vector<IoOp>* writes);
  // The fds that hold written-but-unsynced data.
  void CollectSyncs(std::vector<IoOp>* syncs);
  // Everything written so far is durable, with the metadata to read it back (after
  // RWF_DSYNC writes, or an fdatasync of each file).
  void MarkSynced();
  bool dirty() const { return dirty_; }
  // After writes (and syncs) succeeded: make the staged batches readable, extend the
  // index, fill the tail cache, seal rolled segments.
  Status Publish(int64_t now_ms);
  // After a failed write or sync: fence the partition. Nothing staged becomes readable.
  // What earlier cycles wrote and acknowledged but no sync has yet covered (durability
  // none or interval) is synced first, and a failure of that sync is added to the
  // fence's message.
  void Fail(const Status& s);
  // Between cycles (when the ring is empty, or in the group commit pause): writes
  // zeros over the next blocks of the active segment's preallocated space (at most
  // max_step bytes, never past `ahead` beyond its data) and syncs them. fallocate leaves
  // extents unwritten, and a durable write into one must also write the conversion (on
  // ext4 the extent tree, by a journal commit where the file system has a journal) in
  // every cycle that enters a new block. Over zeros such a cycle is one data write and a
  // flush (PostgreSQL's wal_init_zero does the same for its WAL). Only for a partition
  // written within the last second in cycles of at most 32 KiB on average; `zeros` is
  // aligned for O_DIRECT and holds max_step zero bytes. Returns the bytes written; an
  // I/O error fences.
  // `power_cut`: the engine's test hook (EngineOptions::test_power_cut), or null.
  size_t ZeroAhead(const uint8_t* zeros, size_t max_step, size_t ahead, int64_t now_mono_ms, PowerCutJournal* power_cut = nullptr);
  // What a retention pass could not remove (RemoveRetired): the removals that failed
  // (each is retried at the next pass, a second later), and a warning for the operator,
  // set only when a file (or the directory's sync) first stays, not at every retry.
  struct RemovalTrouble {
    uint32_t failures = 0;
    std::string warning;
  };
  // Deletes whole sealed segments past the retention limits.
  void EnforceRetention(int64_t now_ms, RemovalTrouble* trouble);
  // What Open had to leave as it was (an orphan index it could not remove), for the
  // operator; empty after the first call. JS thread, before the partition is registered.
  std::vector<std::string> TakeOpenWarnings() { return std::move(open_warnings_); }
  // Returns a burst's staging memory once the partition has been idle for a while.
  void ReleaseIdleMemory(int64_t now_ms);

  // --- any thread ---
  // Whole batches from the one holding `offset`: at least one, then more while the
  // total stays within max_bytes. Read() returns them in *out.
  Status Read(int64_t offset, size_t max_bytes, std::vector<uint8_t>* out);
  // The same into dest[0, cap) when they fit (*in_dest; *len bytes), else into *big.
  // From the file: one pread straight into the destination when it holds the read's
  // window (ReadWindowBytes), which only a first batch larger than max_bytes outgrows.
  Status ReadInto(int64_t offset, size_t max_bytes, uint8_t* dest, size_t cap, size_t* len, std::vector<uint8_t>* big, bool* in_dest);
  // What a read of max_bytes from the file preads at most in one go (its first batch
  // aside): the answer, and the batches before `offset` back to its index entry.
  size_t ReadWindowBytes(size_t max_bytes) const { return max_bytes + cfg_.index_interval_bytes + batch::kHeaderSize; }
  // Serves the read from the tail cache when it holds `offset`; false otherwise (the
  // caller then does a Read() off the JS thread). Cheap enough for the JS thread.
  bool TryReadCached(int64_t offset, size_t max_bytes, std::vector<uint8_t>* out);
  // The tail cache's bound from now on (at open: PartitionConfig::tail_cache_bytes),
  // dropping its oldest chunks down to it now: the broker shares one budget over all
  // partitions, and a partition no longer written must give back what it holds when
  // its share shrinks, not at its next append.
  void SetTailCacheBytes(size_t n);
  PartitionInfo Info();
  // Start and end offsets only: what a delivery loop asks for every time it looks for data.
  void Offsets(int64_t* start, int64_t* end);
  // Plans the response to a fetch at `offset`: whole batches, at least one, then more
  // while the total stays within max_bytes: from the file, within the segment that
  // holds `offset` (a reply holds one file open); from the tail cache, across segment
  // boundaries. Never a byte at or past the readable end. Copies from the tail cache only while the copy fits
  // in memory_limit (else the file serves it). kOffsetOutOfRange outside
  // [start, end]; an empty plan at the end. Batch CRCs are not checked here: the
  // bytes never pass through this process (the client checks them).
  Status PlanFetch(int64_t offset, size_t max_bytes, size_t memory_limit, FetchPlan* out);
  // The idempotent batches (producer id > 0, sequence >= 0) among the newest
  // max_bytes of the log, oldest first: the newest per_producer of each producer,
  // at most max_entries in all. Reads from the index entry at or before where the
  // window starts (up to one index interval and one batch more), across segment
  // boundaries, and checks each such batch's CRC. A bad batch or an unreadable file
  // ends the walk of its segment and drops what was found before it (the result is
  // always a gapless newest part of the log); the error is returned.
  // With from_offset >= 0 the walk covers every batch that ends after from_offset
  // instead of a byte window (the broker's producer-state snapshot holds the rest),
  // unless that is more than max_bytes: then it walks the newest max_bytes and says
  // so in the returned error (what came before is not known).
  Status RecentProducerBatches(uint64_t max_bytes, int64_t from_offset, size_t max_entries, size_t per_producer,
                               std::vector<ProducerBatch>* out);

 private:
  explicit PartitionLog(const PartitionConfig& cfg) : cfg_(cfg), cache_cap_(cfg.tail_cache_bytes) {}

  // A segment being appended to, with its staging buffer. buf[0, len) mirrors the file
  // from file_pos (block aligned); buf[0, cycle_start) was already written before.
  struct WriteUnit {
    std::shared_ptr<Segment> seg;
    AlignedBuffer buf;
    size_t len = 0;
    size_t cycle_start = 0;
    int64_t file_pos = 0;
    int64_t allocated = 0;  // bytes preallocated in the file
    // Blocks below this are written (data, or zeros by ZeroAhead): a write there
    // converts no unwritten extent, so it costs the file system no metadata.
    int64_t zeroed = 0;
    // Blocks below this are written and inside the file's size, durably (data written
    // with RWF_DSYNC or synced, zeros synced): an overwrite there needs no metadata to
    // read back after a crash, only the disk's write cache flushed (IoOp::in_place).
    int64_t durable_end = 0;
    int64_t written_end = 0;  // the end of the blocks written so far, durable or not
    // The file system overwrites this file's blocks in place, and its writes bypass the
    // page cache (OverwritesInPlace): what durable_end promises holds here.
    bool in_place = false;
    uint64_t dev = 0;  // st_dev of the file
    uint64_t ino = 0;
    bool zeroing = false;         // ZeroAhead wrote in this segment since it last backed off
    int64_t zero_resume_ms = 0;   // ZeroAhead backs off until then (steady clock; the writer overtook it)
    int64_t next_offset = 0;
    int64_t cycle_first_offset = 0;
    uint32_t last_index_pos = 0;
    std::vector<IndexEntry> pending_index;
    size_t index_entries_written = 0;
    uint32_t small_cycles = 0;  // consecutive cycles that used < 1/8 of buf
    int index_fd = -1;  // buffered appends of index entries
  };

  // next_base >= 0: a later segment was sealed, so this one holds everything up to
  // next_base. next_file: the next segment file's base (-1 for the last). *whole: the
  // segment was sealed (by its own seal entry or next_base).
  Status RecoverSegment(Segment* seg, bool full_scan, bool last, int64_t next_base, int64_t next_file, bool* whole);
  // Creates the segment's files with first_bytes of its log (and its whole index)
  // reserved beyond their end (FALLOC_FL_KEEP_SIZE): opening it as the active segment
  // then writes into space it holds. Out of space: kResourceExhausted, and no file of
  // it is left behind.
  Status CreateSegment(int64_t base, uint64_t first_bytes, std::shared_ptr<Segment>* out);
  // Preallocates u's file up to at least `end` (in steps of preallocate_bytes, or only
  // to `end` when a step does not fit): kResourceExhausted when even that does not.
  Status Reserve(WriteUnit& u, int64_t end);
  // Would taking `bytes` more of the file system holding fd leave it min_free_bytes?
  // No: *fits false and a kResourceExhausted that says so.
  Status Headroom(int fd, const std::string& path, uint64_t bytes, const std::string& what, bool* fits) const;
  // The kResourceExhausted for a file system that refused space (ENOSPC, EDQUOT).
  Status NoSpace(const std::string& path, const std::string& what, int err) const;
  // The bytes a segment's index file can grow to: an entry per index interval, the
  // seal entry, and one for a batch larger than the segment.
  uint64_t MaxIndexBytes() const;
  Status OpenActive(std::shared_ptr<Segment> seg);
  Status SealUnit(WriteUnit* u);
  // After a read found no batch (or the wrong one) where an index entry of seg points:
  // the entry may be wrong (the index is a hint, outside any checksum) rather than the
  // data damaged. Rebuilds seg's index from a walk of its batch headers from the start
  // (which needs no index), up to the first damage; true when that changed the index,
  // so the read is worth retrying. Reads and the fetch planner call it (any thread).
  // seen_version: seg->index_version when the caller located its read; a repair by
  // another reader since then also answers true.
  bool RepairIndex(const std::shared_ptr<Segment>& seg, uint64_t seen_version);
  // With mu_ not held: writes a sealed segment's repaired index (and seal entry) to a
  // temporary file and renames it over the old one. A failure leaves the old file: the
  // repaired copy in memory serves reads meanwhile, and the next open is no worse.
  void PersistRepairedIndex(const std::shared_ptr<Segment>& seg, std::vector<IndexEntry> entries);
  // Where a read of a segment file went wrong: for the retry after RepairIndex, and
  // for FindNextReadable.
  struct ReadTrace {
    std::shared_ptr<Segment> seg;
    int64_t entry_pos = -1;  // the index entry's position the read started from; -1: not the file
    uint64_t version = 0;    // seg->index_version then
    int64_t bad_pos = -1;    // the byte where the batch that failed starts
    int64_t bad_base = -1;   // the base offset the batch there has, or had to have
    // In: start at this batch (byte, base offset) of seg instead, when it lies past the
    // index entry: the next readable batch after damage the walk cannot cross.
    int64_t resume_pos = -1;
    int64_t resume_base = -1;
  };
  Status ReadIntoOnce(int64_t offset, size_t max_bytes, uint8_t* dest, size_t cap, size_t* len, std::vector<uint8_t>* big,
                      bool* in_dest, ReadTrace* tr);
  Status PlanFetchOnce(int64_t offset, size_t max_bytes, size_t memory_limit, FetchPlan* out, ReadTrace* tr);
  // After a read stopped at a damaged batch: where reading can go on, found by looking
  // past it for the next batch whose header and CRC check out and which the batch
  // after it follows (its length and base offset lie outside the CRC, so neither can
  // be trusted to skip it). Sets *pos and *base (-1: none) and returns the note for
  // the error: what a group is moved on to with commitOffset, and where reads of
  // later offsets resume.
  std::string FindNextReadable(const ReadTrace& tr, int64_t* pos, int64_t* base);
  // A read (once: ReadIntoOnce or PlanFetchOnce) that failed with s at a damaged batch:
  // when `offset` lies past it, read again from the next readable batch (a few times,
  // for damage after damage); else s, with FindNextReadable's note.
  Status ReadPastDamage(int64_t offset, Status s, ReadTrace tr, const std::function<Status(ReadTrace*)>& once);
  Status ReadFromCache(int64_t offset, size_t max_bytes, std::vector<uint8_t>* out);
  // With mu_ held: the error for an offset outside [start, end].
  Status OutOfRangeLocked(int64_t offset) const;
  // With mu_ held: the segment holding `offset` (which must be in range) and the file
  // position of the last sparse-index entry at or before it, where a scan starts.
  // *base_at, when given: the base offset the batch at that position must have.
  int64_t LocateLocked(int64_t offset, std::shared_ptr<Segment>* seg, int64_t* base_at = nullptr) const;
  // With mu_ held (or while Open() runs alone): seg's read descriptor, opened if the
  // bound closed it, and counted as read now; closes the least recently read sealed
  // segment's when more than kMaxOpenSealedSegments are open.
  Status FileLocked(Segment* seg, std::shared_ptr<ReadFd>* out);
  // With mu_ held: closes sealed segments' files, least recently read first, down to
  // kMaxOpenSealedSegments (sealing the active segment adds one).
  void CloseLeastReadLocked();
  void AddToCache(int64_t first, int64_t next, const uint8_t* p, size_t n);
  void TrimCacheLocked();  // mu_ held: drops the oldest chunks down to cache_cap_
  void RemoveRetired(RemovalTrouble* trouble);
  // Takes the sealed segments past the retention limits out of the log and queues their
  // files' names for RemoveRetired.
  void RetireSegments(int64_t now_ms);
  // fsync of the partition's directory (through dir_fd_): 0 or errno.
  int SyncDir() const;
  // The names of base's segment files, in seg (and their paths, for messages).
  void NameSegment(Segment* seg, int64_t base) const;
  uint64_t AlignDown(uint64_t v) const { return v & ~static_cast<uint64_t>(block_ - 1); }
  uint64_t AlignUp(uint64_t v) const { return AlignDown(v + block_ - 1); }

  const PartitionConfig cfg_;
  // cfg_.dir, open from Open() to the destructor. Every file of the log is reached
  // through it (openat, unlinkat, renameat), never by its path after Open: a retention
  // pass or a read still running when deleteTopic renames the directory into the trash
  // follows it there, instead of reaching the files of a topic made again under the
  // same name at the same paths (which it would delete, or serve as this log's).
  int dir_fd_ = -1;
  // Set by the I/O thread when it opens an active segment; read by Info() (JS thread)
  // and PlanFetch() (fetch thread) too, hence atomics.
  std::atomic<bool> direct_{false};
  std::atomic<uint32_t> block_{4096};
  std::atomic<uint32_t> mem_align_{4096};

  // I/O thread state.
  std::vector<std::string> unlink_retry_;  // names of retired segment files not yet removed
  bool dir_sync_pending_ = false;
  // What RemoveRetired's last warning was about while it keeps failing (a file's name,
  // or "." for the directory's sync); emptied by a pass that fails nothing.
  std::string removal_warned_;
  std::vector<std::string> open_warnings_;  // see TakeOpenWarnings
  WriteUnit active_;
  int64_t next_offset_ = 0;  // next offset to assign
  std::vector<WriteUnit> sealing_;
  // Segments whose seal failed in this cycle's Publish, until the Fail() that follows
  // it in the same cycle syncs what they hold (at most the segments rolled in a cycle).
  std::vector<std::shared_ptr<Segment>> failed_seals_;
  bool dirty_ = false;  // written since the last sync pass
  // Batches made readable (so acknowledged) since the last sync pass: what Fail() syncs.
  bool acked_unsynced_ = false;
  int64_t last_publish_ms_ = 0;
  int64_t last_publish_mono_ms_ = 0;  // the same on the steady clock (ZeroAhead's timers)
  // Write cycles that carried data, and their bytes, since ZeroAhead last looked: it
  // zeroes only for small cycles, the only ones it makes cheaper by more than it costs.
  uint64_t cycles_since_zero_ = 0;
  uint64_t bytes_since_zero_ = 0;
  bool small_cycles_ = true;  // ZeroAhead's last verdict on them

  // One RepairIndex at a time (taken before mu_): a reader that met a wrong entry while
  // another reader repaired the index waits for that repair, then retries.
  std::mutex repair_mu_;
  std::mutex mu_;  // guards everything below and the mutable fields of Segment
  std::vector<std::shared_ptr<Segment>> segments_;
  uint64_t read_clock_ = 0;  // counts FileLocked calls: the LRU order of open segments
  int64_t start_offset_ = 0;
  int64_t durable_next_ = 0;
  struct CacheChunk {
    int64_t first_offset;
    int64_t next_offset;
    std::vector<uint8_t> bytes;
  };
  // What a chunk of n bytes costs the cache's bound: its bytes, its deque slot and its
  // allocation's header. At 10k msgs/s a chunk is one small batch, and counting the
  // bytes alone let a 1 MiB cache hold about 1.6 MiB.
  static size_t CacheCost(size_t n) { return n + sizeof(CacheChunk) + 16; }
  std::deque<CacheChunk> cache_;
  size_t cache_bytes_ = 0;  // CacheCost of the chunks held
  size_t cache_cap_;  // SetTailCacheBytes; never above cfg_.tail_cache_bytes
  std::string failure_;
};

}  // namespace uringmq
