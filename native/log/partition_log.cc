#include "log/partition_log.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <unordered_map>

#include "common/clock.h"
#include "log/crc32c.h"
#include "log/file_util.h"
#include "log/power_cut.h"

namespace uringmq {
namespace {

// Whether a write over blocks of fd's file that are already written, inside its size,
// needs no metadata to be read back after a crash, only the disk's write cache flushed:
// ext4, which overwrites in place (no copy-on-write, no shared extents), with direct
// I/O that really goes around the page cache. ext4 reports no direct-I/O alignment for
// a file whose data it journals (data=journal, chattr +j), encrypts without direct-I/O
// support or verifies (verity): there O_DIRECT quietly becomes buffered, and a flush of
// the disk would leave the data in memory. DAX files skip the block layer's cache flushes.
// XFS overwrites in place too, but a reflinked copy of a data dir would share extents,
// and an overwrite of one is a copy-on-write whose new mapping needs its metadata synced.
bool OverwritesInPlace(int fd) {
  constexpr decltype(statfs::f_type) kExt4Magic = 0xEF53;
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0 || fs.f_type != kExt4Magic) return false;
#ifdef STATX_DIOALIGN
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) != 0) return false;
  if (!(stx.stx_mask & STATX_DIOALIGN) || stx.stx_dio_offset_align == 0 || stx.stx_dio_mem_align == 0) return false;
#ifdef STATX_ATTR_DAX
  if ((stx.stx_attributes_mask & STATX_ATTR_DAX) && (stx.stx_attributes & STATX_ATTR_DAX)) return false;
#endif
  return true;
#else
  return false;  // cannot tell whether direct I/O is real
#endif
}

Status Discontinuous(const std::string& path, int64_t pos, int64_t got, int64_t want) {
  // The base offset and the length lie outside the CRC (FORMAT.md), and the index is a
  // hint: a batch that does not follow the one before it (or start where the index
  // entry says) means one of them is damaged. Its records' offsets cannot be trusted.
  return Status::Error(Code::kCorruptBatch, "batch at byte " + std::to_string(pos) + " of " + path + " has base offset " +
                                                std::to_string(got) + " where " + std::to_string(want) +
                                                " was expected (a damaged batch header or index entry)");
}

constexpr int64_t kMaxOffset = (int64_t{1} << 53) - 1;
// ZeroAhead's bound on the mean bytes of a partition's write cycles (see there).
constexpr uint64_t kZeroMaxMeanCycleBytes = 32u << 10;

bool ParseSegmentName(const char* name, int64_t* base, const char* ext = ".log") {
  // exactly 20 digits + ext
  size_t n = std::strlen(name);
  if (n != 20 + std::strlen(ext) || std::strcmp(name + 20, ext) != 0) return false;
  int64_t v = 0;
  for (int i = 0; i < 20; i++) {
    if (name[i] < '0' || name[i] > '9') return false;
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (name[i] - '0');
  }
  *base = v;
  return true;
}

// The seal entry case of IsSealEntry (below) for a file cut short since its seal (or
// emptied: then the open may have rewritten the entry as {next - base, 0}).
bool IsSealOfShortFile(const IndexEntry& e, const IndexEntry* prev, int64_t base, int64_t size, int64_t next_file) {
  return next_file >= 0 && static_cast<int64_t>(e.position) >= size && base + static_cast<int64_t>(e.rel_offset) == next_file &&
         (!prev || (e.rel_offset > prev->rel_offset && e.position > prev->position));
}

// Whether an index's last entry e (the one before it: prev, if any) is the seal entry
// of a segment with base offset `base`, log file size `size` and the next segment file
// at `next_file` (-1: none). A seal entry is {next_offset - base, size}: no other entry
// points at the end of the file (entries point at batches). Nor does any other name the
// next segment's base offset (entries name batches of this segment, all before it):
// an entry that does and points past the end of the file is the seal entry of a sealed
// segment whose file lost its end afterwards (damaged, cut short by hand or by a copy),
// not of one whose seal never came. That damage is not a torn tail: taken for one, the
// open cut the segment there and deleted the segments after it, the active one with
// its acknowledged records.
bool IsSealEntry(const IndexEntry& e, const IndexEntry* prev, int64_t base, int64_t size, int64_t next_file) {
  if (prev && e.rel_offset <= prev->rel_offset) return false;
  if (size > 0 && static_cast<int64_t>(e.position) == size) return true;
  return IsSealOfShortFile(e, prev, base, size, next_file);
}

// Whether a segment's index ends with its seal entry (IsSealEntry), which SealUnit
// writes and syncs only once the segment's data is durable and its file cut to its
// size. The seal entry stays a valid entry if the file grows again.
// A file that cannot be read (EIO, EMFILE, EACCES) is an error, not "no seal": taken
// for an unsealed segment, the open would cut acknowledged records at a torn tail that
// is not there. Only a file that is not there, or an index that does not end in a
// whole entry, means no seal.
Status HasSealEntry(const std::string& log_path, const std::string& index_path, int64_t base, int64_t next_file,
                    bool* sealed) {
  *sealed = false;
  struct stat st;
  if (stat(log_path.c_str(), &st) != 0) return errno == ENOENT ? Status::Ok() : SysError("stat", log_path, -1, errno);
  int fd = open(index_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? Status::Ok() : SysError("open", index_path, -1, errno);
  struct stat ist;
  if (fstat(fd, &ist) != 0) {
    const int err = errno;
    close(fd);
    return SysError("fstat", index_path, -1, err);
  }
  IndexEntry e[2]{};
  if (ist.st_size < static_cast<off_t>(sizeof e[0]) || ist.st_size % sizeof e[0] != 0) {
    close(fd);
    return Status::Ok();
  }
  const size_t n = ist.st_size >= static_cast<off_t>(sizeof e) ? 2 : 1;
  const off_t at = ist.st_size - static_cast<off_t>(n * sizeof e[0]);
  size_t got = 0;
  const int err = PreadAll(fd, reinterpret_cast<uint8_t*>(e), n * sizeof e[0], at, &got);
  close(fd);
  if (err != 0) return SysError("pread", index_path, at, err);
  // (The entry before it is not checked for the seal at the end of the file: counted
  // sealed, a segment protects those before it from being cut.)
  *sealed = got == n * sizeof e[0] && ((st.st_size > 0 && static_cast<off_t>(e[n - 1].position) == st.st_size) ||
                                       IsSealOfShortFile(e[n - 1], n == 2 ? &e[0] : nullptr, base, st.st_size, next_file));
  return Status::Ok();
}

// Retention by age takes a segment's last write from its file's mtime when the log is
// reopened. The cuts of its preallocation (at its seal, which comes with the next
// segment's first batch, maybe days later, and at an open) and the open's probe of its
// tail block are no writes of data: each puts the mtime back. Best effort: a failure
// only keeps the segment longer.
struct MtimeOnly {
  struct timespec ts[2];
  explicit MtimeOnly(int64_t ms) {
    ts[0].tv_sec = 0;
    ts[0].tv_nsec = UTIME_OMIT;
    ts[1].tv_sec = static_cast<time_t>(ms / 1000);
    ts[1].tv_nsec = static_cast<long>(ms % 1000) * 1000000;
  }
};
void KeepMtime(int fd, int64_t last_write_ms) { (void)futimens(fd, MtimeOnly(last_write_ms).ts); }
void KeepMtime(const std::string& path, int64_t last_write_ms) { (void)utimensat(AT_FDCWD, path.c_str(), MtimeOnly(last_write_ms).ts, 0); }

}  // namespace

ReadFd::~ReadFd() {
  if (fd >= 0) close(fd);
}

Segment::~Segment() {
  if (write_fd >= 0) close(write_fd);
}

