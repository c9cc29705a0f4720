#include "fetch/fetch_bench.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "fetch/fetch_protocol.h"

namespace uringmq {
namespace {

using Clock = std::chrono::steady_clock;

std::string Err(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Closes the fd it holds when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

bool WriteAll(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t r = recv(fd, p, n, MSG_WAITALL);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

BenchResult SendfileCeiling(const std::string& path, uint64_t data_bytes, double seconds) {
  BenchResult r;
  Fd file{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return r.error = Err(("open " + path).c_str()), r;
  Fd lis{socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (lis.fd < 0) return r.error = Err("socket"), r;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (bind(lis.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(lis.fd, 1) != 0 ||
      getsockname(lis.fd, reinterpret_cast<sockaddr*>(&a), &al) != 0)
    return r.error = Err("bind/listen loopback"), r;
  Fd out{socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (out.fd < 0 || connect(out.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return r.error = Err("connect"), r;
  Fd in{accept4(lis.fd, nullptr, nullptr, SOCK_CLOEXEC)};
  if (in.fd < 0) return r.error = Err("accept"), r;

  std::atomic<bool> failed{false};
  const auto t0 = Clock::now();
  const auto until = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::thread sender([&] {
    off_t off = 0;
    while (Clock::now() < until) {
      if (static_cast<uint64_t>(off) >= data_bytes) off = 0;
      ssize_t n = sendfile(out.fd, file.fd, &off, static_cast<size_t>(std::min<uint64_t>(data_bytes - off, 1u << 20)));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failed = true;
        break;
      }
    }
    (void)shutdown(out.fd, SHUT_WR);  // EOF tells the reader we are done
  });
  std::vector<uint8_t> buf(1u << 20);
  for (;;) {
    ssize_t n = recv(in.fd, buf.data(), buf.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    r.bytes += static_cast<uint64_t>(n);
  }
  sender.join();
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (failed) r.error = "sendfile failed";
  return r;
}

BenchResult FetchDrain(const FetchDrainOptions& o) {
  namespace fp = fetchproto;
  BenchResult r;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(o.host.c_str(), std::to_string(o.port).c_str(), &hints, &res) != 0 || !res)
    return r.error = "cannot resolve " + o.host, r;
  Fd s{socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  int rc = s.fd < 0 ? -1 : connect(s.fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  if (rc != 0) return r.error = Err("connect to the fetch listener"), r;
  int one = 1;
  (void)setsockopt(s.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

  std::vector<uint8_t> hello(fp::kClientHelloFixed + o.token.size());
  fp::Put32(hello.data(), fp::kMagic);
  fp::Put16(hello.data() + 4, fp::kVersion);
  fp::Put16(hello.data() + 6, static_cast<uint16_t>(o.token.size()));
  std::memcpy(hello.data() + 8, o.token.data(), o.token.size());
  uint8_t sh[fp::kServerHelloSize];
  if (!WriteAll(s.fd, hello.data(), hello.size()) || !ReadAll(s.fd, sh, sizeof sh)) return r.error = Err("handshake"), r;
  if (fp::Get16(sh + 6) != 0) return r.error = "handshake refused, error " + std::to_string(fp::Get16(sh + 6)), r;

  std::vector<uint8_t> req(fp::kFetchFixed + o.topic.size());
  // Replies are read through one 1 MiB buffer, as the ceiling's reader reads, and
  // batch headers are picked out as they stream by (a header may straddle two reads).
  std::vector<uint8_t> buf(1u << 20);
  uint8_t bh[64];
  int64_t offset = o.from_offset;
  const auto t0 = Clock::now();
  const auto until = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  uint32_t corr = 0;
  while (Clock::now() < until) {
    uint8_t* q = req.data();
    fp::Put32(q, static_cast<uint32_t>(req.size() - 4));
    q[4] = fp::kTypeFetch;
    q[5] = 0;
    fp::Put16(q + 6, static_cast<uint16_t>(o.topic.size()));
    fp::Put32(q + 8, ++corr);
    fp::Put32(q + 12, o.partition);
    fp::Put64(q + 16, static_cast<uint64_t>(offset));
    fp::Put32(q + 24, o.max_bytes);
    fp::Put32(q + 28, 0);
    std::memcpy(q + fp::kFetchFixed, o.topic.data(), o.topic.size());
    uint8_t h[fp::kResponseHeaderSize];
    if (!WriteAll(s.fd, req.data(), req.size()) || !ReadAll(s.fd, h, sizeof h)) return r.error = Err("fetch"), r;
    const uint16_t err = fp::Get16(h + 4);
    if (err != 0) return r.error = "fetch error " + std::to_string(err) + " at offset " + std::to_string(offset), r;
    const uint64_t len = fp::Get32(h + 24);
    r.requests++;
    r.bytes += len;
    if (len == 0) {
      offset = o.from_offset;  // the end: go round again
      continue;
    }
    uint64_t done = 0;        // bytes of the body read so far
    uint64_t next_hdr = 0;    // body position of the next batch header
    size_t hdr_have = 0;      // bytes of that header gathered so far
    const int64_t fetched_at = offset;
    while (done < len) {
      ssize_t n = recv(s.fd, buf.data(), static_cast<size_t>(std::min<uint64_t>(buf.size(), len - done)), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return r.error = Err("fetch body"), r;
      const uint64_t end = done + static_cast<uint64_t>(n);
      while (next_hdr < end) {
        const uint64_t at = next_hdr + hdr_have;  // body position of the next header byte wanted
        const size_t take = static_cast<size_t>(std::min<uint64_t>(64 - hdr_have, end - at));
        std::memcpy(bh + hdr_have, buf.data() + (at - done), take);
        hdr_have += take;
        if (hdr_have < 64) break;  // the rest of this header comes with the next read
        const uint32_t blen = fp::Get32(bh + 4);
        const int64_t base = static_cast<int64_t>(fp::Get64(bh + 8));
        const uint32_t count = fp::Get32(bh + 24);
        if (blen < 64 || next_hdr + blen > len) return r.error = "malformed batch in a response", r;
        const int64_t first = std::max(base, fetched_at);
        if (base + count > first) r.records += static_cast<uint64_t>(base + count - first);
        offset = base + count;
        next_hdr += blen;
        hdr_have = 0;
      }
      done = end;
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

}  // namespace uringmq
