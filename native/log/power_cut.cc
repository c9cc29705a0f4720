#include "log/power_cut.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

#include "log/file_util.h"

namespace uringmq {
namespace {

constexpr uint32_t kMagic = 0x54554350;  // "PCUT"
constexpr uint32_t kEnd = 0x444e4550;    // "PEND": a record cut short by the kill has none
enum : uint32_t { kWrite = 1, kDurable = 2, kFlushed = 3 };

struct RecordHead {
  uint32_t magic;
  uint32_t type;
  uint64_t seq;  // kWrite, kDurable: the write; kFlushed: writes below it are covered
  uint64_t dev;
  uint64_t ino;  // kWrite: the file written, which its path may no longer name (deleteTopic)
  int64_t off;
  uint64_t len;  // old bytes that follow the path (kWrite)
  uint32_t path_len;
  uint32_t pad;
};

// The hook's own failures cannot be reported as the log's (they are no I/O error of the
// broker's), and going on would make every later verdict of the test meaningless.
[[noreturn]] void Die(const std::string& what, int err) {
  std::fprintf(stderr, "uringmq test_power_cut: %s: %s\n", what.c_str(), std::strerror(err));
  std::abort();
}

struct stat StatOf(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) Die("fstat", errno);
  return st;
}

// The bytes [off, off + len) of the file now, zeros past its end (what an unwritten
// extent or a hole reads). The log's fd may be O_DIRECT: read into aligned memory, and
// through a buffered descriptor of the same file if the direct read is refused.
void ReadOld(int fd, const std::string& path, int64_t off, size_t len, uint8_t* out) {
  void* mem = nullptr;
  const size_t cap = (len + 4095) & ~static_cast<size_t>(4095);
  if (posix_memalign(&mem, 4096, std::max<size_t>(cap, 4096)) != 0) Die("posix_memalign", ENOMEM);
  size_t got = 0;
  int rc = PreadAll(fd, static_cast<uint8_t*>(mem), len, off, &got);
  if (rc == EINVAL) {
    int bfd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (bfd < 0) Die("open " + path, errno);
    rc = PreadAll(bfd, static_cast<uint8_t*>(mem), len, off, &got);
    close(bfd);
  }
  if (rc) Die("read old bytes of " + path, rc);
  std::memcpy(out, mem, got);
  std::memset(out + got, 0, len - got);
  free(mem);
}

}  // namespace

Status PowerCutJournal::Open(const std::string& path, uint64_t kill_after, std::unique_ptr<PowerCutJournal>* out) {
  std::unique_ptr<PowerCutJournal> j(new PowerCutJournal());
  j->path_ = path;
  j->kill_after_ = kill_after;
  j->fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (j->fd_ < 0) return SysError("open power-cut journal", path, -1, errno);
  *out = std::move(j);
  return Status::Ok();
}

PowerCutJournal::~PowerCutJournal() {
  if (fd_ >= 0) close(fd_);
}