Status PartitionLog::FileLocked(Segment* seg, std::shared_ptr<ReadFd>* out) {
  seg->last_read = ++read_clock_;
  if (!seg->file) {
    int fd = openat(dir_fd_, seg->log_name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return SysError("open", seg->log_path, -1, errno);
    seg->file = std::make_shared<ReadFd>(fd);
    CloseLeastReadLocked();
  }
  *out = seg->file;
  return Status::Ok();
}

void PartitionLog::CloseLeastReadLocked() {
  // The active (last) segment is never closed: the I/O thread reads it unlocked. The
  // one just read has the newest last_read, so it is never the one closed.
  for (;;) {
    size_t open_sealed = 0;
    Segment* lru = nullptr;
    for (size_t i = 0; i + 1 < segments_.size(); i++) {
      Segment* s = segments_[i].get();
      if (!s->file) continue;
      open_sealed++;
      if (!lru || s->last_read < lru->last_read) lru = s;
    }
    if (open_sealed <= kMaxOpenSealedSegments || !lru) return;
    lru->file.reset();
  }
}

PartitionLog::~PartitionLog() {
  if (dir_fd_ >= 0) close(dir_fd_);
  if (active_.index_fd >= 0) close(active_.index_fd);
  for (auto& u : sealing_)
    if (u.index_fd >= 0) close(u.index_fd);
}

std::string PartitionLog::FailureMessage() {
  std::lock_guard<std::mutex> lk(mu_);
  return failure_;
}

Status PartitionLog::Open(const PartitionConfig& cfg, std::shared_ptr<PartitionLog>* out) {
  std::shared_ptr<PartitionLog> log(new PartitionLog(cfg));
  log->dir_fd_ = open(cfg.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (log->dir_fd_ < 0) return SysError("open", cfg.dir, -1, errno);
  DIR* d = opendir(cfg.dir.c_str());
  if (!d) return SysError("opendir", cfg.dir, -1, errno);
  std::vector<int64_t> bases;
  std::vector<std::string> stale;  // RepairIndex's temporary files a crash left behind
  std::vector<int64_t> index_bases;
  while (dirent* e = readdir(d)) {
    int64_t b;
    const size_t n = std::strlen(e->d_name);
    if (n == 30 && std::strcmp(e->d_name + 20, ".index.tmp") == 0) stale.push_back(cfg.dir + "/" + e->d_name);
    if (ParseSegmentName(e->d_name, &b, ".index")) index_bases.push_back(b);
    if (!ParseSegmentName(e->d_name, &b)) continue;
    // Offsets stay below 2^53 (JavaScript numbers); a file named past it was not written
    // by the broker, and appending after it would overflow.
    if (b > kMaxOffset) {
      const std::string name = e->d_name;  // e points into d's buffer, which closedir frees
      closedir(d);
      return Status::Error(Code::kIoError, "partition " + cfg.label + ": segment file " + name + " in " + cfg.dir +
                                               " names an offset past 2^53 - 1, the largest a broker writes (not a file of this broker?)");
    }
    bases.push_back(b);
  }
  closedir(d);
  std::sort(bases.begin(), bases.end());
  for (const std::string& t : stale)
    if (unlink(t.c_str()) != 0 && errno != ENOENT) return SysError("unlink", t, -1, errno);
  // Retention removes a segment's .log, then its .index: a crash between the two leaves
  // an index older than every segment, which no later removal would ever name again.
  // Garbage, read by nothing (no segment will start there again): one that cannot be
  // removed is said and left, not a reason to refuse the partition (it did, whatever
  // the cause: a directory of that name, a file made immutable).
  bool orphans = false;
  for (int64_t b : index_bases) {
    if (bases.empty() || b >= bases.front()) continue;
    const std::string ip = cfg.dir + "/" + SegmentFileName(b, ".index");
    if (unlink(ip.c_str()) == 0) {
      orphans = true;
    } else if (const int e = errno; e != ENOENT) {
      log->open_warnings_.push_back(cfg.label + ": cannot remove the index of a segment retention removed (its .log is gone): " +
                                    SysError("unlink", ip, -1, e).message +
                                    "; left as it is (nothing reads it), tried again at the next open");
    }
  }
  if (orphans) {
    int rc = FsyncDir(cfg.dir);
    if (rc) return SysError("fsync directory", cfg.dir, -1, rc);
  }

  if (bases.empty()) {
    std::shared_ptr<Segment> seg;
    Status s = log->CreateSegment(0, 0, &seg);
    if (!s.ok()) return s;
    log->segments_.push_back(seg);
  } else {
    // sealed_after[i]: a segment after i was sealed, so i was sealed before it (seals
    // run in order) and holds all its data: damage in it is not a torn tail.
    std::vector<bool> sealed_after(bases.size(), false);
    for (size_t i = bases.size(); i-- > 1;) {
      bool sealed = sealed_after[i];
      if (!sealed) {
        Status s = HasSealEntry(cfg.dir + "/" + SegmentFileName(bases[i], ".log"), cfg.dir + "/" + SegmentFileName(bases[i], ".index"),
                                bases[i], i + 1 < bases.size() ? bases[i + 1] : -1, &sealed);
        if (!s.ok()) return s;
      }
      sealed_after[i - 1] = sealed;
    }
    int64_t expected = -1;
    bool prev_whole = false;
    size_t keep = bases.size();
    for (size_t i = 0; i < bases.size(); i++) {
      if (expected >= 0 && bases[i] != expected) {
        if (prev_whole)
          return Status::Error(Code::kIoError, "partition " + cfg.label + ": segment files do not follow one another: " +
                                                   SegmentFileName(bases[i - 1], ".log") + " was sealed ending at offset " +
                                                   std::to_string(expected) + ", but the next file is " +
                                                   SegmentFileName(bases[i], ".log") + " (in " + cfg.dir +
                                                   "; a file removed or added by hand?). Nothing was changed: restore the "
                                                   "missing segment, or move the files from the gap on out of the directory");
        // A gap after a segment whose seal never completed: its tail was torn while a
        // later segment, created in the same cycle, got data. Nothing past the gap was
        // ever acknowledged (acks follow the sync of every segment written in a cycle,
        // and the seal), so drop it to keep offsets contiguous.
        keep = i;
        break;
      }
      auto seg = std::make_shared<Segment>();
      log->NameSegment(seg.get(), bases[i]);
      int fd = open(seg->log_path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return SysError("open", seg->log_path, -1, errno);
      seg->file = std::make_shared<ReadFd>(fd);
      const bool last = i + 1 == bases.size();
      bool whole = false;
      // A full scan (a crash of a run without sync) for every segment not known to be
      // sealed: the last, and one whose roll the crash interrupted (RecoverSegment
      // skips it for a segment with its own seal entry).
      Status s = log->RecoverSegment(seg.get(), cfg.full_scan && !sealed_after[i], last, sealed_after[i] ? bases[i + 1] : -1,
                                     last ? -1 : bases[i + 1], &whole);
      if (!s.ok()) return s;
      prev_whole = whole;
      // Reopened when read: a log of many segments must not open them all at once.
      if (i + 1 < bases.size()) seg->file.reset();
      seg->sealed = i + 1 < bases.size();  // the last kept one becomes active again below
      expected = seg->next_offset;
      log->segments_.push_back(seg);
    }
    for (size_t i = keep; i < bases.size(); i++) {
      std::string lp = cfg.dir + "/" + SegmentFileName(bases[i], ".log");
      std::string ip = cfg.dir + "/" + SegmentFileName(bases[i], ".index");
      if (unlink(lp.c_str()) != 0 && errno != ENOENT) return SysError("unlink", lp, -1, errno);
      if (unlink(ip.c_str()) != 0 && errno != ENOENT) return SysError("unlink", ip, -1, errno);
    }
    if (keep < bases.size()) {
      int rc = FsyncDir(cfg.dir);
      if (rc) return SysError("fsync directory", cfg.dir, -1, rc);
    }
    // Sealed segments keep exactly their data: trim preallocation a crash left behind.
    for (size_t i = 0; i + 1 < log->segments_.size(); i++) {
      Segment* seg = log->segments_[i].get();
      struct stat st;
      if (stat(seg->log_path.c_str(), &st) != 0) return SysError("stat", seg->log_path, -1, errno);
      if (static_cast<uint64_t>(st.st_size) > seg->size) {
        if (truncate(seg->log_path.c_str(), static_cast<off_t>(seg->size)) != 0)
          return SysError("truncate", seg->log_path, static_cast<long long>(seg->size), errno);
        KeepMtime(seg->log_path, seg->last_write_ms);
      }
    }
  }
  // The segment before a gap becomes the active one, and its file was closed above.
  std::shared_ptr<ReadFd> active_file;
  Status s = log->FileLocked(log->segments_.back().get(), &active_file);
  if (!s.ok()) return s;
  log->segments_.back()->sealed = false;
  s = log->OpenActive(log->segments_.back());
  if (!s.ok()) return s;
  log->start_offset_ = log->segments_.front()->base_offset;
  log->durable_next_ = log->segments_.back()->next_offset;
  log->next_offset_ = log->durable_next_;
  *out = std::move(log);
  return Status::Ok();
}

Status PartitionLog::RecoverSegment(Segment* seg, bool full_scan, bool last, int64_t next_base, int64_t next_file,
                                    bool* whole) {
  *whole = false;
  struct stat st;
  if (fstat(seg->file->fd, &st) != 0) return SysError("fstat", seg->log_path, -1, errno);
  const int64_t file_size = st.st_size;
  seg->last_write_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;

  // Load the index; anything non-monotonic or out of range means it is corrupt and
  // gets rebuilt from the log, which is the source of truth.
  std::vector<IndexEntry> idx;
  bool index_dirty = false;
  // An index that is there but cannot be read (EIO, EMFILE) is an error, not one to
  // rebuild: rebuilt, its seal entry would be lost, and a sealed segment taken for one
  // whose tail was torn.
  int ifd = open(seg->index_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ifd >= 0) {
    struct stat ist;
    if (fstat(ifd, &ist) != 0) {
      const int e = errno;
      close(ifd);
      return SysError("fstat", seg->index_path, -1, e);
    }
    if (ist.st_size > 0) {
      size_t n = static_cast<size_t>(ist.st_size) / sizeof(IndexEntry);
      idx.resize(n);
      size_t got = 0;
      int rc = PreadAll(ifd, reinterpret_cast<uint8_t*>(idx.data()), n * sizeof(IndexEntry), 0, &got);
      if (rc != 0) {
        close(ifd);
        return SysError("pread", seg->index_path, 0, rc);
      }
      if (got != n * sizeof(IndexEntry)) idx.clear(), index_dirty = true;  // shrank under us: rebuilt from the log
      if (static_cast<size_t>(ist.st_size) % sizeof(IndexEntry)) index_dirty = true;
    }
    close(ifd);
  } else if (errno == ENOENT) {
    index_dirty = true;
  } else {
    return SysError("open", seg->index_path, -1, errno);
  }
  // A sealed segment's index ends with its seal entry (HasSealEntry). Sealed and not
  // the last: its size and end are known, it holds all its data, and its batches are
  // checked when read (CRC), as every sealed segment's were before the seal entry.
  // One that points past the end (its file cut short since) is the seal entry only
  // when it names the next file's base (IsSealEntry): the segment is then whole, and
  // what its file lost reads as CORRUPT_BATCH.
  int64_t sealed_next = -1;
  if (!idx.empty() && IsSealEntry(idx.back(), idx.size() < 2 ? nullptr : &idx[idx.size() - 2], seg->base_offset, file_size, next_file)) {
    sealed_next = seg->base_offset + idx.back().rel_offset;
    idx.pop_back();
    if (last) {
      sealed_next = -1;  // the active segment again: recovered as one, its index rewritten without it
      index_dirty = true;
    }
  }
  // A seal entry that disagrees with the next file's name: a damaged entry, or a
  // segment file missing after this one. The scan below tells them apart: the log
  // ending cleanly where the next file starts means the entry is wrong (rewritten).
  const bool check_seal = sealed_next >= 0 && next_file >= 0 && sealed_next != next_file;
  // Sealed, by its own seal entry or by a later segment's: its end is known.
  int64_t whole_next = sealed_next >= 0 ? sealed_next : next_base;
  for (size_t i = 0; i < idx.size(); i++) {
    bool bad = static_cast<int64_t>(idx[i].position) >= file_size || idx[i].position == 0 ||
               (i > 0 && (idx[i].rel_offset <= idx[i - 1].rel_offset || idx[i].position <= idx[i - 1].position));
    if (bad) {
      idx.clear();
      index_dirty = true;
      break;
    }
  }

  if (full_scan && sealed_next < 0 && !idx.empty()) {
    idx.clear();  // rebuilt by the scan below, from the start
    index_dirty = true;
  }
  if (sealed_next >= 0 && !index_dirty && !check_seal) {
    seg->size = static_cast<uint64_t>(file_size);
    seg->next_offset = sealed_next;
    seg->index = std::move(idx);
    *whole = true;
    return Status::Ok();
  }

  FileScanner sc(seg->file->fd, file_size);
  int err = 0;
  auto valid_batch_at = [&](int64_t pos, int64_t want_base, BatchHeader* h) -> bool {
    const uint8_t* p = sc.Ensure(pos, batch::kHeaderSize, &err);
    if (!p || !PeekHeader(p, batch::kHeaderSize, h)) return false;
    if (h->base_offset != want_base) return false;
    p = sc.Ensure(pos, h->length, &err);
    return p && BatchCrcOk(p, *h);
  };

  // Resume from the newest index entry that points at a valid batch.
  int64_t pos = 0;
  int64_t expected = seg->base_offset;
  BatchHeader h;
  while (!idx.empty()) {
    const IndexEntry& e = idx.back();
    if (valid_batch_at(e.position, seg->base_offset + e.rel_offset, &h)) {
      pos = e.position;
      expected = seg->base_offset + e.rel_offset;
      break;
    }
    if (err) return SysError("pread", seg->log_path, e.position, err);
    idx.pop_back();
    index_dirty = true;
  }
  uint32_t last_index_pos = idx.empty() ? 0 : idx.back().position;
  while (valid_batch_at(pos, expected, &h)) {
    if (pos > 0 && static_cast<uint32_t>(pos) - last_index_pos >= cfg_.index_interval_bytes &&
        (idx.empty() || idx.back().position != static_cast<uint32_t>(pos))) {
      idx.push_back({static_cast<uint32_t>(h.base_offset - seg->base_offset), static_cast<uint32_t>(pos)});
      last_index_pos = static_cast<uint32_t>(pos);
      index_dirty = true;
    }
    expected = h.last_offset() + 1;
    pos += h.length;
  }
  if (err) return SysError("pread", seg->log_path, pos, err);
  if (check_seal && pos == file_size && expected == next_file) {
    whole_next = next_file;
    index_dirty = true;
  }
  // Not sealed, followed by another segment, and its batches end exactly where that
  // one starts: a roll whose seal never ran (a crash in the roll's cycle, a full disk at
  // the seal). It holds all its data; it is sealed now (its seal entry below, its file
  // cut to its end by Open), so a later open does not take damage in it for a torn tail
  // and drop the segments after it.
  bool seal_now = false;
  if (whole_next < 0 && !last && next_file >= 0 && expected == next_file && pos > 0) {
    seal_now = true;
    index_dirty = true;
  }
  if (whole_next >= 0 && (pos != file_size || expected != whole_next)) {
    // Damage inside a segment that was sealed whole (a flipped bit, a bad header, an
    // index that misled the scan): not a torn tail, so nothing is cut off and nothing
    // after it dropped. Reads of the damaged part report CORRUPT_BATCH.
    pos = file_size;
    expected = whole_next;
  }
  seg->size = static_cast<uint64_t>(pos);
  seg->next_offset = expected;
  seg->index = std::move(idx);
  *whole = whole_next >= 0 || seal_now;

  if (seal_now) {
    // As SealUnit: the file cut to its batches and synced before the seal entry says the
    // segment is whole. A run without sync may have left this data (and the extents and
    // size that make it readable) unsynced, and a later open trusts the seal entry.
    if (file_size > pos) {
      if (truncate(seg->log_path.c_str(), static_cast<off_t>(pos)) != 0)
        return SysError("truncate", seg->log_path, static_cast<long long>(pos), errno);
      KeepMtime(seg->log_path, seg->last_write_ms);
    }
    if (fsync(seg->file->fd) != 0) return SysError("fsync", seg->log_path, -1, errno);
  }
  if (index_dirty) {
    // Through a temporary file and a rename, never over the old index in place: cut to
    // nothing first, the old file lost its seal entry when the write failed (a full
    // disk, EIO: the open refused) or a crash came before it, and the next open took
    // damage in the sealed segment for a torn tail, cutting it and deleting the
    // segments after it. A leftover temporary file goes at the next open (Open).
    const std::string tmp = seg->index_name + ".tmp";
    int fd = openat(dir_fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int e = errno;
      if (seal_now && IsNoSpace(e)) return Status::Ok();
      return SysError("create", seg->index_path + ".tmp", -1, e);
    }
    std::vector<IndexEntry> entries = seg->index;
    // A segment with a seal entry keeps one, even one whose file lost all its data: without
    // it a later open would take that damage for a torn tail (IsSealEntry).
    if (*whole && (pos > 0 || sealed_next >= 0))
      entries.push_back({static_cast<uint32_t>(expected - seg->base_offset), static_cast<uint32_t>(pos)});
    int rc = PwriteFull(fd, reinterpret_cast<const uint8_t*>(entries.data()), entries.size() * sizeof(IndexEntry), 0);
    if (rc == 0 && fdatasync(fd) != 0) rc = errno;
    close(fd);
    const char* what = "write index";
    if (rc == 0 && renameat(dir_fd_, tmp.c_str(), dir_fd_, seg->index_name.c_str()) != 0) {
      rc = errno;
      what = "rename index";
    }
    if (rc) {
      unlinkat(dir_fd_, tmp.c_str(), 0);
      // A seal added here on a full disk may wait for a later open: the segment is read
      // the same either way (the index is a hint), as it was before this open.
      if (seal_now && IsNoSpace(rc)) return Status::Ok();
      return SysError(what, seg->index_path, 0, rc);
    }
    rc = SyncDir();
    if (rc) return SysError("fsync directory", cfg_.dir, -1, rc);
  }
  return Status::Ok();
}

uint64_t PartitionLog::MaxIndexBytes() const {
  return (cfg_.segment_bytes / std::max<uint32_t>(1, cfg_.index_interval_bytes) + 3) * sizeof(IndexEntry);
}

Status PartitionLog::CreateSegment(int64_t base, uint64_t first_bytes, std::shared_ptr<Segment>* out) {
  auto seg = std::make_shared<Segment>();
  NameSegment(seg.get(), base);
  std::vector<const std::string*> created;  // names
  // Out of space: the files made so far go again (best effort: the full disk is the
  // error to report), so the log is as it was and a retry starts afresh.
  auto undo = [&](Status s) {
    for (const std::string* n : created) unlinkat(dir_fd_, n->c_str(), 0);
    SyncDir();
    return s;
  };
  const uint64_t reserve[2] = {cfg_.preallocate_bytes > 0 ? AlignUp(std::max<uint64_t>(first_bytes, 1)) : 0, MaxIndexBytes()};
  for (int i = 0; i < 2; i++) {
    const std::string& path = i == 0 ? seg->log_path : seg->index_path;
    const std::string& name = i == 0 ? seg->log_name : seg->index_name;
    int fd = openat(dir_fd_, name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return IsNoSpace(errno) ? undo(NoSpace(path, "a new segment", errno)) : SysError("create", path, -1, errno);
    created.push_back(&name);
    bool fits = true;
    Status h = Headroom(fd, path, reserve[i], "a new segment", &fits);
    if (!h.ok()) {
      close(fd);
      return fits ? h : undo(h);
    }
    if (reserve[i] > 0 && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(reserve[i])) != 0 && errno != EOPNOTSUPP &&
        errno != ENOSYS) {
      const int e = errno;
      close(fd);
      if (IsNoSpace(e)) return undo(NoSpace(path, "a new segment (" + std::to_string(reserve[i]) + " bytes)", e));
      return SysError("fallocate", path, 0, e);
    }
    int rc = fsync(fd) == 0 ? 0 : errno;
    close(fd);
    if (rc) return SysError("fsync", path, -1, rc);
  }
  int rc = SyncDir();
  if (rc) return SysError("fsync directory", cfg_.dir, -1, rc);
  int fd = openat(dir_fd_, seg->log_name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SysError("open", seg->log_path, -1, errno);
  seg->file = std::make_shared<ReadFd>(fd);
  seg->next_offset = base;
  seg->last_write_ms = NowMs();
  *out = std::move(seg);
  return Status::Ok();
}

Status PartitionLog::OpenActive(std::shared_ptr<Segment> seg) {
  const std::string& path = seg->log_path;
  int fd = -1;
  bool direct = false;
  if (cfg_.allow_direct) {
    fd = openat(dir_fd_, seg->log_name.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
    direct = fd >= 0;
    if (fd < 0 && errno != EINVAL) return SysError("open(O_DIRECT)", path, -1, errno);
  }
  if (fd < 0) {
    fd = openat(dir_fd_, seg->log_name.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return SysError("open", path, -1, errno);
  }
  uint32_t block = 4096;
  uint32_t mem_align = 4096;
#ifdef STATX_DIOALIGN
  if (direct) {
    struct statx stx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN)) {
      // Never below a page: a 512-byte logical block is often a 4 KiB physical one,
      // and sub-page rewrites of the tail would become read-modify-write.
      block = std::max<uint32_t>(block, stx.stx_dio_offset_align);
      mem_align = std::max<uint32_t>(mem_align, stx.stx_dio_mem_align);
    }
  }
#endif
  // Stored once, never a provisional value: other threads read them.
  direct_ = direct;
  block_ = block;
  mem_align_ = mem_align;

  // Cut off anything past the recovered end (a torn batch, stale preallocation) so a
  // later crash can never expose old bytes behind new ones.
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return SysError("fstat", path, -1, errno);
  }
  if (static_cast<uint64_t>(st.st_size) > seg->size) {
    if (ftruncate(fd, static_cast<off_t>(seg->size)) != 0 || fsync(fd) != 0) {
      int e = errno;
      close(fd);
      return SysError("truncate torn tail of", path, static_cast<long long>(seg->size), e);
    }
  } else if (cfg_.full_scan && fsync(fd) != 0) {
    // After a crash of a run without sync, the data recovered here may never have been
    // synced (buffered writes, extents converted in memory only). This run's durable
    // appends land after it, and a power cut that kept them but lost it would leave a
    // hole the next open cuts the log at, acknowledged records after it.
    int e = errno;
    close(fd);
    return SysError("fsync", path, -1, e);
  }

  WriteUnit u;
  u.buf = AlignedBuffer(mem_align_);
  u.seg = seg;
  u.file_pos = static_cast<int64_t>(AlignDown(seg->size));
  u.len = seg->size - static_cast<uint64_t>(u.file_pos);
  u.buf.Reserve(std::max<size_t>(1u << 20, block_), 0);
  if (u.len > 0) {
    size_t got = 0;
    int rc = PreadAll(seg->file->fd, u.buf.data(), u.len, u.file_pos, &got);
    if (rc || got != u.len) {
      close(fd);
      return SysError("read tail block of", path, u.file_pos, rc ? rc : EIO);
    }
  }
  if (direct_) {
    // Some filesystems accept O_DIRECT at open and refuse it at write (EINVAL).
    // Probe by rewriting the tail block with its own bytes (zeros when empty).
    std::memset(u.buf.data() + u.len, 0, block_ - u.len);
    ssize_t n = pwrite(fd, u.buf.data(), block_, u.file_pos);
    if (n < 0 && errno == EINVAL) {
      close(fd);
      fd = openat(dir_fd_, seg->log_name.c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0) return SysError("open", path, -1, errno);
      direct_ = false;
    } else if (n != static_cast<ssize_t>(block_)) {
      int e = n < 0 ? errno : EIO;
      close(fd);
      return SysError("pwrite", path, u.file_pos, e);
    }
  }
  KeepMtime(fd, seg->last_write_ms);
  seg->write_fd = fd;
  u.in_place = direct_ && OverwritesInPlace(fd);
  u.dev = static_cast<uint64_t>(st.st_dev);
  u.ino = static_cast<uint64_t>(st.st_ino);
  // durable_end stays 0: the first write (the tail block onwards) goes with RWF_DSYNC,
  // which also makes whatever this file's earlier run left unsynced durable.
  u.cycle_start = u.len;
  u.allocated = static_cast<int64_t>(AlignUp(seg->size));
  u.zeroed = u.allocated;  // past the data, the file was just cut to its end
  u.next_offset = seg->next_offset;
  u.cycle_first_offset = seg->next_offset;
  u.last_index_pos = seg->index.empty() ? 0 : seg->index.back().position;
  u.index_entries_written = seg->index.size();
  u.index_fd = openat(dir_fd_, seg->index_name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (u.index_fd < 0) return SysError("open", seg->index_path, -1, errno);
  // Room for the whole index again (recovery may have rewritten the file without the
  // space CreateSegment reserved). Best effort: without it an index append that finds
  // the disk full leaves the index to be written whole at the seal (Publish).
  if (fallocate(u.index_fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(MaxIndexBytes())) != 0 && !IsNoSpace(errno) &&
      errno != EOPNOTSUPP && errno != ENOSYS) {
    const int e = errno;
    close(u.index_fd);
    return SysError("fallocate", seg->index_path, 0, e);
  }
  active_ = std::move(u);
  return Status::Ok();
}

Status PartitionLog::Stage(const uint8_t* data, size_t len, CrcMode mode, int64_t* base_out) {
  uint64_t cur = static_cast<uint64_t>(active_.file_pos) + active_.len;
  if (cur > 0 && cur + len > cfg_.segment_bytes) {
    std::shared_ptr<Segment> seg;
    Status s = CreateSegment(next_offset_, len, &seg);
    if (!s.ok()) return s;
    sealing_.push_back(std::move(active_));
    active_ = WriteUnit();
    s = OpenActive(seg);
    if (!s.ok()) return s;
    std::lock_guard<std::mutex> lk(mu_);
    segments_.push_back(seg);
    CloseLeastReadLocked();
  }
  WriteUnit& u = active_;
  // The batch's disk space before its bytes: a full disk refuses this batch alone,
  // where a failed fallocate at write time would fence the partition mid-cycle.
  Status r = Reserve(u, u.file_pos + static_cast<int64_t>(AlignUp(u.len + len)));
  if (!r.ok()) return r;
  u.buf.Reserve(AlignUp(u.len + len), u.len);
  uint8_t* dst = u.buf.data() + u.len;
  std::memcpy(dst, data, len);
  // Validate the private copy: the caller's buffer may change under us, this cannot,
  // and it is hot in cache for the CRC.
  BatchHeader h;
  Status v = ValidateBatch(dst, len, mode, &h);
  if (!v.ok()) return Status::Error(Code::kCorruptBatch, v.message + " in batch for " + cfg_.label);
  const int64_t base = next_offset_;
  // The end offset (the next to be written) too must stay a safe JavaScript integer.
  if (base > kMaxOffset - static_cast<int64_t>(h.record_count))
    return Status::Error(Code::kOffsetOutOfRange, cfg_.label + " is full: offsets end at 2^53 - 1, the largest a JavaScript number holds exactly, and this batch of " +
                                                      std::to_string(h.record_count) + " records would pass it");
  StoreLE<int64_t>(dst + batch::kOffBaseOffset, base);
  uint64_t pos = static_cast<uint64_t>(u.file_pos) + u.len;
  if (pos > 0 && pos - u.last_index_pos >= cfg_.index_interval_bytes) {
    u.pending_index.push_back({static_cast<uint32_t>(base - u.seg->base_offset), static_cast<uint32_t>(pos)});
    u.last_index_pos = static_cast<uint32_t>(pos);
  }
  u.len += len;
  next_offset_ = base + h.record_count;
  u.next_offset = next_offset_;
  *base_out = base;
  return Status::Ok();
}

namespace {
// What every refusal for space ends with: nothing to undo, and what makes the retry succeed.
constexpr const char* kNoSpaceHint = "; nothing was written (free space or lower the topic's retention, then retry)";
}  // namespace

Status PartitionLog::NoSpace(const std::string& path, const std::string& what, int err) const {
  return Status::Error(Code::kResourceExhausted, "no space for " + what + " of " + cfg_.label + " in " + path + ": " +
                                                     std::strerror(err) + " (errno " + std::to_string(err) + ")" + kNoSpaceHint);
}

Status PartitionLog::Headroom(int fd, const std::string& path, uint64_t bytes, const std::string& what, bool* fits) const {
  *fits = true;
  if (cfg_.min_free_bytes == 0 || bytes == 0) return Status::Ok();
  struct statfs sf;
  if (fstatfs(fd, &sf) != 0) return SysError("fstatfs", path, -1, errno);
  const uint64_t free_bytes = static_cast<uint64_t>(sf.f_bavail) * static_cast<uint64_t>(sf.f_bsize);
  // And about the file system's own blocks for the new extents, counting one extent per
  // block as on a badly fragmented disk: ext4 keeps (bsize - 12) / 12 in an extent tree
  // block, plus one for a new level. Without it a nearly full disk's appends went a block or two under
  // the floor (and the file's tree blocks, counted in st_blocks, passed for data held).
  const uint64_t bsize = std::max<uint64_t>(1024, static_cast<uint64_t>(sf.f_bsize));
  const uint64_t per_tree_block = (bsize - 12) / 12;
  const uint64_t need = bytes + ((bytes / bsize + 1 + per_tree_block - 1) / per_tree_block + 1) * bsize;
  if (free_bytes >= need && free_bytes - need >= cfg_.min_free_bytes) return Status::Ok();
  *fits = false;
  return Status::Error(Code::kResourceExhausted,
                       "no space for " + what + " of " + cfg_.label + ": the file system holding " + path + " has " +
                           std::to_string(free_bytes) + " bytes free, and " + std::to_string(bytes) + " more (" +
                           std::to_string(need) + " with the file system's extent blocks for them) would leave less than the broker's minFreeBytes (" + std::to_string(cfg_.min_free_bytes) + ")" +
                           kNoSpaceHint);
}

Status PartitionLog::Reserve(WriteUnit& u, int64_t end) {
  if (cfg_.preallocate_bytes == 0 || end <= u.allocated) return Status::Ok();
  int64_t target = std::max<int64_t>(end, u.allocated + static_cast<int64_t>(cfg_.preallocate_bytes));
  target = std::min<int64_t>(target, std::max<int64_t>(end, static_cast<int64_t>(AlignUp(cfg_.segment_bytes))));
  // What the file holds already (a new segment's first bytes, reserved past its end
  // when it was created) costs no free space.
  struct stat st;
  if (fstat(u.seg->write_fd, &st) != 0) return SysError("fstat", u.seg->log_path, -1, errno);
  const int64_t held = static_cast<int64_t>(st.st_blocks) * 512;
  for (;;) {
    bool fits = true;
    Status h = Headroom(u.seg->write_fd, u.seg->log_path, static_cast<uint64_t>(std::max<int64_t>(0, target - held)), "a batch", &fits);
    if (!fits && target > end) {  // a whole step may not fit where the batch would: take only what it needs
      target = end;
      continue;
    }
    if (!h.ok()) return h;
    if (fallocate(u.seg->write_fd, 0, u.allocated, target - u.allocated) == 0) break;
    const int e = errno;
    if (e == EINTR) continue;
    if (e == EOPNOTSUPP || e == ENOSYS) {
      // No preallocation here (ext4 without extents, some network file systems): writes
      // extend the file, and the headroom check is all that keeps them off a full disk.
      // Counted as taken, a whole step let each partition write 16 MiB unchecked: a few
      // filled the disk past minFreeBytes to its last block, where their writes failed
      // and fenced them. Only the batch counts, so the next one is checked again.
      target = end;
      break;
    }
    if (!IsNoSpace(e)) return SysError("fallocate", u.seg->log_path, u.allocated, e);
    if (target > end) {
      target = end;
      continue;
    }
    return NoSpace(u.seg->log_path, "a batch (" + std::to_string(end - u.allocated) + " bytes at offset " + std::to_string(u.allocated) + ")", e);
  }
  u.allocated = target;
  return Status::Ok();
}

size_t PartitionLog::ZeroAhead(const uint8_t* zeros, size_t max_step, size_t ahead, int64_t now_mono_ms, PowerCutJournal* power_cut) {
  WriteUnit& u = active_;
  if (!u.seg || u.seg->write_fd < 0 || failed.load() || closed.load() || HasStaged()) return 0;
  if (now_mono_ms - last_publish_mono_ms_ > 1000) return 0;  // an idle partition's space stays as it is
  if (reinterpret_cast<uintptr_t>(zeros) % mem_align_.load() != 0) return 0;
  // A step (a write and a sync of the conversion: 1-2 ms here) saves each later cycle
  // that enters a new block over its zeros a metadata write (~0.05-0.1 ms): worth it only when a MiB of data takes dozens of
  // cycles. Larger cycles (a busier writer) write as they would without it.
  // During a backoff the counts go on, so that its end judges the whole second; a look
  // with no cycle since the last one keeps the last verdict (looks follow any
  // partition's cycles, not this one's).
  if (now_mono_ms < u.zero_resume_ms) return 0;
  if (cycles_since_zero_ > 0) {
    small_cycles_ = bytes_since_zero_ / cycles_since_zero_ <= kZeroMaxMeanCycleBytes;
    cycles_since_zero_ = 0;
    bytes_since_zero_ = 0;
  }
  const bool small_cycles = small_cycles_;
  // The block holding the partial tail is data: the next cycle rewrites it.
  const int64_t data_end = u.file_pos + static_cast<int64_t>(AlignUp(u.len));
  // The writer overtook the zeros (it writes faster than the steps keep ahead, and each
  // would only cost it a pause), or its cycles are large: try again in a second.
  if (!small_cycles || (u.zeroing && data_end > u.zeroed)) {
    u.zeroing = false;
    u.zero_resume_ms = now_mono_ms + 1000;
    return 0;
  }
  const int64_t step = static_cast<int64_t>(AlignDown(std::min(max_step, ahead)));
  const int64_t from = std::max(u.zeroed, data_end);
  // Whole steps only: each costs a metadata write and a flush however small it is.
  if (step == 0 || from - data_end > static_cast<int64_t>(ahead) - step) return 0;
  // Keep the reservation ahead too, or the zeros would stop at each 16 MiB step until a
  // batch crossed it. No room: zero what is reserved (the next batch's own Reserve
  // reports a full disk, as it would without this).
  const int64_t want = std::min<int64_t>(from + step, static_cast<int64_t>(AlignUp(cfg_.segment_bytes)));
  if (want > u.allocated) (void)Reserve(u, want);
  const int64_t to = static_cast<int64_t>(AlignDown(static_cast<uint64_t>(std::min(u.allocated, from + step))));
  if (to <= from) return 0;
  // The test hook sees these zeros held in the disk's cache until the fdatasync below.
  if (power_cut) power_cut->BeforeWrite(u.seg->write_fd, u.seg->log_path, from, static_cast<size_t>(to - from));
  int rc = PwriteFull(u.seg->write_fd, zeros, static_cast<size_t>(to - from), from);
  const char* what = "write zeros ahead of the data of";
  const uint64_t pc_token = power_cut ? power_cut->Token() : 0;
  if (rc == 0 && fdatasync(u.seg->write_fd) != 0) {
    rc = errno;
    what = "fdatasync zeros ahead of the data of";
  }
  if (rc == 0 && power_cut) power_cut->Flushed(u.seg->write_fd, pc_token);
  if (rc) {
    // Only where preallocation is not supported can these blocks be unallocated (Reserve
    // then counts them reserved without a fallocate): a full disk there refuses the
    // zeros, not the data, whose own write will find out.
    if (IsNoSpace(rc)) {
      u.zeroed = static_cast<int64_t>(AlignUp(static_cast<uint64_t>(u.allocated)));  // O_DIRECT offsets stay aligned
      return 0;
    }
    Fail(SysError(what, u.seg->log_path, from, rc));
    return 0;
  }
  u.zeroed = to;
  u.zeroing = true;
  // Synced, and contiguous with what is durable (a gap left by a refusal for space above
  // is not): a later write over them needs only the disk's cache flushed.
  if (u.durable_end >= from) u.durable_end = to;
  return static_cast<size_t>(to - from);
}

bool PartitionLog::HasStaged() const { return active_.len > active_.cycle_start || !sealing_.empty(); }

Status PartitionLog::CollectWrites(std::vector<IoOp>* writes) {
  auto collect = [&](WriteUnit& u) -> Status {
    if (u.len <= u.cycle_start) return Status::Ok();
    size_t padded = AlignUp(u.len);
    u.buf.Reserve(padded, u.len);
    std::memset(u.buf.data() + u.len, 0, padded - u.len);
    // Stage reserved it already; this only holds if that ever changes.
    Status r = Reserve(u, u.file_pos + static_cast<int64_t>(padded));
    if (!r.ok()) return r;
    IoOp op;
    op.fd = u.seg->write_fd;
    op.buf = u.buf.data();
    op.len = padded;
    op.offset = u.file_pos;
    op.path = &u.seg->log_path;
    const int64_t end = u.file_pos + static_cast<int64_t>(padded);
    op.in_place = u.in_place && end <= u.durable_end;
    op.dev = u.dev;
    op.ino = u.ino;
    u.written_end = std::max(u.written_end, end);
    writes->push_back(op);
    return Status::Ok();
  };
  for (auto& u : sealing_) {
    Status s = collect(u);
    if (!s.ok()) return s;
  }
  Status s = collect(active_);
  if (!s.ok()) return s;
  dirty_ = true;
  return Status::Ok();
}

void PartitionLog::MarkSynced() {
  dirty_ = false;
  acked_unsynced_ = false;
  for (auto& u : sealing_) u.durable_end = std::max(u.durable_end, u.written_end);
  active_.durable_end = std::max(active_.durable_end, active_.written_end);
}

void PartitionLog::CollectSyncs(std::vector<IoOp>* syncs) {
  for (auto& u : sealing_) {
    IoOp op;
    op.fd = u.seg->write_fd;
    op.path = &u.seg->log_path;
    syncs->push_back(op);
  }
  IoOp op;
  op.fd = active_.seg->write_fd;
  op.path = &active_.seg->log_path;
  syncs->push_back(op);
}

Status PartitionLog::SealUnit(WriteUnit* u) {
  Segment* seg = u->seg.get();
  if (ftruncate(seg->write_fd, static_cast<off_t>(seg->size)) != 0)
    return SysError("ftruncate sealed segment", seg->log_path, static_cast<long long>(seg->size), errno);
  KeepMtime(seg->write_fd, seg->last_write_ms);
  if (fdatasync(seg->write_fd) != 0) return SysError("fdatasync", seg->log_path, -1, errno);
  if (u->index_fd >= 0) {
    // The seal entry (HasSealEntry), after the data is durable: a reopen then knows the
    // segment is whole, and damage found in it later is not taken for a torn tail.
    const IndexEntry seal{static_cast<uint32_t>(seg->next_offset - seg->base_offset), static_cast<uint32_t>(seg->size)};
    std::vector<IndexEntry> whole;  // a repaired index (RepairIndex), written over the file's
    bool rewrite = false;
    {
      std::lock_guard<std::mutex> lk(mu_);
      rewrite = seg->index_rewrite;
      if (rewrite) whole = seg->index;
    }
    int64_t at = static_cast<int64_t>(u->index_entries_written * sizeof(IndexEntry));
    int rc = 0;
    if (rewrite) {
      whole.push_back(seal);
      rc = PwriteFull(u->index_fd, reinterpret_cast<const uint8_t*>(whole.data()), whole.size() * sizeof(IndexEntry), 0);
      at = 0;
    } else {
      rc = PwriteFull(u->index_fd, reinterpret_cast<const uint8_t*>(&seal), sizeof seal, at);
      whole.assign(1, seal);
    }
    // No room for the index on a full disk: the segment is sealed without its seal
    // entry, as segments written before seal entries existed are (an open checks it as
    // such, and rebuilds the index from the log).
    if (rc && !IsNoSpace(rc)) return SysError("pwrite", seg->index_path, at, rc);
    if (!rc) {
      // Cut to its entries: also gives back the space reserved past its end at creation.
      const int64_t end = at + static_cast<int64_t>(whole.size() * sizeof(IndexEntry));
      if (ftruncate(u->index_fd, end) != 0) return SysError("ftruncate", seg->index_path, end, errno);
      if (fdatasync(u->index_fd) != 0) return SysError("fdatasync", seg->index_path, -1, errno);
    }
    close(u->index_fd);
    u->index_fd = -1;
  }
  close(seg->write_fd);
  seg->write_fd = -1;
  std::lock_guard<std::mutex> lk(mu_);
  seg->sealed = true;
  return Status::Ok();
}

void PartitionLog::AddToCache(int64_t first, int64_t next, const uint8_t* p, size_t n) {
  if (CacheCost(n) > cache_cap_) {
    // The cache must stay a contiguous suffix of the log: a chunk too big to keep
    // empties it (with a cap of 0, every chunk).
    cache_.clear();
    cache_bytes_ = 0;
    return;
  }
  if (!cache_.empty() && cache_.back().next_offset != first) {
    cache_.clear();
    cache_bytes_ = 0;
  }
  cache_.push_back({first, next, std::vector<uint8_t>(p, p + n)});
  cache_bytes_ += CacheCost(n);
  TrimCacheLocked();
}

void PartitionLog::TrimCacheLocked() {
  while (cache_bytes_ > cache_cap_) {
    cache_bytes_ -= CacheCost(cache_.front().bytes.size());
    cache_.pop_front();
  }
  // A deque keeps its emptied blocks: an empty cache gives all of them back.
  if (cache_.empty()) std::deque<CacheChunk>().swap(cache_);
}

void PartitionLog::SetTailCacheBytes(size_t n) {
  std::lock_guard<std::mutex> lk(mu_);
  cache_cap_ = std::min(n, cfg_.tail_cache_bytes);
  TrimCacheLocked();
}

Status PartitionLog::Publish(int64_t now_ms) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto publish = [&](WriteUnit& u) {
      if (u.len <= u.cycle_start) return;
      Segment* seg = u.seg.get();
      seg->size = static_cast<uint64_t>(u.file_pos) + u.len;
      seg->next_offset = u.next_offset;
      seg->last_write_ms = now_ms;
      seg->index.insert(seg->index.end(), u.pending_index.begin(), u.pending_index.end());
      AddToCache(u.cycle_first_offset, u.next_offset, u.buf.data() + u.cycle_start, u.len - u.cycle_start);
    };
    size_t cycle_bytes = active_.len - active_.cycle_start;
    for (auto& u : sealing_) cycle_bytes += u.len - u.cycle_start;
    if (cycle_bytes > 0) {
      cycles_since_zero_++;
      bytes_since_zero_ += cycle_bytes;
    }
    for (auto& u : sealing_) publish(u);
    publish(active_);
    durable_next_ = active_.next_offset;
    // In sync mode the cycle's writes were durable before this (MarkSynced): dirty_ is false.
    acked_unsynced_ = acked_unsynced_ || (dirty_ && cycle_bytes > 0);
  }
  // The index is a hint rebuilt on recovery, so it is written buffered and synced
  // only when its segment is sealed.
  auto write_index = [&](WriteUnit& u) -> Status {
    if (u.pending_index.empty()) return Status::Ok();
    int rc = PwriteFull(u.index_fd, reinterpret_cast<const uint8_t*>(u.pending_index.data()),
                        u.pending_index.size() * sizeof(IndexEntry),
                        static_cast<int64_t>(u.index_entries_written * sizeof(IndexEntry)));
    if (rc && IsNoSpace(rc)) {
      // The index is a hint and these entries are in memory (seg->index): a full disk
      // must not fence the partition for it. The whole index is written at the seal.
      std::lock_guard<std::mutex> lk(mu_);
      u.seg->index_rewrite = true;
      u.pending_index.clear();
      return Status::Ok();
    }
    if (rc) return SysError("pwrite", u.seg->index_path, static_cast<long long>(u.index_entries_written * sizeof(IndexEntry)), rc);
    u.index_entries_written += u.pending_index.size();
    u.pending_index.clear();
    return Status::Ok();
  };
  Status first_error;
  for (auto& u : sealing_) {
    Status s = write_index(u);
    if (s.ok()) s = SealUnit(&u);
    if (!s.ok()) {
      if (u.index_fd >= 0) close(u.index_fd);  // fenced below (Fail), which no longer sees this unit
      u.index_fd = -1;
      if (acked_unsynced_) failed_seals_.push_back(u.seg);  // for Fail() to sync: the seal's own sync may not have run
      if (first_error.ok()) first_error = s;
    }
  }
  sealing_.clear();
  Status s = write_index(active_);
  if (!s.ok() && first_error.ok()) first_error = s;

  last_publish_ms_ = now_ms;
  last_publish_mono_ms_ = MonoMs();
  // Keep only the partial last block: it is rewritten, extended, with the next write.
  WriteUnit& u = active_;
  const size_t cycle_used = u.len;
  size_t tail = u.len % block_;
  if (u.len > tail) {
    std::memmove(u.buf.data(), u.buf.data() + (u.len - tail), tail);
    u.file_pos += static_cast<int64_t>(u.len - tail);
    u.len = tail;
  }
  u.cycle_start = u.len;
  u.cycle_first_offset = u.next_offset;
  // Give back a burst's staging memory only after a long quiet spell: shrinking and
  // regrowing every cycle would cost page faults on every write.
  if (u.buf.capacity() > (4u << 20) && cycle_used < u.buf.capacity() / 8) {
    if (++u.small_cycles >= 256) {
      u.buf.ShrinkTo(1u << 20, u.len);
      u.small_cycles = 0;
    }
  } else {
    u.small_cycles = 0;
  }
  return first_error;
}

void PartitionLog::ReleaseIdleMemory(int64_t now_ms) {
  if (now_ms - last_publish_ms_ > 1000 && !HasStaged() && active_.buf.capacity() > (1u << 20))
    active_.buf.ShrinkTo(1u << 20, active_.len);
}

void PartitionLog::Fail(const Status& s) {
  // Outside sync mode, earlier cycles' appends were acknowledged before any sync covered
  // them, and a fenced partition is in no later sync pass (SyncPartitions, the close):
  // unsynced here, they stayed so until the page cache wrote them back, and a power cut
  // before that lost them. Synced with fdatasync directly, not through the backend: a
  // fence is rare, and this one call per file keeps it in this one place.
  std::string unsynced;
  // A segment whose seal failed is synced even when a sync pass ran since: that pass no
  // longer saw it (CollectSyncs).
  if ((acked_unsynced_ || !failed_seals_.empty()) && !failed.load(std::memory_order_relaxed)) {
    std::vector<Segment*> files;
    for (auto& seg : failed_seals_) files.push_back(seg.get());
    if (acked_unsynced_) {
      for (auto& u : sealing_) files.push_back(u.seg.get());
      if (active_.seg) files.push_back(active_.seg.get());
    }
    for (Segment* seg : files) {
      if (seg->write_fd < 0 || fdatasync(seg->write_fd) == 0) continue;
      const Status e = SysError("fdatasync", seg->log_path, -1, errno);
      unsynced += (unsynced.empty() ? "; what was acknowledged before may not be durable: " : "; ") + e.message;
    }
    acked_unsynced_ = false;
  }
  failed_seals_.clear();
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (failure_.empty()) failure_ = s.message + unsynced;
  }
  failed.store(true, std::memory_order_release);
  // Staged bytes never become readable; the partition stays fenced until reopened,
  // when recovery finds the real end on disk.
  for (auto& u : sealing_)
    if (u.index_fd >= 0) close(u.index_fd);  // (write_fd goes with its Segment)
  sealing_.clear();
  active_.len = active_.cycle_start;
  active_.pending_index.clear();
}

void PartitionLog::EnforceRetention(int64_t now_ms, RemovalTrouble* trouble) {
  RetireSegments(now_ms);
  // Once a pass: the removals left from earlier passes and this one's, in that order.
  // (Called before the retiring too, a pass that retired segments behind a file that
  // stays tried that file twice, and counted two failures.)
  if (!unlink_retry_.empty() || dir_sync_pending_) RemoveRetired(trouble);
}

void PartitionLog::RetireSegments(int64_t now_ms) {
  if (cfg_.retention_bytes < 0 && cfg_.retention_ms < 0) return;
  std::vector<std::shared_ptr<Segment>> doomed;
  {
    std::lock_guard<std::mutex> lk(mu_);
    uint64_t total = 0;
    for (auto& s : segments_) total += s->size;
    // Never the active (last) segment; oldest first, so the log stays contiguous.
    while (segments_.size() > 1) {
      const auto& oldest = segments_.front();
      // Sealed only, and none past one that is not. Between write cycles every segment
      // before the active one is, but a partition fenced in a roll's cycle keeps the
      // segment it was sealing unsealed: its end and its seal entry are for the reopen
      // to judge (a torn tail, a gap before the next file, after which the reopen drops
      // what was never acknowledged), which it could no longer do were it gone.
      if (!oldest->sealed) break;
      bool by_bytes = cfg_.retention_bytes >= 0 &&
                      total - oldest->size >= static_cast<uint64_t>(cfg_.retention_bytes);
      bool by_age = cfg_.retention_ms >= 0 && now_ms - oldest->last_write_ms > cfg_.retention_ms;
      if (!by_bytes && !by_age) break;
      total -= oldest->size;
      doomed.push_back(oldest);
      segments_.erase(segments_.begin());
    }
    if (doomed.empty()) return;
    start_offset_ = segments_.front()->base_offset;
    while (!cache_.empty() && cache_.front().first_offset < start_offset_) {
      cache_bytes_ -= CacheCost(cache_.front().bytes.size());
      cache_.pop_front();
    }
  }
  // Readers holding a doomed segment keep its fd; unlink only removes the name.
  for (auto& seg : doomed) {
    unlink_retry_.push_back(seg->log_name);
    unlink_retry_.push_back(seg->index_name);
  }
}

void PartitionLog::RemoveRetired(RemovalTrouble* trouble) {
  // A name that cannot be removed now is tried again at the next retention pass:
  // left behind, reopening would bring the segment back and move the start offset
  // backwards. (Bounded: only names of segments already retired.)
  // In order, oldest segment first, its .log before its .index, stopping at the first
  // that fails: what stays is always a whole, sealed prefix of the log. Removing later
  // ones past a .log that stayed would leave a gap after it (and its seal entry gone
  // with its .index), which an open takes for a torn tail and drops what follows —
  // the active segment included.
  // Each removal is made durable before the next: one fsync of the directory after
  // several unlinks lets a power cut keep any subset of them (ext4 without a journal
  // writes the directory's blocks back in any order), and the same gap could be left
  // on disk. Retention retires a segment or two at a time: two fsyncs each. At most
  // kMaxRemovalsPerPass per pass, the rest at the next (a second later): these syncs
  // run on the I/O thread, and a retention lowered over thousands of segments would
  // hold every append behind them.
  // A failure is retried every second for as long as it lasts (a permission, an
  // immutable file, a read-only remount): the operator hears of each file once, and
  // the count of failed attempts (uringmq_retention_remove_failures_total) keeps
  // growing while it stays.
  auto stuck = [&](const std::string& key, const Status& why) {
    trouble->failures++;
    if (removal_warned_ == key) return;
    removal_warned_ = key;
    trouble->warning = cfg_.label + ": retention cannot remove a retired segment's files: " + why.message +
                       "; retried every second, and the retired files after it stay until it succeeds (said once for " +
                       (key == "." ? "this failure)" : "this file)");
  };
  constexpr size_t kMaxRemovalsPerPass = 16;
  size_t done = 0;
  bool sync_failed = false;
  while (done < unlink_retry_.size() && done < kMaxRemovalsPerPass) {
    if (dir_sync_pending_) {
      if (int e = SyncDir(); e != 0) {
        stuck(".", SysError("fsync of the directory", cfg_.dir, -1, e));
        sync_failed = true;  // not tried (and counted) again below
        break;  // tried again at the next pass, before any other unlink
      }
      dir_sync_pending_ = false;
    }
    // By name in the partition's directory, wherever it is now: a pass that began
    // before deleteTopic moved it to the trash must not remove the files of a topic
    // made again under the same name.
    if (unlinkat(dir_fd_, unlink_retry_[done].c_str(), 0) == 0) {
      dir_sync_pending_ = true;
    } else if (const int e = errno; e != ENOENT) {
      stuck(unlink_retry_[done], SysError("unlink", cfg_.dir + "/" + unlink_retry_[done], -1, e));
      break;
    }
    done++;
  }
  unlink_retry_.erase(unlink_retry_.begin(), unlink_retry_.begin() + static_cast<std::ptrdiff_t>(done));
  if (dir_sync_pending_ && !sync_failed) {
    if (int e = SyncDir(); e != 0) stuck(".", SysError("fsync of the directory", cfg_.dir, -1, e));
    else dir_sync_pending_ = false;
  }
  if (trouble->failures == 0) removal_warned_.clear();
}

int PartitionLog::SyncDir() const {
  while (fsync(dir_fd_) != 0)
    if (errno != EINTR) return errno;
  return 0;
}

void PartitionLog::NameSegment(Segment* seg, int64_t base) const {
  seg->base_offset = base;
  seg->log_name = SegmentFileName(base, ".log");
  seg->index_name = SegmentFileName(base, ".index");
  seg->log_path = cfg_.dir + "/" + seg->log_name;
  seg->index_path = cfg_.dir + "/" + seg->index_name;
}

Status PartitionLog::ReadFromCache(int64_t offset, size_t max_bytes, std::vector<uint8_t>* out) {
  // Caller holds mu_; offset is inside the cache. Binary search: at low rates each
  // cycle is its own small chunk, so 1 MiB of cache can hold thousands, and a linear
  // walk from the front cost ~9% of a server's main thread at 10k msgs/s, holding mu_
  // (which the I/O thread's Publish waits for) all the while.
  size_t ci = static_cast<size_t>(
      std::partition_point(cache_.begin(), cache_.end(), [offset](const CacheChunk& c) { return c.next_offset <= offset; }) -
      cache_.begin());
  if (ci == cache_.size()) ci = cache_.size() - 1;
  bool started = false;
  size_t total = 0;
  for (; ci < cache_.size(); ci++) {
    const auto& c = cache_[ci];
    size_t pos = 0;
    while (pos < c.bytes.size()) {
      BatchHeader h;
      if (!PeekHeader(c.bytes.data() + pos, c.bytes.size() - pos, &h) || pos + h.length > c.bytes.size())
        return Status::Error(Code::kCorruptBatch, "tail cache of " + cfg_.label + " is inconsistent");
      if (!started && h.last_offset() < offset) {
        pos += h.length;
        continue;
      }
      if (started && total + h.length > max_bytes) return Status::Ok();
      started = true;
      out->insert(out->end(), c.bytes.data() + pos, c.bytes.data() + pos + h.length);
      total += h.length;
      pos += h.length;
    }
  }
  return Status::Ok();
}

Status PartitionLog::Read(int64_t offset, size_t max_bytes, std::vector<uint8_t>* out) {
  size_t len = 0;
  bool in_dest = false;
  return ReadInto(offset, max_bytes, nullptr, 0, &len, out, &in_dest);
}

Status PartitionLog::ReadInto(int64_t offset, size_t max_bytes, uint8_t* dest, size_t cap, size_t* len,
                              std::vector<uint8_t>* big, bool* in_dest) {
  ReadTrace tr;
  Status s = ReadIntoOnce(offset, max_bytes, dest, cap, len, big, in_dest, &tr);
  if (s.code == Code::kCorruptBatch && tr.entry_pos > 0 && RepairIndex(tr.seg, tr.version)) {
    tr = ReadTrace();
    s = ReadIntoOnce(offset, max_bytes, dest, cap, len, big, in_dest, &tr);
  }
  if (s.code == Code::kCorruptBatch && tr.bad_pos >= 0)
    s = ReadPastDamage(offset, std::move(s), tr, [&](ReadTrace* t) { return ReadIntoOnce(offset, max_bytes, dest, cap, len, big, in_dest, t); });
  return s;
}

Status PartitionLog::ReadPastDamage(int64_t offset, Status s, ReadTrace tr, const std::function<Status(ReadTrace*)>& once) {
  for (int skips = 0; s.code == Code::kCorruptBatch && tr.bad_pos >= 0; skips++) {
    int64_t next_pos = -1;
    int64_t next_base = -1;
    const std::string note = FindNextReadable(tr, &next_pos, &next_base);
    if (next_pos < 0 || offset < next_base || skips == 8) {
      s.message += note;
      break;
    }
    // The offset lies past the damage: read on from the batch found after it.
    ReadTrace resume;
    resume.seg = tr.seg;
    resume.resume_pos = next_pos;
    resume.resume_base = next_base;
    s = once(&resume);
    tr = resume;
  }
  return s;
}

Status PartitionLog::ReadIntoOnce(int64_t offset, size_t max_bytes, uint8_t* dest, size_t cap, size_t* len,
                                  std::vector<uint8_t>* big, bool* in_dest, ReadTrace* tr) {
  *len = 0;
  *in_dest = false;
  big->clear();
  std::shared_ptr<Segment> seg;
  std::shared_ptr<ReadFd> file;
  int64_t pos = 0;
  int64_t pos_base = 0;  // the base offset the batch at pos must have
  int64_t limit = 0;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (offset < start_offset_ || offset > durable_next_) return OutOfRangeLocked(offset);
    if (offset == durable_next_) return Status::Ok();
    if (!cache_.empty() && offset >= cache_.front().first_offset && offset < cache_.back().next_offset) {
      Status s = ReadFromCache(offset, max_bytes, big);
      if (s.ok() && dest && big->size() <= cap) {
        std::memcpy(dest, big->data(), big->size());
        *in_dest = true;
        *len = big->size();
        big->clear();
      } else {
        *len = big->size();
      }
      return s;
    }
    pos = LocateLocked(offset, &seg, &pos_base);
    if (tr->resume_pos > pos && seg == tr->seg) {
      pos = tr->resume_pos;
      pos_base = tr->resume_base;
    }
    tr->seg = seg;
    tr->entry_pos = pos;
    tr->version = seg->index_version;
    limit = static_cast<int64_t>(seg->size);
    Status s = FileLocked(seg.get(), &file);
    if (!s.ok()) return s;
  }
  // One pread of the whole answer: the batches before `offset` that lie between the
  // index entry and it span at most one index interval. (Scanning headers first and
  // then reading the range cost two reads of every byte, two copies and a memset.)
  const size_t window = ReadWindowBytes(max_bytes);
  size_t need = 0;  // a window at least this large: the first batch is bigger than max_bytes
  // The batch with header h at buf[at] fails its CRC: it is where the read stops.
  auto crc_error = [&](const BatchHeader& h, size_t at) {
    tr->bad_pos = pos + static_cast<int64_t>(at);
    tr->bad_base = h.base_offset;
    return Status::Error(Code::kCorruptBatch, "CRC mismatch in " + cfg_.label + " batch at offset " + std::to_string(h.base_offset) + " (" +
                                                  seg->log_path + " byte " + std::to_string(tr->bad_pos) + ")");
  };
  uint8_t* buf = nullptr;
  size_t start = 0;
  size_t total = 0;
  for (int attempt = 0;; attempt++) {
    if (attempt > 64) return Status::Error(Code::kCorruptBatch, "cannot find the batch holding offset " + std::to_string(offset) + " in " + seg->log_path);
    const size_t want = static_cast<size_t>(std::min<int64_t>(limit - pos, static_cast<int64_t>(std::max(need, window))));
    if (dest && want <= cap) {
      buf = dest;
      *in_dest = true;
    } else {
      if (big->size() < want) big->resize(want);
      buf = big->data();
      *in_dest = false;
    }
    size_t got = 0;
    int rc = PreadAll(file->fd, buf, want, pos, &got);
    if (rc != 0) return SysError("pread", seg->log_path, pos, rc);
    if (got < want) return SysError("pread", seg->log_path, pos + static_cast<int64_t>(got), EIO);  // truncated under us
    size_t at = 0;
    bool found = false;
    bool refill = false;
    int64_t want_base = pos_base;
    int64_t start_base = 0;
    int64_t skipped_at = -1;  // the batch skipped last in this window, and its header
    BatchHeader skipped{};
    // A batch that does not follow the one skipped before it: when that one fails its
    // CRC, the damage is there (a record count or length, which the CRC covers or not),
    // and the batch here may be intact: that one is reported, and looked past.
    auto skipped_is_bad = [&] { return skipped_at >= 0 && !BatchCrcOk(buf + skipped_at, skipped); };
    total = 0;
    while (at < got) {
      BatchHeader h;
      if (at + batch::kHeaderSize > got) {
        refill = !found;
        break;
      }
      if (!PeekHeader(buf + at, batch::kHeaderSize, &h) || pos + static_cast<int64_t>(at + h.length) > limit) {
        if (found) break;  // serve the good batches before it; the next read reports it
        if (skipped_is_bad()) return crc_error(skipped, static_cast<size_t>(skipped_at));
        tr->bad_pos = pos + static_cast<int64_t>(at);
        tr->bad_base = want_base;
        return Status::Error(Code::kCorruptBatch, "no valid batch header in " + seg->log_path + " at byte " + std::to_string(pos + static_cast<int64_t>(at)));
      }
      if (h.base_offset != want_base) {
        if (found) break;
        if (skipped_is_bad()) return crc_error(skipped, static_cast<size_t>(skipped_at));
        tr->bad_pos = pos + static_cast<int64_t>(at);
        tr->bad_base = want_base;
        return Discontinuous(seg->log_path, pos + static_cast<int64_t>(at), h.base_offset, want_base);
      }
      want_base = h.last_offset() + 1;
      if (!found) {
        if (h.last_offset() < offset) {
          skipped_at = static_cast<int64_t>(at);
          skipped = h;
          at += h.length;
          continue;
        }
        found = true;
        start = at;
        start_base = h.base_offset;
        if (at + h.length > got) {  // the first batch does not fit this window: read it on its own
          need = h.length;
          refill = true;
          break;
        }
        total = h.length;
        at += h.length;
        continue;
      }
      if (total + h.length > max_bytes || at + h.length > got) break;
      total += h.length;
      at += h.length;
    }
    if (found && !refill) break;
    // Another window: at the target batch (it outgrew this one), or where skipping stopped.
    if (!found && (at == 0 || pos + static_cast<int64_t>(at) >= limit)) {
      // Damage as any other (a file cut at a batch boundary): the message then says
      // where reading can go on (FindNextReadable), as for a bad header.
      tr->bad_pos = pos + static_cast<int64_t>(at);
      tr->bad_base = want_base;
      return Status::Error(Code::kCorruptBatch, "batch header past the end of " + seg->log_path + " at " + std::to_string(pos + static_cast<int64_t>(at)));
    }
    pos += static_cast<int64_t>(found ? start : at);
    pos_base = found ? start_base : want_base;
  }
  for (size_t at = start; at < start + total;) {
    BatchHeader h;
    PeekHeader(buf + at, batch::kHeaderSize, &h);
    if (!BatchCrcOk(buf + at, h)) {
      if (at > start) {
        total = at - start;  // serve the good batches before it; the next read reports it
        break;
      }
      return crc_error(h, at);
    }
    at += h.length;
  }
  if (start > 0) std::memmove(buf, buf + start, total);
  *len = total;
  if (!*in_dest) big->resize(total);
  return Status::Ok();
}

Status PartitionLog::OutOfRangeLocked(int64_t offset) const {
  return Status::Error(Code::kOffsetOutOfRange, "offset " + std::to_string(offset) + " is out of range for " + cfg_.label +
                                                    " (valid: " + std::to_string(start_offset_) + ".." +
                                                    std::to_string(durable_next_) + ")");
}

int64_t PartitionLog::LocateLocked(int64_t offset, std::shared_ptr<Segment>* seg, int64_t* base_at) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), offset,
                             [](int64_t o, const std::shared_ptr<Segment>& s) { return o < s->base_offset; });
  *seg = *(it - 1);
  const auto& idx = (*seg)->index;
  auto ie = std::upper_bound(idx.begin(), idx.end(), offset - (*seg)->base_offset,
                             [](int64_t rel, const IndexEntry& e) { return rel < static_cast<int64_t>(e.rel_offset); });
  if (base_at) *base_at = (*seg)->base_offset + (ie != idx.begin() ? (ie - 1)->rel_offset : 0);
  return ie != idx.begin() ? static_cast<int64_t>((ie - 1)->position) : 0;
}

std::string PartitionLog::FindNextReadable(const ReadTrace& tr, int64_t* next_pos, int64_t* next_base) {
  *next_pos = *next_base = -1;
  std::shared_ptr<ReadFd> file;
  int64_t limit = 0;
  int64_t seg_next = 0;
  bool sealed = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    // A stalled reader asks again and again. The answer never changes once found (the
    // bytes up to a readable batch are durable and stay), nor in a sealed segment.
    if ((tr.seg->sealed || tr.seg->next_readable_pos >= 0) && tr.seg->note_pos == tr.bad_pos) {
      *next_pos = tr.seg->next_readable_pos;
      *next_base = tr.seg->next_readable_base;
      return tr.seg->note;
    }
    limit = static_cast<int64_t>(tr.seg->size);
    seg_next = tr.seg->next_offset;
    sealed = tr.seg->sealed;
    if (!FileLocked(tr.seg.get(), &file).ok()) return "";
  }
  // Candidates are found by their magic in 1 MiB windows (overlapping by a header, so
  // none is missed at a window's edge) and checked in a second scanner: a batch that
  // comes after the damaged one in offsets, whose CRC checks out, and which the next
  // batch follows (or which ends the data): a batch held inside a record as its
  // value does not pass for one of the log's.
  FileScanner windows(file->fd, limit);
  FileScanner check(file->fd, limit);
  int err = 0;
  auto follows = [&](int64_t at, const BatchHeader& h) {
    const int64_t end = at + static_cast<int64_t>(h.length);
    if (end == limit) return h.last_offset() + 1 == seg_next;
    BatchHeader n;
    const uint8_t* b = check.Ensure(end, batch::kHeaderSize, &err);
    return b && PeekHeader(b, batch::kHeaderSize, &n) && n.base_offset == h.last_offset() + 1;
  };
  constexpr size_t kWindow = 1u << 20;
  uint8_t magic[4];
  for (int i = 0; i < 4; i++) magic[i] = static_cast<uint8_t>(batch::kMagic >> (8 * i));
  for (int64_t q = tr.bad_pos + 1; *next_pos < 0 && q + static_cast<int64_t>(batch::kHeaderSize) <= limit;) {
    const size_t n = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(kWindow), limit - q));
    const uint8_t* w = windows.Ensure(q, n, &err);
    if (!w) break;
    for (const uint8_t* p = w; *next_pos < 0 && p + batch::kHeaderSize <= w + n; p++) {
      p = static_cast<const uint8_t*>(memmem(p, static_cast<size_t>(w + n - p), magic, sizeof magic));
      if (!p || p + batch::kHeaderSize > w + n) break;
      const int64_t at = q + (p - w);
      BatchHeader h;
      const uint8_t* b = check.Ensure(at, batch::kHeaderSize, &err);
      if (b && PeekHeader(b, batch::kHeaderSize, &h) && h.base_offset > tr.bad_base && h.base_offset < seg_next &&
          at + static_cast<int64_t>(h.length) <= limit && (b = check.Ensure(at, h.length, &err)) != nullptr && BatchCrcOk(b, h) &&
          follows(at, h)) {
        *next_pos = at;
        *next_base = h.base_offset;
      }
    }
    if (q + static_cast<int64_t>(n) >= limit) break;
    q += static_cast<int64_t>(n - batch::kHeaderSize);
  }
  std::string note;
  if (*next_pos >= 0)
    note = "; the next readable batch after it starts at offset " + std::to_string(*next_base) + " (byte " + std::to_string(*next_pos) + ")";
  else if (err)
    return "";
  else if (sealed)
    note = "; no readable batch follows it in this segment: the next segment starts at offset " + std::to_string(seg_next);
  else
    note = "; no readable batch follows it yet (the end is offset " + std::to_string(seg_next) + ")";
  if (sealed || *next_pos >= 0) {
    std::lock_guard<std::mutex> lk(mu_);
    tr.seg->note_pos = tr.bad_pos;
    tr.seg->next_readable_pos = *next_pos;
    tr.seg->next_readable_base = *next_base;
    tr.seg->note = note;
  }
  return note;
}