void PowerCutJournal::Append(const std::vector<uint8_t>& rec) {
  // One write(2) a record: a kill mid-record leaves it without its end mark, and the
  // reader drops it (a write whose record is cut was never issued: the record comes first).
  size_t done = 0;
  while (done < rec.size()) {
    ssize_t n = write(fd_, rec.data() + done, rec.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Die("write " + path_, n < 0 ? errno : EIO);
    done += static_cast<size_t>(n);
  }
}

uint64_t PowerCutJournal::Record(int fd, const std::string& path, int64_t off, size_t len) {
  const struct stat st = StatOf(fd);
  const uint64_t dev = static_cast<uint64_t>(st.st_dev);
  RecordHead h{kMagic, kWrite, next_seq_++, dev, static_cast<uint64_t>(st.st_ino), off, len, static_cast<uint32_t>(path.size()), 0};
  std::vector<uint8_t> rec(sizeof h + path.size() + len + sizeof kEnd);
  std::memcpy(rec.data(), &h, sizeof h);
  std::memcpy(rec.data() + sizeof h, path.data(), path.size());
  ReadOld(fd, path, off, len, rec.data() + sizeof h + path.size());
  std::memcpy(rec.data() + rec.size() - sizeof kEnd, &kEnd, sizeof kEnd);
  Append(rec);
  pending_.push_back({h.seq, dev});
  return h.seq;
}

uint64_t PowerCutJournal::BeforeWrites(const std::vector<IoOp>& writes) {
  if (kill_armed_) Kill();  // no flush came after the held batch
  const uint64_t token = next_seq_;
  for (const IoOp& w : writes) Record(w.fd, *w.path, w.offset, w.len);
  return token;
}

void PowerCutJournal::BeforeWrite(int fd, const std::string& path, int64_t off, size_t len) {
  if (kill_armed_) Kill();
  Record(fd, path, off, len);
}

void PowerCutJournal::AfterWrites(const std::vector<IoOp>& writes, uint64_t token) {
  for (size_t i = 0; i < writes.size(); i++) {
    const IoOp& w = writes[i];
    if (!w.dsync || w.error) continue;
    const uint64_t seq = token + i;
    RecordHead h{kMagic, kDurable, seq, 0, 0, 0, 0, 0, 0};
    std::vector<uint8_t> rec(sizeof h + sizeof kEnd);
    std::memcpy(rec.data(), &h, sizeof h);
    std::memcpy(rec.data() + sizeof h, &kEnd, sizeof kEnd);
    Append(rec);
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [seq](const Pending& p) { return p.seq == seq; }),
                   pending_.end());
    Flushed(w.fd, token);
  }
  if (pending_.empty()) Compact();
  else if (kill_after_ > 0 && ++held_batches_ >= kill_after_) kill_armed_ = true;
}

void PowerCutJournal::Kill() {
  // Long enough for the JS thread to hand out completions the sink already passed it.
  constexpr int kKillPauseMs = 100;
  usleep(kKillPauseMs * 1000);
  raise(SIGKILL);
  std::abort();  // not reached
}

void PowerCutJournal::AfterSyncs(const std::vector<IoOp>& syncs, uint64_t token) {
  for (const IoOp& s : syncs)
    if (!s.error) Flushed(s.fd, token);
}

void PowerCutJournal::Flushed(int fd, uint64_t token) {
  const uint64_t dev = static_cast<uint64_t>(StatOf(fd).st_dev);
  RecordHead h{kMagic, kFlushed, token, dev, 0, 0, 0, 0, 0};
  std::vector<uint8_t> rec(sizeof h + sizeof kEnd);
  std::memcpy(rec.data(), &h, sizeof h);
  std::memcpy(rec.data() + sizeof h, &kEnd, sizeof kEnd);
  Append(rec);
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [&](const Pending& p) { return p.dev == dev && p.seq < token; }),
                 pending_.end());
  if (pending_.empty()) Compact();
}

void PowerCutJournal::Compact() {
  // Nothing to undo: start the journal afresh, which keeps it to about one cycle's
  // writes in sync mode. A kill during the truncation leaves it empty or whole, both right.
  if (ftruncate(fd_, 0) != 0) Die("ftruncate " + path_, errno);
}