bool PartitionLog::RepairIndex(const std::shared_ptr<Segment>& seg, uint64_t seen_version) {
  std::lock_guard<std::mutex> one_at_a_time(repair_mu_);
  std::shared_ptr<ReadFd> file;
  int64_t limit = 0;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (seg->index_version != seen_version) return true;  // repaired since the caller located its read
    // Once per segment: every wrong entry came from its index file at open (the writer
    // derives its entries from the batches it stages), and a second walk of damage
    // the first could not pass would find nothing new, at the cost of a whole segment's
    // headers on every retry of a stalled reader.
    if (seg->index_scanned) return false;
    seg->index_scanned = true;
    limit = static_cast<int64_t>(seg->size);
    if (!FileLocked(seg.get(), &file).ok()) return false;
  }
  std::vector<IndexEntry> found;
  FileScanner sc(file->fd, limit);
  int err = 0;
  int64_t pos = 0;
  int64_t want = seg->base_offset;
  uint32_t last_index_pos = 0;
  while (pos < limit) {
    BatchHeader h;
    const uint8_t* p = sc.Ensure(pos, batch::kHeaderSize, &err);
    if (!p || !PeekHeader(p, batch::kHeaderSize, &h) || h.base_offset != want || pos + static_cast<int64_t>(h.length) > limit) break;
    if (pos > 0 && static_cast<uint32_t>(pos) - last_index_pos >= cfg_.index_interval_bytes) {
      found.push_back({static_cast<uint32_t>(h.base_offset - seg->base_offset), static_cast<uint32_t>(pos)});
      last_index_pos = static_cast<uint32_t>(pos);
    }
    want = h.last_offset() + 1;
    pos += h.length;
  }
  const int64_t stop = pos;  // entries at or past it cannot be checked: kept as they are
  std::vector<IndexEntry> persist;
  {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<IndexEntry> merged = found;
    bool changed = false;
    size_t k = 0;
    for (const IndexEntry& e : seg->index) {
      if (static_cast<int64_t>(e.position) < stop) {
        changed = changed || k >= found.size() || found[k].position != e.position || found[k].rel_offset != e.rel_offset;
        k++;
      } else if (merged.empty() || (e.position > merged.back().position && e.rel_offset > merged.back().rel_offset)) {
        merged.push_back(e);
      } else {
        changed = true;  // an unchecked entry that contradicts the checked ones
      }
    }
    changed = changed || k != found.size();
    if (!changed) return false;
    seg->index = std::move(merged);
    seg->index_version++;
    if (seg->sealed) {
      persist = seg->index;
      persist.push_back({static_cast<uint32_t>(seg->next_offset - seg->base_offset), static_cast<uint32_t>(seg->size)});
    } else {
      seg->index_rewrite = true;
    }
  }
  if (!persist.empty()) PersistRepairedIndex(seg, std::move(persist));
  return true;
}

void PartitionLog::PersistRepairedIndex(const std::shared_ptr<Segment>& seg, std::vector<IndexEntry> entries) {
  // Errors are dropped on purpose (see the declaration): the index is a hint.
  const std::string tmp = seg->index_name + ".tmp";
  int fd = openat(dir_fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  bool ok = PwriteFull(fd, reinterpret_cast<const uint8_t*>(entries.data()), entries.size() * sizeof(IndexEntry), 0) == 0 &&
            fdatasync(fd) == 0;
  close(fd);
  if (ok) {
    // Under mu_, and only while retention has not retired the segment: retention takes
    // it out of segments_ under mu_ before it unlinks the files, so the rename can
    // neither bring back a removed index nor be undone by a late unlink.
    std::lock_guard<std::mutex> lk(mu_);
    ok = std::find(segments_.begin(), segments_.end(), seg) != segments_.end() &&
         renameat(dir_fd_, tmp.c_str(), dir_fd_, seg->index_name.c_str()) == 0;
  }
  if (!ok) {
    unlinkat(dir_fd_, tmp.c_str(), 0);
    return;
  }
  SyncDir();
}

bool PartitionLog::TryReadCached(int64_t offset, size_t max_bytes, std::vector<uint8_t>* out) {
  std::lock_guard<std::mutex> lk(mu_);
  if (cache_.empty() || offset < cache_.front().first_offset || offset >= cache_.back().next_offset) return false;
  return ReadFromCache(offset, max_bytes, out).ok();
}

namespace {

// Reads the batch headers of one segment for the fetch planner with small preads:
// the bytes between headers are never read here (they go out by splice/sendfile).
// One 8 KiB window, so a run of small batches costs one pread.
class HeaderReader {
 public:
  HeaderReader(const Segment& seg, int fd, int64_t limit) : seg_(seg), fd_(fd), limit_(limit) {}
  Status At(int64_t pos, BatchHeader* h) {
    if (pos < 0 || pos + static_cast<int64_t>(batch::kHeaderSize) > limit_)
      return Status::Error(Code::kCorruptBatch, "batch header past the readable end of " + seg_.log_path + " at byte " + std::to_string(pos));
    if (pos < win_pos_ || pos + static_cast<int64_t>(batch::kHeaderSize) > win_pos_ + static_cast<int64_t>(win_len_)) {
      size_t want = static_cast<size_t>(std::min<int64_t>(sizeof win_, limit_ - pos));
      size_t got = 0;
      int rc = PreadAll(fd_, win_, want, pos, &got);
      if (rc) return SysError("pread", seg_.log_path, pos, rc);
      if (got < batch::kHeaderSize) return SysError("pread (file shorter than its recorded size)", seg_.log_path, pos, EIO);
      win_pos_ = pos;
      win_len_ = got;
    }
    const uint8_t* p = win_ + (pos - win_pos_);
    if (!PeekHeader(p, batch::kHeaderSize, h) || pos + static_cast<int64_t>(h->length) > limit_)
      return Status::Error(Code::kCorruptBatch, "no valid batch header in " + seg_.log_path + " at byte " + std::to_string(pos));
    return Status::Ok();
  }

 private:
  const Segment& seg_;
  const int fd_;
  int64_t limit_;
  uint8_t win_[8192];
  int64_t win_pos_ = -1;
  size_t win_len_ = 0;
};

}  // namespace

Status PartitionLog::PlanFetch(int64_t offset, size_t max_bytes, size_t memory_limit, FetchPlan* out) {
  ReadTrace tr;
  Status s = PlanFetchOnce(offset, max_bytes, memory_limit, out, &tr);
  if (s.code == Code::kCorruptBatch && tr.entry_pos > 0 && RepairIndex(tr.seg, tr.version)) {
    tr = ReadTrace();
    s = PlanFetchOnce(offset, max_bytes, memory_limit, out, &tr);
  }
  // Only where the plan starts (a later segment's damage ends the plan before it).
  if (s.code == Code::kCorruptBatch && tr.bad_pos >= 0 && tr.seg->base_offset <= offset)
    s = ReadPastDamage(offset, std::move(s), tr, [&](ReadTrace* t) { return PlanFetchOnce(offset, max_bytes, memory_limit, out, t); });
  return s;
}

Status PartitionLog::PlanFetchOnce(int64_t offset, size_t max_bytes, size_t memory_limit, FetchPlan* out, ReadTrace* tr) {
  out->pieces.clear();
  out->bytes = out->memory_bytes = 0;
  max_bytes = std::max<size_t>(max_bytes, 1);
  std::shared_ptr<Segment> seg;
  std::shared_ptr<ReadFd> file;
  int64_t scan = 0;
  int64_t scan_base = 0;  // the base offset the batch at scan must have
  int64_t size = 0;
  uint64_t index_version = 0;
  bool sealed = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    out->start_offset = start_offset_;
    out->end_offset = durable_next_;
    if (offset < start_offset_ || offset > durable_next_) return OutOfRangeLocked(offset);
    if (offset == durable_next_) return Status::Ok();
    // Recent batches: from memory. O_DIRECT wrote them around the page cache, so
    // sendfile would have to read them back from the disk.
    if (!cache_.empty() && offset >= cache_.front().first_offset && offset < cache_.back().next_offset &&
        memory_limit > 0) {
      FetchPiece piece;
      Status s = ReadFromCache(offset, std::min(max_bytes, memory_limit), &piece.bytes);
      if (s.ok() && !piece.bytes.empty() && piece.bytes.size() <= memory_limit) {
        out->bytes = out->memory_bytes = piece.bytes.size();
        out->pieces.push_back(std::move(piece));
        return Status::Ok();
      }
    }
    scan = LocateLocked(offset, &seg, &scan_base);
    if (tr->resume_pos > scan && seg == tr->seg) {
      scan = tr->resume_pos;
      scan_base = tr->resume_base;
    }
    index_version = seg->index_version;
    size = static_cast<int64_t>(seg->size);
    sealed = seg->sealed;
    Status s = FileLocked(seg.get(), &file);
    if (!s.ok()) return s;
  }
  // One segment per reply (as Kafka's fetch): a reply holds its file open until it is
  // sent, so the files replies hold are one per connection — spanning segments,
  // readers that stop reading held one per segment, past any fd limit.
  HeaderReader hr(*seg, file->fd, size);
  BatchHeader h;
  int64_t pos = scan;
  for (int64_t want = scan_base;; want = h.last_offset() + 1) {  // the batch that holds `offset`
    Status s = hr.At(pos, &h);
    if (s.ok() && h.base_offset != want) s = Discontinuous(seg->log_path, pos, h.base_offset, want);
    if (!s.ok()) {
      tr->seg = seg;
      tr->entry_pos = scan;
      tr->version = index_version;
      if (s.code == Code::kCorruptBatch) {
        tr->bad_pos = pos;
        tr->bad_base = want;
      }
      return s;
    }
    if (h.last_offset() >= offset) break;
    pos += h.length;
  }
  const int64_t start = pos;
  int64_t end;
  if (static_cast<uint64_t>(size - start) <= max_bytes) {
    end = size;
  } else {
    // The furthest batch boundary within max_bytes: jump near it by the sparse index,
    // then walk the last few headers.
    const int64_t limit = start + static_cast<int64_t>(max_bytes);
    int64_t want = h.base_offset;  // of the batch at start
    {
      std::lock_guard<std::mutex> lk(mu_);
      const auto& idx = seg->index;
      auto ie = std::upper_bound(idx.begin(), idx.end(), limit,
                                 [](int64_t p, const IndexEntry& e) { return p < static_cast<int64_t>(e.position); });
      if (ie != idx.begin() && (ie - 1)->position > start) {
        pos = (ie - 1)->position;
        want = seg->base_offset + (ie - 1)->rel_offset;
      }
    }
    for (;; want = h.last_offset() + 1) {
      Status s = hr.At(pos, &h);
      if (s.ok() && h.base_offset != want) s = Discontinuous(seg->log_path, pos, h.base_offset, want);
      if (!s.ok()) {
        if (pos == start) return s;
        break;  // send the good batches before it; the next fetch reports it
      }
      if (pos + static_cast<int64_t>(h.length) > limit) break;
      pos += h.length;
    }
    end = pos;
    if (end == start) end = start + h.length;  // at least one whole batch, however large
  }
  // Bytes below `stable` are never written again; the active segment's partial last
  // block is, every cycle. A sealed segment's is not: all of it goes from the file
  // (copies of each sealed segment's last block were not bounded by the memory limits).
  const int64_t stable = sealed ? size : static_cast<int64_t>(AlignDown(static_cast<uint64_t>(size)));
  if (std::min(end, stable) > start) {
    FetchPiece piece;
    piece.file = file;
    piece.pos = start;
    piece.len = static_cast<uint64_t>(std::min(end, stable) - start);
    out->pieces.push_back(std::move(piece));
  }
  if (end > std::max(start, stable)) {
    const int64_t from = std::max(start, stable);
    FetchPiece piece;
    piece.bytes.resize(static_cast<size_t>(end - from));
    size_t got = 0;
    int rc = PreadAll(file->fd, piece.bytes.data(), piece.bytes.size(), from, &got);
    if (rc || got != piece.bytes.size()) return SysError("pread", seg->log_path, from, rc ? rc : EIO);
    out->memory_bytes = piece.bytes.size();
    out->pieces.push_back(std::move(piece));
  }
  out->bytes = static_cast<uint64_t>(end - start);
  return Status::Ok();
}