Status SimulatePowerCut(const std::string& journal, uint64_t seed, PowerCutResult* out) {
  *out = PowerCutResult{};
  int fd = open(journal.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SysError("open power-cut journal", journal, -1, errno);
  std::vector<uint8_t> data;
  {
    struct stat st;
    if (fstat(fd, &st) != 0) {
      int e = errno;
      close(fd);
      return SysError("fstat", journal, -1, e);
    }
    data.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    int rc = data.empty() ? 0 : PreadAll(fd, data.data(), data.size(), 0, &got);
    close(fd);
    if (rc) return SysError("read", journal, 0, rc);
    data.resize(got);
  }
  struct Write {
    uint64_t seq;
    uint64_t dev;
    uint64_t ino;
    std::string path;
    int64_t off;
    size_t len;
    size_t old_at;  // where its old bytes are in `data`
  };
  std::vector<Write> writes;
  std::vector<uint64_t> durable;
  std::unordered_map<uint64_t, uint64_t> flushed_below;  // dev -> highest token flushed
  for (size_t at = 0;;) {
    RecordHead h;
    if (data.size() - at < sizeof h) break;
    std::memcpy(&h, data.data() + at, sizeof h);
    if (h.magic != kMagic) return Status::Error(Code::kIoError, "power-cut journal " + journal + " is damaged at byte " + std::to_string(at));
    const size_t body = h.type == kWrite ? h.path_len + h.len : 0;
    if (data.size() - at - sizeof h < body + sizeof kEnd) break;  // cut short by the kill: never acted on
    uint32_t end;
    std::memcpy(&end, data.data() + at + sizeof h + body, sizeof end);
    if (end != kEnd) break;
    if (h.type == kWrite) {
      writes.push_back({h.seq, h.dev, h.ino, std::string(reinterpret_cast<const char*>(data.data() + at + sizeof h), h.path_len), h.off,
                        static_cast<size_t>(h.len), at + sizeof h + h.path_len});
    } else if (h.type == kDurable) {
      durable.push_back(h.seq);
    } else if (h.type == kFlushed) {
      uint64_t& f = flushed_below[h.dev];
      f = std::max(f, h.seq);
    }
    at += sizeof h + body + sizeof kEnd;
  }
  std::sort(durable.begin(), durable.end());
  out->writes = writes.size();
  uint64_t rng = seed * 0x9E3779B97F4A7C15ull + 1;
  auto coin = [&rng]() {  // xorshift64
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (rng & 1) != 0;
  };
  std::map<std::string, int> files;
  Status result = Status::Ok();
  // Newest first: a sector written twice ends with the bytes before the first write
  // (or, keeping sectors, any of the versions a disk could have persisted).
  for (auto it = writes.rbegin(); it != writes.rend() && result.ok(); ++it) {
    const Write& w = *it;
    auto f = flushed_below.find(w.dev);
    if ((f != flushed_below.end() && w.seq < f->second) || std::binary_search(durable.begin(), durable.end(), w.seq)) continue;
    out->lost_writes++;
    auto [fi, fresh] = files.emplace(w.path, -1);
    if (fresh) {
      fi->second = open(w.path.c_str(), O_RDWR | O_CLOEXEC);
      if (fi->second < 0 && errno != ENOENT) result = SysError("open", w.path, -1, errno);
    }
    const int wfd = fi->second;
    if (wfd < 0) continue;  // removed since (retention): nothing to put back
    struct stat st;
    if (fstat(wfd, &st) != 0) {
      result = SysError("fstat", w.path, -1, errno);
      break;
    }
    // Another file under that name now (the topic deleted and made again): the one
    // written is in the trash or gone, and this one must not be touched.
    if (static_cast<uint64_t>(st.st_dev) != w.dev || static_cast<uint64_t>(st.st_ino) != w.ino) continue;
    // Never past the file's end now: a write that extended the file (zeros ahead of the
    // data) comes back as zeros below its size, which reads as the end of the log too.
    const int64_t end = std::min<int64_t>(w.off + static_cast<int64_t>(w.len), st.st_size);
    for (int64_t s = w.off; s < end; s += 512) {
      if (seed != 0 && coin()) {
        out->sectors_kept++;
        continue;
      }
      const size_t n = static_cast<size_t>(std::min<int64_t>(512, end - s));
      int rc = PwriteFull(wfd, data.data() + w.old_at + static_cast<size_t>(s - w.off), n, s);
      if (rc) {
        result = SysError("pwrite (undo)", w.path, s, rc);
        break;
      }
      out->sectors_undone++;
    }
  }
  for (auto& [p, f] : files) {
    if (f < 0) continue;
    if (fsync(f) != 0 && result.ok()) result = SysError("fsync", p, -1, errno);
    close(f);
  }
  if (result.ok() && unlink(journal.c_str()) != 0) result = SysError("unlink", journal, -1, errno);
  return result;
}

}  // namespace uringmq