namespace {
// The producer-state scan checks a batch's CRC this many bytes at a time.
constexpr int64_t kCrcPiece = 256 * 1024;
}  // namespace

Status PartitionLog::RecentProducerBatches(uint64_t max_bytes, int64_t from_offset, size_t max_entries, size_t per_producer,
                                           std::vector<ProducerBatch>* out) {
  out->clear();
  if ((max_bytes == 0 && from_offset < 0) || max_entries == 0 || per_producer == 0) return Status::Ok();
  struct Span {
    std::shared_ptr<Segment> seg;
    int64_t from;
    int64_t size;
    int64_t window = -1;  // from = the index entry at or before this byte position; else at from_offset
    uint64_t version = 0;  // seg->index_version when `from` was found
  };
  // With mu_ held: where a span's walk starts, from the sparse index.
  auto start_of = [&](Span& sp) -> int64_t {
    sp.version = sp.seg->index_version;
    if (sp.window < 0) {
      std::shared_ptr<Segment> holding;
      return sp.seg->base_offset < from_offset ? LocateLocked(from_offset, &holding) : 0;
    }
    const auto& idx = sp.seg->index;
    auto ie = std::upper_bound(idx.begin(), idx.end(), sp.window,
                               [](int64_t p, const IndexEntry& e) { return p < static_cast<int64_t>(e.position); });
    return ie != idx.begin() ? static_cast<int64_t>((ie - 1)->position) : 0;
  };
  std::vector<Span> spans;  // newest segment first
  bool capped = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (from_offset >= 0) {
      uint64_t total = 0;
      for (size_t i = segments_.size(); i-- > 0;) {
        const std::shared_ptr<Segment>& seg = segments_[i];
        const int64_t size = static_cast<int64_t>(seg->size);
        if (seg->next_offset <= from_offset) break;  // this one and the older ones end before it
        if (size == 0) continue;
        // From a batch boundary: the sparse-index entry at or before from_offset (the
        // segment found is this one: every newer one starts past from_offset).
        Span sp{seg, 0, size};
        sp.from = start_of(sp);
        spans.push_back(sp);
        total += static_cast<uint64_t>(size - sp.from);
        if (seg->base_offset <= from_offset) break;
      }
      if (total > max_bytes) {
        // Too far back to read at every open: the newest max_bytes, like a log without a snapshot.
        spans.clear();
        capped = true;
      }
    }
    uint64_t need = from_offset >= 0 && !capped ? 0 : max_bytes;
    for (size_t i = segments_.size(); i-- > 0 && need > 0;) {
      const std::shared_ptr<Segment>& seg = segments_[i];
      const int64_t size = static_cast<int64_t>(seg->size);
      if (size == 0) continue;
      Span sp{seg, 0, size};
      if (static_cast<uint64_t>(size) > need) {
        // Start at a batch boundary: the sparse-index entry at or before the window.
        sp.window = size - static_cast<int64_t>(need);
        sp.from = start_of(sp);
        need = 0;
      } else {
        need -= static_cast<uint64_t>(size);
      }
      spans.push_back(sp);
    }
  }
  // Keeps what the broker's table would: the newest per_producer batches of each
  // producer, at most max_entries in all (oldest first, as found).
  auto keep_newest = [&] {
    std::unordered_map<int64_t, size_t> kept_of;
    std::vector<ProducerBatch> kept;
    for (auto it = out->rbegin(); it != out->rend() && kept.size() < max_entries; ++it)
      if (kept_of[it->producer_id]++ < per_producer) kept.push_back(*it);
    std::reverse(kept.begin(), kept.end());
    out->swap(kept);
  };
  // Bytes below a segment's size never change, so they are read unlocked.
  Status first_error = Status::Ok();
  auto fail = [&](Status s) {
    // What was found before the gap is dropped: a producer whose newer batches are
    // in the gap would be taken to stop before it, and its next batch refused as out
    // of order. Newer segments still count; a producer unknown here starts afresh.
    if (first_error.ok()) first_error = std::move(s);
    out->clear();
  };
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
    const Segment& seg = *it->seg;
    // One segment's file at a time, and a closed one opened only for this walk: the
    // window can span more segments than the bound on open files, and the walk
    // should not count as reads in that bound's LRU order.
    std::shared_ptr<ReadFd> file;
    {
      std::lock_guard<std::mutex> lk(mu_);
      file = it->seg->file;
    }
    if (!file) {
      int fd = openat(dir_fd_, seg.log_name.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        fail(SysError("open", seg.log_path, -1, errno));
        continue;
      }
      file = std::make_shared<ReadFd>(fd);
    }
    FileScanner sc(file->fd, it->size);
    int err = 0;
    bool repaired = false;
    for (int64_t pos = it->from; pos < it->size;) {
      BatchHeader h;
      const uint8_t* p = sc.Ensure(pos, batch::kHeaderSize, &err);
      bool ok = p && PeekHeader(p, batch::kHeaderSize, &h);
      // An idempotent batch counts only whole: its CRC covers the producer fields,
      // and recovery checked only the bytes after each segment's newest index entry.
      // Summed in pieces, so a 64 MiB batch does not need a 64 MiB window.
      if (ok && h.producer_id > 0 && h.base_sequence >= 0) {
        uint32_t crc = 0;
        for (int64_t at = pos + static_cast<int64_t>(batch::kCrcStart), stop = pos + h.length; ok && at < stop;) {
          const size_t n = static_cast<size_t>(std::min<int64_t>(stop - at, kCrcPiece));
          const uint8_t* q = sc.Ensure(at, n, &err);
          if (q) crc = Crc32c(q, n, crc);
          ok = q != nullptr;
          at += static_cast<int64_t>(n);
        }
        ok = ok && crc == h.crc;
      }
      if (!ok && !err && pos == it->from && pos > 0 && !repaired && RepairIndex(it->seg, it->version)) {
        // No batch where an index entry points: the entry was wrong (rebuilt now).
        repaired = true;
        {
          std::lock_guard<std::mutex> lk(mu_);
          pos = it->from = start_of(*it);
        }
        continue;
      }
      if (!ok) {
        fail(err ? SysError("pread", seg.log_path, pos, err)
                 : Status::Error(Code::kCorruptBatch, "no valid batch at byte " + std::to_string(pos) + " of " + seg.log_path));
        break;  // the rest of this segment cannot be walked
      }
      if (h.producer_id > 0 && h.base_sequence >= 0 && h.base_offset + h.record_count > from_offset) {
        out->push_back({h.producer_id, h.base_sequence, h.record_count, h.base_offset});
        if (out->size() >= 2 * max_entries) keep_newest();  // a bound on the memory, in halves
      }
      pos += h.length;
    }
  }
  keep_newest();
  if (capped && first_error.ok())
    return Status::Error(Code::kUnavailable, "the log after offset " + std::to_string(from_offset) + " is longer than " +
                                                 std::to_string(max_bytes) + " bytes; read the newest " + std::to_string(max_bytes));
  return first_error;
}

void PartitionLog::Offsets(int64_t* start, int64_t* end) {
  std::lock_guard<std::mutex> lk(mu_);
  *start = start_offset_;
  *end = durable_next_;
}

PartitionInfo PartitionLog::Info() {
  std::lock_guard<std::mutex> lk(mu_);
  PartitionInfo i{};
  i.start_offset = start_offset_;
  i.end_offset = durable_next_;
  for (auto& s : segments_) i.bytes += s->size;
  i.segments = static_cast<uint32_t>(segments_.size());
  i.direct_io = direct_;
  i.block_size = block_;
  i.cached_bytes = cache_bytes_;
  return i;
}

}  // namespace uringmq
