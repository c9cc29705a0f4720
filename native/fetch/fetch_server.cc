#include "fetch/fetch_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "common/clock.h"
#include "fetch/fetch_protocol.h"
#include "uring/io_uring.h"

namespace uringmq {

void PublishSignal::Notify() {
  // Pairs with the fence in SetWaiting(): the batches this cycle published are
  // visible (the partition mutex was released) before we look at `waiting_`.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!waiting_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lk(mu_);
  if (fd_ < 0) return;
  uint64_t one = 1;
  // Cannot block (the counter never nears its limit); a failure would only cost a
  // long-poll its early answer, which its deadline still gives.
  ssize_t n = write(fd_, &one, sizeof one);
  (void)n;
}

namespace {

using fetchproto::Error;

constexpr size_t kInCap = 1024;  // a request or a hello always fits
static_assert(kInCap >= fetchproto::kMaxRequestBytes, "input buffer holds a whole request");
static_assert(kInCap >= fetchproto::kClientHelloFixed + fetchproto::kMaxTokenBytes, "input buffer holds a whole hello");
constexpr size_t kPipeBytes = 1u << 20;  // splice chunk: one pipe's worth per round trip
// Pipes are lent one per connection while its reply is sent, however many that is: a
// fixed number lent at once let slow readers hold them all and stall every other
// reply. The first kLargePipes are kPipeBytes, later ones the default 64 KiB (what
// pipes pin of the page cache stays bounded), and at most kMaxIdlePipes wait in the pool.
constexpr size_t kLargePipes = 64;
constexpr size_t kMaxIdlePipes = 64;
constexpr int kPipeRetryMs = 50;           // retry of a pipe2 refused with no pipe lent out
constexpr int64_t kLingerMs = 1000;      // after a final error reply, before closing
// Refused connections (TOO_MANY_CONNECTIONS) kept half-closed at once, draining their
// client's input; past this they are closed at once, as a flood of them would hold fds.
constexpr size_t kMaxLingeringRefusals = 64;
constexpr int64_t kNoDeadline = INT64_MAX;

enum class ConnState : uint8_t {
  kHandshake,  // waiting for the client hello
  kReady,      // waiting for a request
  kParked,     // long-poll at the end of the log
  kSending,    // a reply is going out
  kLinger,     // a final error reply went out; waiting for the peer to close
};

// One client connection. Owned by the fetch thread; the FetchIo fields are the
// backend's bookkeeping of what the kernel is doing with it.
struct Conn {
  int fd = -1;
  size_t slot = 0;  // index in FetchLoop::conns_
  ConnState state = ConnState::kHandshake;
  uint16_t version = 0;  // the protocol version the hello agreed on (0 until then)
  bool closing = false;
  bool close_after_send = false;
  bool refusal = false;  // refused on arrival: in FetchLoop::refusals_, not conns_
  int64_t deadline = kNoDeadline;

  uint8_t in[kInCap];
  size_t in_len = 0;
  // Where the receive in flight writes: in_len when it was issued. A reply finishing
  // meanwhile consumes the requests before it, so its bytes may land above in_len.
  size_t recv_base = 0;
  bool recv_queued = false;  // epoll: a receive's result is queued, not yet handled

  // The request being answered.
  uint32_t corr = 0;
  std::shared_ptr<PartitionLog> part;
  int64_t offset = 0;
  uint32_t max_bytes = 0;
  // The reply: a header (or the server hello), then the plan's pieces in order.
  uint8_t hdr[fetchproto::kResponseHeaderSize];
  size_t hdr_len = 0;
  size_t hdr_done = 0;
  FetchPlan plan;
  size_t piece = 0;
  uint64_t piece_done = 0;
  uint64_t mem_charged = 0;

  // --- FetchIo bookkeeping ---
  // From issuing a receive until OnRecv has handled its result, not only until it
  // completed: a second receive issued in between would write over the first's bytes.
  bool recv_busy = false;
  bool send_busy = false;
  int ops = 0;  // io_uring: submitted and not yet completed
  const uint8_t* send_ptr = nullptr;
  size_t send_len = 0;
  bool send_more = false;
  bool is_file = false;
  int file_fd = -1;
  int64_t file_off = 0;
  size_t file_len = 0;
  bool readable = true;  // epoll (edge-triggered): not known to be drained
  bool writable = true;
  int pipe_r = -1;  // io_uring: the pipe lent for file → socket splices
  int pipe_w = -1;
  size_t pipe_cap = 0;
  int64_t pipe_bytes = 0;  // in the pipe, not yet on the socket
  int splice_pending = 0;  // CQEs of the linked pair still to come
  int64_t splice_in_res = 0;
  int64_t splice_out_res = 0;
  size_t delivered = 0;  // bytes of the current SendFile on the socket
  bool waiting_pipe = false;
  // Set by the backend when the current SendFile failed on the file's side, not the
  // socket's: the errno, or -1 when the file ended before the range did.
  int file_error = 0;

  // What every backend records when a send starts; each then issues it its own way.
  void BeginSend(const uint8_t* p, size_t n, bool more) {
    send_busy = true;
    is_file = false;
    send_ptr = p;
    send_len = n;
    send_more = more;
  }
  void BeginSendFile(int from_fd, int64_t off, size_t n, bool more) {
    send_busy = true;
    is_file = true;
    file_fd = from_fd;
    file_off = off;
    file_len = n;
    send_more = more;
  }
};

struct IoEvent {
  // kProgress: part of a send reached the socket while the rest is still in flight
  // (a file range the backend moves in several steps before its kSent).
  enum Kind : uint8_t { kAccepted, kRecv, kSent, kProgress, kWake };
  Kind kind;
  Conn* c;
  int64_t res;  // kAccepted: fd or -errno; kRecv/kSent: bytes or -errno; kProgress: bytes
};

// How the fetch thread talks to the kernel. Operations complete later, as events
// from Wait(): a connection has at most one receive and one send (or file send) in
// flight. Owned by the fetch thread.
class FetchIo {
 public:
  virtual ~FetchIo() = default;
  virtual Status Init(int listen_fd, int wake_fd) = 0;
  virtual void Accept() = 0;  // one accept; re-armed by the caller after each kAccepted
  virtual void Watch(Conn* c) = 0;
  virtual void Recv(Conn* c) = 0;  // into c->in + c->in_len
  virtual void Send(Conn* c, const uint8_t* p, size_t n, bool more) = 0;
  virtual void SendFile(Conn* c, int fd, int64_t off, size_t n, bool more) = 0;
  virtual void ResponseDone(Conn* c) {}
  // Makes whatever is in flight for c finish soon; no events for c after this.
  virtual void Cancel(Conn* c) = 0;
  virtual bool Idle(const Conn* c) const = 0;  // c may be freed
  virtual void Release(Conn* c) {}              // c is about to be freed
  virtual bool Quiescent() const = 0;           // no accept or wake-up read in flight
  virtual void StopAccepting() = 0;
  virtual void Wait(int timeout_ms, std::vector<IoEvent>* out) = 0;
};

// ---------------------------------------------------------------------------------
// io_uring: every socket operation is an SQE; a file range goes out as a linked pair
// of splices, file → pipe then pipe → socket, which one io-wq worker runs back to
// back. Sockets are non-blocking, so a full socket buffer returns EAGAIN (then a
// POLL_ADD waits for room) instead of parking a kernel worker on a slow reader.
class UringIo final : public FetchIo {
 public:
  static std::unique_ptr<UringIo> Create(std::string* why) {
    auto ring = IoUring::Create(512, why);
    if (!ring) return nullptr;
    for (int op : {IORING_OP_ACCEPT, IORING_OP_RECV, IORING_OP_SEND, IORING_OP_SPLICE, IORING_OP_POLL_ADD,
                   IORING_OP_ASYNC_CANCEL}) {
      if (!ring->Supports(op)) {
        *why = "io_uring: kernel lacks opcode " + std::to_string(op) + " needed by the fetch plane";
        return nullptr;
      }
    }
    if (!(ring->features() & IORING_FEAT_EXT_ARG)) {
      *why = "io_uring: no IORING_FEAT_EXT_ARG (kernel older than 5.11)";
      return nullptr;
    }
    // Splices run on io-wq workers; cap them so a burst of file reads that miss the
    // page cache cannot spawn a thread per connection. Older kernels lack the
    // register op: then the kernel's own limit (RLIMIT_NPROC) applies.
    (void)ring->SetMaxWorkers(4, 16);
    std::unique_ptr<UringIo> io(new UringIo());
    io->ring_ = std::move(ring);
    return io;
  }

  ~UringIo() override {
    ring_.reset();  // first: nothing may complete into memory freed below
    for (auto& p : pool_) {
      close(p.r);
      close(p.w);
    }
  }

  Status Init(int listen_fd, int wake_fd) override {
    listen_fd_ = listen_fd;
    wake_fd_ = wake_fd;
    SubmitWakeRead();
    return Status::Ok();
  }

  void Accept() override {
    if (accept_busy_ || !accepting_) return;
    io_uring_sqe* sqe = Sqe(1);
    sqe->opcode = IORING_OP_ACCEPT;
    sqe->fd = listen_fd_;
    sqe->accept_flags = SOCK_NONBLOCK | SOCK_CLOEXEC;
    sqe->user_data = kTagAccept;
    accept_busy_ = true;
  }

  void StopAccepting() override {
    accepting_ = false;
    // Wakes a pending accept (EINVAL); the listener is closed by the owner later.
    if (shutdown(listen_fd_, SHUT_RDWR) != 0 && accept_busy_) {
      io_uring_sqe* sqe = Sqe(1);
      sqe->opcode = IORING_OP_ASYNC_CANCEL;
      sqe->addr = kTagAccept;
      sqe->user_data = kTagCancel;
      cancels_++;
    }
  }

  void Watch(Conn*) override {}

  void Recv(Conn* c) override {
    c->recv_busy = true;
    SubmitRecv(c);
  }

  void Send(Conn* c, const uint8_t* p, size_t n, bool more) override {
    c->BeginSend(p, n, more);
    SubmitSend(c);
  }

  void SendFile(Conn* c, int fd, int64_t off, size_t n, bool more) override {
    c->BeginSendFile(fd, off, n, more);
    c->delivered = 0;
    if (c->pipe_w < 0 && !TakePipe(c)) {
      c->waiting_pipe = true;  // every pipe is lent out: wait for one
      pipe_waiters_.push_back(c);
      return;
    }
    StartSplice(c);
  }

  void ResponseDone(Conn* c) override { GivePipe(c); }

  void Cancel(Conn* c) override {
    if (c->waiting_pipe) {
      pipe_waiters_.erase(std::remove(pipe_waiters_.begin(), pipe_waiters_.end(), c), pipe_waiters_.end());
      c->waiting_pipe = false;
    }
    c->recv_busy = c->send_busy = false;
    // shutdown() completes a pending recv (0), send or poll (EPIPE/HUP) by itself;
    // the cancel also catches anything still queued for the fd.
    (void)shutdown(c->fd, SHUT_RDWR);  // ENOTCONN when the peer already went: fine
    if (c->ops > 0) {
      io_uring_sqe* sqe = Sqe(1);
      sqe->opcode = IORING_OP_ASYNC_CANCEL;
      sqe->fd = c->fd;
      sqe->cancel_flags = IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_ALL;
      sqe->user_data = kTagCancel;
      cancels_++;
    }
  }

  bool Idle(const Conn* c) const override { return c->ops == 0; }

  void Release(Conn* c) override { GivePipe(c); }

  bool Quiescent() const override { return !accept_busy_ && !accept_poll_busy_ && cancels_ == 0; }

  void Wait(int timeout_ms, std::vector<IoEvent>* out) override {
    // Replies waiting for a pipe that pipe2 refused (EMFILE/ENFILE) while none was lent
    // out: no GivePipe will come to serve them, so they are retried here, on a timer
    // as paused accepts are, until descriptors come back (or their send deadline ends
    // them). Their reply headers have gone out already.
    if (!pipe_waiters_.empty() && pipes_lent_ == 0) {
      ServePipeWaiters();
      if (!pipe_waiters_.empty() && pipes_lent_ == 0) timeout_ms = std::min(timeout_ms, kPipeRetryMs);
    }
    if (backlog_.empty()) {
      int rc = timeout_ms > 0 ? ring_->SubmitAndWaitTimeout(1, static_cast<int64_t>(timeout_ms) * 1000000)
                              : ring_->SubmitAndWait(0);
      (void)rc;  // -EBUSY (completions backed up) or -EINTR: reap and come again
    } else {
      (void)ring_->SubmitAndWait(0);
    }
    Reap();
    std::vector<io_uring_cqe> cqes;
    cqes.swap(backlog_);
    for (const io_uring_cqe& cqe : cqes) Handle(cqe, out);
  }

 private:
  UringIo() = default;

  static constexpr uint64_t kOpRecv = 1, kOpSend = 2, kOpSpliceIn = 3, kOpSpliceOut = 4, kOpPollIn = 5,
                            kOpPollOut = 6, kOpDrain = 7;
  // Small user_data values that are not Conn pointers (a heap pointer is never < 64).
  static constexpr uint64_t kTagAccept = 8, kTagAcceptPoll = 16, kTagWake = 24, kTagCancel = 32;

  struct Pipe {
    int r, w;
    size_t cap;
  };

  static uint64_t Ud(Conn* c, uint64_t op) { return reinterpret_cast<uint64_t>(c) | op; }

  void Reap() {
    io_uring_cqe cqe;
    while (ring_->PopCqe(&cqe)) backlog_.push_back(cqe);
  }

  // n free SQEs, submitting (and reaping into the backlog) until there are.
  io_uring_sqe* Sqe(unsigned n) {
    while (ring_->SqSpace() < n) {
      (void)ring_->SubmitAndWait(0);
      Reap();
    }
    return ring_->GetSqe();
  }

  void SubmitWakeRead() {
    io_uring_sqe* sqe = Sqe(1);
    sqe->opcode = IORING_OP_READ;
    sqe->fd = wake_fd_;
    sqe->addr = reinterpret_cast<uint64_t>(&wake_buf_);
    sqe->len = sizeof wake_buf_;
    sqe->user_data = kTagWake;
    wake_busy_ = true;
  }

  void SubmitRecv(Conn* c) {
    io_uring_sqe* sqe = Sqe(1);
    sqe->opcode = IORING_OP_RECV;
    sqe->fd = c->fd;
    c->recv_base = c->in_len;
    sqe->addr = reinterpret_cast<uint64_t>(c->in + c->recv_base);
    sqe->len = static_cast<uint32_t>(kInCap - c->recv_base);
    sqe->user_data = Ud(c, kOpRecv);
    c->ops++;
  }

  void SubmitSend(Conn* c) {
    io_uring_sqe* sqe = Sqe(1);
    sqe->opcode = IORING_OP_SEND;
    sqe->fd = c->fd;
    sqe->addr = reinterpret_cast<uint64_t>(c->send_ptr);
    sqe->len = static_cast<uint32_t>(std::min<size_t>(c->send_len, 1u << 30));
    sqe->msg_flags = MSG_NOSIGNAL | (c->send_more ? MSG_MORE : 0);
    sqe->user_data = Ud(c, kOpSend);
    c->ops++;
  }

  void SubmitPoll(Conn* c, bool out) {
    io_uring_sqe* sqe = Sqe(1);
    sqe->opcode = IORING_OP_POLL_ADD;
    sqe->fd = c->fd;
    sqe->poll32_events = out ? POLLOUT : POLLIN;
    sqe->user_data = Ud(c, out ? kOpPollOut : kOpPollIn);
    c->ops++;
  }

  static void PrepSplice(io_uring_sqe* sqe, int fd_in, int64_t off_in, int fd_out, size_t len, unsigned flags) {
    sqe->opcode = IORING_OP_SPLICE;
    sqe->fd = fd_out;
    sqe->off = static_cast<uint64_t>(-1);  // pipe or socket: no offset
    sqe->splice_off_in = static_cast<uint64_t>(off_in);
    sqe->splice_fd_in = fd_in;
    sqe->len = static_cast<uint32_t>(len);
    sqe->splice_flags = flags;
  }

  bool TakePipe(Conn* c) {
    Pipe p;
    if (!pool_.empty()) {
      p = pool_.back();
      pool_.pop_back();
    } else {
      int fds[2];
      if (pipe2(fds, O_CLOEXEC) != 0) return false;  // EMFILE/ENFILE: wait for a pipe to come back
      // A bigger pipe means fewer splice round trips; where the per-user pipe quota
      // refuses it, the default (64 KiB) still works.
      int got = large_pipes_ < kLargePipes ? fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(kPipeBytes)) : -1;
      if (got < 0) got = fcntl(fds[1], F_GETPIPE_SZ);
      p = {fds[0], fds[1], got > 0 ? static_cast<size_t>(got) : 65536};
      if (p.cap > 65536) large_pipes_++;
    }
    pipes_lent_++;
    c->pipe_r = p.r;
    c->pipe_w = p.w;
    c->pipe_cap = p.cap;
    c->pipe_bytes = 0;
    return true;
  }

  // Called with no splice of c in flight (its reply is done, or c has no ops left).
  // The pipe goes back to the pool only when empty: bytes left in it belong to a
  // reply that was cut off, and must not be sent to the next borrower.
  void GivePipe(Conn* c) {
    if (c->pipe_w < 0) return;
    if (c->pipe_bytes == 0 && pool_.size() < kMaxIdlePipes) {
      pool_.push_back({c->pipe_r, c->pipe_w, c->pipe_cap});
    } else {
      close(c->pipe_r);
      close(c->pipe_w);
      if (c->pipe_cap > 65536) large_pipes_--;
    }
    c->pipe_r = c->pipe_w = -1;
    pipes_lent_--;
    ServePipeWaiters();
  }

  void ServePipeWaiters() {
    while (!pipe_waiters_.empty()) {
      Conn* w = pipe_waiters_.front();
      if (!TakePipe(w)) break;
      pipe_waiters_.erase(pipe_waiters_.begin());
      w->waiting_pipe = false;
      StartSplice(w);
    }
  }

  void StartSplice(Conn* c) {
    const size_t chunk = std::min(c->file_len, c->pipe_cap);
    const bool more = c->send_more || chunk < c->file_len;
    io_uring_sqe* in = Sqe(2);  // the pair must not be split across two submits
    PrepSplice(in, c->file_fd, c->file_off, c->pipe_w, chunk, 0);
    in->flags |= IOSQE_IO_LINK;
    in->user_data = Ud(c, kOpSpliceIn);
    io_uring_sqe* out = ring_->GetSqe();
    PrepSplice(out, c->pipe_r, -1, c->fd, chunk, SPLICE_F_NONBLOCK | (more ? SPLICE_F_MORE : 0));
    out->user_data = Ud(c, kOpSpliceOut);
    c->ops += 2;
    c->splice_pending = 2;
    c->splice_in_res = c->splice_out_res = 0;
  }

  // Sends what is left in the pipe, after waiting for room when the socket was full.
  void Drain(Conn* c, bool poll_first) {
    if (poll_first) return SubmitPoll(c, true);
    const bool more = c->send_more || c->delivered + static_cast<size_t>(c->pipe_bytes) < c->file_len;
    io_uring_sqe* sqe = Sqe(1);
    PrepSplice(sqe, c->pipe_r, -1, c->fd, static_cast<size_t>(c->pipe_bytes), SPLICE_F_NONBLOCK | (more ? SPLICE_F_MORE : 0));
    sqe->user_data = Ud(c, kOpDrain);
    c->ops++;
  }

  void Sent(Conn* c, int64_t res, std::vector<IoEvent>* out) {
    c->send_busy = false;
    out->push_back({IoEvent::kSent, c, res});
  }

  // A pipe's worth (1 MiB) can take a slow reader far longer than the send timeout to
  // drain although it takes some every moment: the stall timer must hear of each step.
  static void Progress(Conn* c, int64_t res, std::vector<IoEvent>* out) {
    if (res > 0) out->push_back({IoEvent::kProgress, c, res});
  }

  void AfterPair(Conn* c, std::vector<IoEvent>* out) {
    if (c->splice_in_res < 0) {
      // The file → pipe half: a failed read of the file (a cancel only comes with a close).
      if (c->splice_in_res != -ECANCELED) c->file_error = static_cast<int>(-c->splice_in_res);
      return Sent(c, c->splice_in_res, out);
    }
    if (c->splice_in_res == 0) {
      c->file_error = -1;  // the file ended early: truncated?
      return Sent(c, -EIO, out);
    }
    const int64_t o = c->splice_out_res;
    if (o < 0 && o != -EAGAIN && o != -ECANCELED) return Sent(c, o, out);
    if (c->pipe_bytes == 0) return Sent(c, static_cast<int64_t>(c->delivered), out);
    Progress(c, o, out);
    // Part of the chunk is still in the pipe: the socket was full (EAGAIN or a short
    // splice), or the file splice was short, which cancels the linked socket splice.
    Drain(c, o != -ECANCELED);
  }

  void Handle(const io_uring_cqe& cqe, std::vector<IoEvent>* out) {
    const uint64_t ud = cqe.user_data;
    const int64_t res = cqe.res;
    if (ud < 64) {
      if (ud == kTagWake) {
        wake_busy_ = false;
        out->push_back({IoEvent::kWake, nullptr, res});
        SubmitWakeRead();
      } else if (ud == kTagAccept) {
        accept_busy_ = false;
        if (res == -EAGAIN && accepting_) {
          io_uring_sqe* sqe = Sqe(1);
          sqe->opcode = IORING_OP_POLL_ADD;
          sqe->fd = listen_fd_;
          sqe->poll32_events = POLLIN;
          sqe->user_data = kTagAcceptPoll;
          accept_poll_busy_ = true;
        } else {
          out->push_back({IoEvent::kAccepted, nullptr, res});
        }
      } else if (ud == kTagAcceptPoll) {
        accept_poll_busy_ = false;
        Accept();
      } else if (ud == kTagCancel) {
        cancels_--;
      }
      return;
    }
    Conn* c = reinterpret_cast<Conn*>(ud & ~uint64_t{7});
    const uint64_t op = ud & 7;
    c->ops--;
    switch (op) {
      case kOpSpliceIn:
        c->splice_in_res = res;
        if (res > 0) c->pipe_bytes += res;
        if (--c->splice_pending == 0 && !c->closing) AfterPair(c, out);
        return;
      case kOpSpliceOut:
        c->splice_out_res = res;
        if (res > 0) {
          c->pipe_bytes -= res;
          c->delivered += static_cast<size_t>(res);
        }
        if (--c->splice_pending == 0 && !c->closing) AfterPair(c, out);
        return;
      default:
        break;
    }
    if (c->closing) return;  // Cancel() made it finish; nobody waits for the result
    switch (op) {
      case kOpRecv:
        if (res == -EAGAIN) return SubmitPoll(c, false);
        out->push_back({IoEvent::kRecv, c, res});
        return;
      case kOpPollIn:
        if (res < 0) {
          out->push_back({IoEvent::kRecv, c, res});
          return;
        }
        return SubmitRecv(c);  // readable (or hung up: the recv says which)
      case kOpSend:
        if (res == -EAGAIN) return SubmitPoll(c, true);
        return Sent(c, res, out);
      case kOpPollOut:
        if (res < 0) return Sent(c, res, out);
        if (c->is_file) return Drain(c, false);
        return SubmitSend(c);
      case kOpDrain:
        if (res > 0) {
          c->pipe_bytes -= res;
          c->delivered += static_cast<size_t>(res);
          if (c->pipe_bytes == 0) return Sent(c, static_cast<int64_t>(c->delivered), out);
          Progress(c, res, out);
          return Drain(c, true);
        }
        if (res == -EAGAIN) return Drain(c, true);
        return Sent(c, res == 0 ? -EPIPE : res, out);
      default:
        return;
    }
  }

  std::unique_ptr<IoUring> ring_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  uint64_t wake_buf_ = 0;
  bool wake_busy_ = false;
  bool accepting_ = true;
  bool accept_busy_ = false;
  bool accept_poll_busy_ = false;
  int cancels_ = 0;
  std::vector<io_uring_cqe> backlog_;
  std::vector<Pipe> pool_;
  size_t pipes_lent_ = 0;
  size_t large_pipes_ = 0;  // pipes of more than 64 KiB, lent or pooled
  std::vector<Conn*> pipe_waiters_;
};

// Errors of a socket whose peer went or whose path broke: sendfile's other errors come
// from reading its file.
bool SocketGone(int e) {
  switch (e) {
    case EPIPE: case ECONNRESET: case ENOTCONN: case ECONNABORTED: case ETIMEDOUT: case EHOSTUNREACH:
    case ENETUNREACH: case ENETDOWN: case ENETRESET: case EHOSTDOWN: case ECONNREFUSED:
      return true;
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------
// epoll + sendfile(2), for kernels or containers where io_uring is refused.
// Edge-triggered: each operation is tried at once; EAGAIN clears the readiness
// flag and the next edge retries it. A sendfile that misses the page cache blocks
// this thread on the disk read (io_uring hands that to a kernel worker instead).
class EpollIo final : public FetchIo {
 public:
  ~EpollIo() override {
    if (ep_ >= 0) close(ep_);
  }

  Status Init(int listen_fd, int wake_fd) override {
    listen_fd_ = listen_fd;
    wake_fd_ = wake_fd;
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) return SysError("epoll_create1", "fetch listener", -1, errno);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLET;
    ev.data.u64 = kTagListen;
    if (epoll_ctl(ep_, EPOLL_CTL_ADD, listen_fd, &ev) != 0) return SysError("epoll_ctl(ADD listener)", "fetch listener", -1, errno);
    ev.events = EPOLLIN;
    ev.data.u64 = kTagWake;
    if (epoll_ctl(ep_, EPOLL_CTL_ADD, wake_fd, &ev) != 0) return SysError("epoll_ctl(ADD eventfd)", "fetch listener", -1, errno);
    return Status::Ok();
  }

  void Accept() override {
    accept_armed_ = accepting_;
    TryAccept();
  }

  void StopAccepting() override {
    accepting_ = accept_armed_ = false;
    (void)epoll_ctl(ep_, EPOLL_CTL_DEL, listen_fd_, nullptr);  // closed by the owner next
  }

  void Watch(Conn* c) override {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.ptr = c;
    if (epoll_ctl(ep_, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
      // Cannot watch it (ENOMEM, ENOSPC: max_user_watches): fail its first receive,
      // which closes it.
      c->readable = true;
      watch_failed_ = errno;
    }
  }

  void Recv(Conn* c) override {
    c->recv_busy = true;
    c->recv_queued = false;
    TryRecv(c);
  }

  void Send(Conn* c, const uint8_t* p, size_t n, bool more) override {
    c->BeginSend(p, n, more);
    TrySend(c);
  }

  void SendFile(Conn* c, int fd, int64_t off, size_t n, bool more) override {
    c->BeginSendFile(fd, off, n, more);
    TrySend(c);
  }

  void Cancel(Conn* c) override {
    c->recv_busy = c->send_busy = false;
    (void)epoll_ctl(ep_, EPOLL_CTL_DEL, c->fd, nullptr);  // ENOENT if Watch failed: fine
    ready_.erase(std::remove_if(ready_.begin(), ready_.end(), [c](const IoEvent& e) { return e.c == c; }), ready_.end());
  }

  bool Idle(const Conn*) const override { return true; }
  bool Quiescent() const override { return true; }

  void Wait(int timeout_ms, std::vector<IoEvent>* out) override {
    epoll_event evs[256];
    int n = epoll_wait(ep_, evs, 256, ready_.empty() ? timeout_ms : 0);
    for (int i = 0; i < n; i++) {
      const uint64_t tag = evs[i].data.u64;
      if (tag == kTagListen) {
        listen_ready_ = true;
        TryAccept();
      } else if (tag == kTagWake) {
        uint64_t v;
        ssize_t r = read(wake_fd_, &v, sizeof v);  // readable, so it does not block
        (void)r;
        ready_.push_back({IoEvent::kWake, nullptr, 0});
      } else {
        Conn* c = static_cast<Conn*>(evs[i].data.ptr);
        const uint32_t e = evs[i].events;
        if (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
          c->readable = true;
          if (c->recv_busy && !c->recv_queued) TryRecv(c);
        }
        if (e & (EPOLLOUT | EPOLLHUP | EPOLLERR)) {
          c->writable = true;
          if (c->send_busy) TrySend(c);
        }
      }
    }
    out->insert(out->end(), ready_.begin(), ready_.end());
    ready_.clear();
  }

 private:
  static constexpr uint64_t kTagListen = 1, kTagWake = 2;  // never Conn pointers

  void TryAccept() {
    while (accept_armed_ && listen_ready_) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0 && (errno == EINTR || errno == ECONNABORTED)) continue;
      if (fd < 0 && errno == EAGAIN) {
        listen_ready_ = false;
        return;
      }
      accept_armed_ = false;
      ready_.push_back({IoEvent::kAccepted, nullptr, fd >= 0 ? fd : -errno});
    }
  }

  void TryRecv(Conn* c) {
    while (c->readable) {
      if (watch_failed_) {
        c->recv_queued = true;
        ready_.push_back({IoEvent::kRecv, c, -watch_failed_});
        watch_failed_ = 0;
        return;
      }
      c->recv_base = c->in_len;
      ssize_t n = recv(c->fd, c->in + c->recv_base, kInCap - c->recv_base, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        c->readable = false;
        return;
      }
      c->recv_queued = true;
      ready_.push_back({IoEvent::kRecv, c, n >= 0 ? n : -errno});
      return;
    }
  }

  void TrySend(Conn* c) {
    while (c->writable) {
      ssize_t n;
      if (c->is_file) {
        off_t off = c->file_off;
        n = sendfile(c->fd, c->file_fd, &off, c->file_len);
        if (n == 0) {
          c->file_error = -1;  // the file ended early: truncated?
          n = -1;
          errno = EIO;
        } else if (n < 0 && errno != EINTR && errno != EAGAIN && !SocketGone(errno)) {
          c->file_error = errno;  // sendfile's errors are the file's but for the socket's own
        }
      } else {
        n = send(c->fd, c->send_ptr, c->send_len, MSG_NOSIGNAL | MSG_DONTWAIT | (c->send_more ? MSG_MORE : 0));
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        c->writable = false;
        return;
      }
      c->send_busy = false;
      ready_.push_back({IoEvent::kSent, c, n >= 0 ? n : -errno});
      return;
    }
  }

  int ep_ = -1;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  bool accepting_ = true;
  bool accept_armed_ = false;
  bool listen_ready_ = true;
  int watch_failed_ = 0;
  std::vector<IoEvent> ready_;
};

// What an fd is open on ("/data/topics/t/0/00000000000000000000.log"), for a message.
std::string FdPath(int fd) {
  char buf[4096];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "its segment file (fd " + std::to_string(fd) + ")";
}

bool ValidTopic(const std::string& t) {
  if (t.empty() || t.size() > fetchproto::kMaxTopicBytes || t == "." || t == "..") return false;
  for (char ch : t) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                    ch == '_' || ch == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------
// The protocol state machine, shared by both backends. Everything here runs on the
// fetch thread.
class FetchLoop {
 public:
  FetchLoop(const FetchServerOptions& opts, std::shared_ptr<PartitionDirectory> dir, std::shared_ptr<PublishSignal> signal,
            std::unique_ptr<FetchIo> io, int listen_fd, int wake_fd, FetchServer* owner)
      : opts_(opts), dir_(std::move(dir)), signal_(std::move(signal)), io_(std::move(io)), listen_fd_(listen_fd),
        wake_fd_(wake_fd), owner_(owner), k_(&owner->counters_) {}

  ~FetchLoop() {
    signal_->Detach(wake_fd_);
    if (leaked_) {
      // Kernel operations still held buffers of these connections when the stop
      // deadline passed: leak them rather than let the kernel write into freed memory.
      io_.release();  // NOLINT: deliberately leaked with them (the ring keeps running)
    } else {
      for (Conn* c : conns_) Free(c);
      for (Conn* c : refusals_) Free(c);
      for (Conn* c : doomed_) Free(c);
      io_.reset();
    }
    if (listen_fd_ >= 0) close(listen_fd_);
    close(wake_fd_);
  }

  Status Init() { return io_->Init(listen_fd_, wake_fd_); }

  // JS thread.
  void RequestStop() {
    stop_.store(true, std::memory_order_release);
    uint64_t one = 1;
    ssize_t n = write(wake_fd_, &one, sizeof one);
    (void)n;
  }

  void Run() {
    pthread_setname_np(pthread_self(), "uringmq-fetch");  // names the thread in perf and top
    io_->Accept();
    std::vector<IoEvent> events;
    bool stopping = false;
    int64_t stop_deadline = 0;
    for (;;) {
      int64_t now = MonoMs();
      if (!stopping && stop_.load(std::memory_order_acquire)) {
        stopping = true;
        stop_deadline = now + 5000;
        io_->StopAccepting();
        while (!conns_.empty()) Close(conns_.back());
        while (!refusals_.empty()) Close(refusals_.back());
      }
      if (stopping) {
        FreeDoomed();
        if (doomed_.empty() && io_->Quiescent()) break;
        if (now >= stop_deadline) {
          leaked_ = !doomed_.empty();
          break;
        }
      }
      int timeout = 1000;
      if (next_deadline_ != kNoDeadline) timeout = static_cast<int>(std::clamp<int64_t>(next_deadline_ - now, 0, 1000));
      if (accept_paused_) timeout = std::min<int>(timeout, static_cast<int>(std::max<int64_t>(0, accept_resume_ms_ - now)));
      if (stopping) timeout = std::min(timeout, 20);
      events.clear();
      io_->Wait(timeout, &events);
      for (const IoEvent& e : events) Dispatch(e, stopping);
      now = MonoMs();
      if (now >= next_deadline_) Sweep(now);
      if (accept_paused_ && now >= accept_resume_ms_ && !stopping) {
        accept_paused_ = false;
        io_->Accept();
      }
      FreeDoomed();
    }
    if (listen_fd_ >= 0) {
      close(listen_fd_);
      listen_fd_ = -1;
    }
  }

 private:
  void Dispatch(const IoEvent& e, bool stopping) {
    switch (e.kind) {
      case IoEvent::kAccepted:
        if (e.res >= 0) {
          OnAccepted(static_cast<int>(e.res), stopping);
        } else if (e.res == -EMFILE || e.res == -ENFILE || e.res == -ENOBUFS || e.res == -ENOMEM) {
          // Out of descriptors or memory: pending connections wait in the backlog.
          accept_paused_ = true;
          accept_resume_ms_ = MonoMs() + 100;
          return;
        } else if (stopping) {
          return;
        }
        if (!stopping) io_->Accept();
        return;
      case IoEvent::kRecv:
        if (!e.c->closing) OnRecv(e.c, e.res);
        return;
      case IoEvent::kSent:
        if (!e.c->closing) OnSent(e.c, e.res);
        return;
      case IoEvent::kProgress:
        // The stall timer measures a reply that stopped moving, not how long it takes.
        if (!e.c->closing && e.c->state == ConnState::kSending) SetDeadline(e.c, MonoMs() + opts_.send_timeout_ms);
        return;
      case IoEvent::kWake:
        CheckParked();
        return;
    }
  }

  void SetDeadline(Conn* c, int64_t d) {
    c->deadline = d;
    next_deadline_ = std::min(next_deadline_, d);
  }

  void OnAccepted(int fd, bool stopping) {
    k_->accepted++;
    if (stopping || conns_.size() >= opts_.max_connections) {
      k_->refused++;
      return Refuse(fd, stopping);
    }
    int one = 1;
    // Replies go out as header + data with MSG_MORE/SPLICE_F_MORE, so Nagle would
    // only delay the last segment of each. A failure here costs latency, nothing else.
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Conn* c = new Conn();
    c->fd = fd;
    c->slot = conns_.size();
    conns_.push_back(c);
    k_->connections.store(conns_.size(), std::memory_order_relaxed);
    SetDeadline(c, MonoMs() + opts_.handshake_timeout_ms);
    io_->Watch(c);
    io_->Recv(c);
  }

  // A hello with the reason, then the end of the connection. Closing a socket whose
  // client hello (sent at once) is unread sends a reset, not a FIN: it can destroy the
  // hello before the client reads it, and reads as a listener that is down. So the
  // connection is half-closed and its input read and dropped until the client closes
  // (or a short deadline), outside max_connections; while stopping, or past
  // kMaxLingeringRefusals, what is readable now is dropped and it is closed at once.
  void Refuse(int fd, bool stopping) {
    uint8_t hello[fetchproto::kServerHelloSize];
    ServerHello(hello, stopping ? Error::kShuttingDown : Error::kTooManyConnections);
    ssize_t n;
    do {
      // A new socket's send buffer has room for 16 bytes: a short or failed send
      // means the peer already went (EPIPE, ECONNRESET), and it is closed below.
      n = send(fd, hello, sizeof hello, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    const bool sent = n == static_cast<ssize_t>(sizeof hello);
    if (sent && !stopping && refusals_.size() < kMaxLingeringRefusals) {
      if (shutdown(fd, SHUT_WR) == 0) {  // ENOTCONN: the peer already went
        Conn* c = new Conn();
        c->fd = fd;
        c->refusal = true;
        c->state = ConnState::kLinger;
        c->slot = refusals_.size();
        refusals_.push_back(c);
        k_->lingering.store(refusals_.size(), std::memory_order_relaxed);
        SetDeadline(c, MonoMs() + std::min<int64_t>(kLingerMs, opts_.handshake_timeout_ms));
        io_->Watch(c);
        io_->Recv(c);
        return;
      }
    }
    if (sent) {
      uint8_t sink[4096];
      // Bounded: a peer that keeps sending is not read for ever on the fetch thread.
      for (int i = 0; i < 16; i++) {
        ssize_t r = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;  // EOF, EAGAIN (nothing more now) or an error: close as it is
      }
    }
    // The descriptor is released whatever close() reports (EINTR, EIO): nothing to redo.
    (void)close(fd);
  }

  void OnRecv(Conn* c, int64_t res) {
    c->recv_busy = false;
    c->recv_queued = false;
    if (res <= 0) return Close(c);  // EOF or error: the peer went, maybe mid-reply
    // Input consumed (or dropped) since the receive was issued: its bytes landed at
    // recv_base, above the current end; move them down (the regions never overlap
    // with what Consume touched, which lies below recv_base).
    if (c->recv_base != c->in_len) std::memmove(c->in + c->in_len, c->in + c->recv_base, static_cast<size_t>(res));
    if (c->state == ConnState::kLinger) {
      c->in_len = 0;  // ignored: the connection is ending
    } else {
      c->in_len += static_cast<size_t>(res);
      ProcessInput(c);
    }
    if (!c->closing && !c->recv_busy && c->in_len < kInCap) io_->Recv(c);
  }

  void Consume(Conn* c, size_t n) {
    std::memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
  }

  void ProcessInput(Conn* c) {
    if (c->closing) return;
    if (c->state == ConnState::kHandshake) return ParseHello(c);
    if (c->state == ConnState::kReady) return ParseRequest(c);
  }

  // version: the connection's (the client's, which this server speaks), or on a
  // refusal the highest this server speaks, so a newer client knows what to retry with.
  static void ServerHello(uint8_t* p, Error err, uint16_t version = fetchproto::kVersion) {
    fetchproto::Put32(p, fetchproto::kMagic);
    fetchproto::Put16(p + 4, version);
    fetchproto::Put16(p + 6, static_cast<uint16_t>(err));
    fetchproto::Put32(p + 8, 0);
    fetchproto::Put32(p + 12, 0);
  }

  bool TokenOk(const uint8_t* t, size_t n) const {
    const std::string& want = opts_.token;
    if (want.empty()) return true;
    // Constant time in the token's content: no early exit on the first mismatch.
    unsigned diff = n != want.size();
    for (size_t i = 0; i < want.size(); i++) diff |= static_cast<uint8_t>(want[i]) ^ (i < n ? t[i] : 0u);
    return diff == 0;
  }

  void ParseHello(Conn* c) {
    if (c->in_len < fetchproto::kClientHelloFixed) {
      // A peer that sent a few bytes that cannot begin the magic (another protocol
      // waiting for us to speak first) is not kept until the handshake timeout.
      uint8_t magic[4];
      fetchproto::Put32(magic, fetchproto::kMagic);
      if (std::memcmp(c->in, magic, std::min<size_t>(c->in_len, sizeof magic)) != 0) {
        k_->bad_requests++;
        Close(c);  // not this protocol: no reply
      }
      return;
    }
    const uint32_t magic = fetchproto::Get32(c->in);
    const uint16_t version = fetchproto::Get16(c->in + 4);
    const uint16_t tlen = fetchproto::Get16(c->in + 6);
    if (magic != fetchproto::kMagic || tlen > fetchproto::kMaxTokenBytes) {
      k_->bad_requests++;
      return Close(c);  // not this protocol: no reply
    }
    if (c->in_len < fetchproto::kClientHelloFixed + tlen) return;
    Error err = Error::kOk;
    if (version < fetchproto::kMinVersion || version > fetchproto::kVersion) err = Error::kUnsupportedVersion;
    else if (!TokenOk(c->in + fetchproto::kClientHelloFixed, tlen)) err = Error::kAuthFailed;
    Consume(c, fetchproto::kClientHelloFixed + tlen);
    if (err == Error::kOk) c->version = version;
    ServerHello(c->hdr, err, err == Error::kOk ? version : fetchproto::kVersion);
    fetchproto::Put32(c->hdr + 8, opts_.max_fetch_bytes);
    fetchproto::Put32(c->hdr + 12, opts_.max_wait_ms);
    if (err != Error::kOk) {
      k_->bad_requests++;
      c->close_after_send = true;
    }
    c->plan = FetchPlan();
    StartReply(c, fetchproto::kServerHelloSize);
  }

  void ParseRequest(Conn* c) {
    if (c->in_len < 4) return;
    const uint32_t len = fetchproto::Get32(c->in);
    // Version 1 frames are exactly what they were: no flag changes their layout there.
    const bool v2 = c->version >= 2;
    const size_t max_len = fetchproto::kFetchFixed - 4 + (v2 ? fetchproto::kIncarnationBytes : 0) + fetchproto::kMaxTopicBytes;
    if (len < fetchproto::kFetchFixed - 4 || len > max_len)
      return FatalRequest(c, c->in_len >= 12 ? fetchproto::Get32(c->in + 8) : 0);
    if (c->in_len < 4 + len) return;
    const uint8_t type = c->in[4];
    const uint8_t flags = c->in[5];
    const uint16_t topic_len = fetchproto::Get16(c->in + 6);
    const uint32_t corr = fetchproto::Get32(c->in + 8);
    // The INCARNATION flag (version 2) inserts its field before the topic: the framing
    // depends on it, so it is read before the request's fields are trusted.
    const size_t extra = v2 && (flags & fetchproto::kFlagIncarnation) ? fetchproto::kIncarnationBytes : 0;
    if (type != fetchproto::kTypeFetch || len < fetchproto::kFetchFixed - 4 + extra ||
        topic_len != len - (fetchproto::kFetchFixed - 4) - extra || topic_len > fetchproto::kMaxTopicBytes)
      return FatalRequest(c, corr);
    const uint32_t partition = fetchproto::Get32(c->in + 12);
    const int64_t offset = static_cast<int64_t>(fetchproto::Get64(c->in + 16));
    const uint32_t max_bytes = fetchproto::Get32(c->in + 24);
    const uint32_t max_wait = fetchproto::Get32(c->in + 28);
    const uint64_t incarnation = extra ? fetchproto::Get64(c->in + fetchproto::kFetchFixed) : 0;
    std::string topic(reinterpret_cast<const char*>(c->in + fetchproto::kFetchFixed + extra), topic_len);
    Consume(c, 4 + len);
    k_->requests++;
    HandleFetch(c, corr, flags, incarnation, topic, partition, offset, max_bytes, max_wait);
  }

  // The framing cannot be trusted any more: answer, then end the connection.
  void FatalRequest(Conn* c, uint32_t corr) {
    k_->bad_requests++;
    c->in_len = 0;
    c->close_after_send = true;
    c->corr = corr;
    Reply(c, Error::kInvalidRequest);
  }

  // incarnation: the topic incarnation the request names (0: none, as in version 1).
  void HandleFetch(Conn* c, uint32_t corr, uint8_t flags, uint64_t incarnation, const std::string& topic, uint32_t partition,
                   int64_t offset, uint32_t max_bytes, uint32_t max_wait) {
    c->corr = corr;
    // No flag has a meaning in version 1, and only INCARNATION in version 2: refusing the
    // others keeps them free for a later version (a client setting one learns that this
    // server ignores it instead of guessing).
    const uint8_t known = c->version >= 2 ? fetchproto::kFlagIncarnation : 0;
    if ((flags & ~known) != 0 || !ValidTopic(topic) || offset < 0 || max_bytes == 0 || max_bytes > opts_.max_fetch_bytes ||
        max_wait > opts_.max_wait_ms) {
      k_->bad_requests++;
      return Reply(c, Error::kInvalidRequest);
    }
    std::shared_ptr<PartitionLog> part = dir_->Find(topic + "/" + std::to_string(partition));
    if (!part || part->closed.load(std::memory_order_acquire)) return Reply(c, Error::kUnknownTopicOrPartition);
    // The topic was deleted and made again under this name since the client positioned
    // itself: its offsets are not this log's, and the records there are not the ones it
    // asked for. Checked against the log that would serve the reply (the incarnation of
    // a PartitionLog never changes), so no reply carries another incarnation's bytes; a
    // long-poll parked below keeps this log, and a delete answers it (TryParked).
    if (incarnation != 0 && part->incarnation() != incarnation) return Reply(c, Error::kTopicIncarnationMismatch);
    if (part->failed.load(std::memory_order_acquire)) return Reply(c, Error::kIoError);
    c->part = std::move(part);
    c->offset = offset;
    c->max_bytes = max_bytes;
    Error e = Plan(c);
    if (e == Error::kOk && c->plan.pieces.empty() && max_wait > 0) return Park(c, MonoMs() + max_wait);
    SendPlan(c, e);
  }

  Error Plan(Conn* c) {
    Uncharge(c);
    const uint64_t room = opts_.memory_total > mem_in_use_ ? opts_.memory_total - mem_in_use_ : 0;
    Status s = c->part->PlanFetch(c->offset, c->max_bytes, static_cast<size_t>(std::min(opts_.memory_per_connection, room)), &c->plan);
    if (!s.ok()) {
      c->plan.pieces.clear();
      c->plan.bytes = c->plan.memory_bytes = 0;
      // A segment file that cannot be opened or read (EIO, a file shorter than the log
      // records): the reply carries only the code, so the operator hears the rest here,
      // as of a reply cut off by its file. A fenced partition (refused before the plan)
      // and a damaged batch (kCorruptBatch) are not read failures of the file.
      if (s.code == Code::kIoError)
        NoteReadError((c->part ? c->part->label() : std::string("?")) + ", a fetch from offset " + std::to_string(c->offset) + ": " +
                      s.message + ", answered IO_ERROR");
      return s.code == Code::kOffsetOutOfRange ? Error::kOffsetOutOfRange : Error::kIoError;
    }
    c->mem_charged = c->plan.memory_bytes;
    mem_in_use_ += c->mem_charged;
    return Error::kOk;
  }

  void Uncharge(Conn* c) {
    mem_in_use_ -= c->mem_charged;
    c->mem_charged = 0;
  }

  // An error reply that knows nothing about the partition.
  void Reply(Conn* c, Error err) {
    c->plan = FetchPlan();
    c->plan.start_offset = c->plan.end_offset = -1;
    SendPlan(c, err);
  }

  void SendPlan(Conn* c, Error err) {
    if (err != Error::kOk) {
      Uncharge(c);
      c->plan.pieces.clear();
      c->plan.bytes = 0;
    }
    uint8_t* h = c->hdr;
    fetchproto::Put32(h, c->corr);
    fetchproto::Put16(h + 4, static_cast<uint16_t>(err));
    fetchproto::Put16(h + 6, 0);
    fetchproto::Put64(h + 8, static_cast<uint64_t>(c->plan.end_offset));
    fetchproto::Put64(h + 16, static_cast<uint64_t>(c->plan.start_offset));
    fetchproto::Put32(h + 24, static_cast<uint32_t>(c->plan.bytes));
    fetchproto::Put32(h + 28, 0);
    StartReply(c, fetchproto::kResponseHeaderSize);
  }

  void StartReply(Conn* c, size_t hdr_len) {
    c->state = ConnState::kSending;
    c->hdr_len = hdr_len;
    c->hdr_done = 0;
    c->piece = 0;
    c->piece_done = 0;
    SetDeadline(c, MonoMs() + opts_.send_timeout_ms);
    Pump(c);
  }

  void Pump(Conn* c) {
    if (c->hdr_done < c->hdr_len)
      return io_->Send(c, c->hdr + c->hdr_done, c->hdr_len - c->hdr_done, !c->plan.pieces.empty());
    while (c->piece < c->plan.pieces.size()) {
      const FetchPiece& p = c->plan.pieces[c->piece];
      const uint64_t left = p.size() - c->piece_done;
      if (left == 0) {
        c->piece++;
        c->piece_done = 0;
        continue;
      }
      const bool more = c->piece + 1 < c->plan.pieces.size();
      if (p.file) return io_->SendFile(c, p.file->fd, p.pos + static_cast<int64_t>(c->piece_done), left, more);
      return io_->Send(c, p.bytes.data() + c->piece_done, left, more);
    }
    FinishReply(c);
  }

  void OnSent(Conn* c, int64_t res) {
    if (res <= 0) {
      if (c->file_error != 0) ReadFailed(c);
      return Close(c);  // the peer went mid-reply (EPIPE, ECONNRESET), or a file read failed
    }
    if (c->hdr_done < c->hdr_len) {
      c->hdr_done += static_cast<size_t>(res);
    } else {
      const FetchPiece& p = c->plan.pieces[c->piece];
      (p.file ? k_->bytes_spliced : k_->bytes_copied) += static_cast<uint64_t>(res);
      c->piece_done += static_cast<uint64_t>(res);
    }
    SetDeadline(c, MonoMs() + opts_.send_timeout_ms);  // progress: the stall timer starts over
    Pump(c);
  }

  // The client of a reply cut off by its file sees only a closed connection (the header
  // went out, announcing bytes that never came), and retries: counted and noted for the
  // operator (src/fetch/server.ts warns of it, at most every 10 s).
  void ReadFailed(Conn* c) {
    const int e = c->file_error;
    c->file_error = 0;
    std::string note = (c->part ? c->part->label() : std::string("?")) + ", a fetch from offset " + std::to_string(c->offset) +
                       ": read " + FdPath(c->file_fd) + " at byte " + std::to_string(c->file_off) + ": ";
    if (e < 0) note += "the file ends there, before the end the log records for it (truncated?)";
    else note += std::string(std::strerror(e)) + " (errno " + std::to_string(e) + ")";
    NoteReadError(std::move(note) + ", the reply cut off and its connection closed");
  }

  // Counts a fetch that failed reading its segment file, and keeps its note for the
  // warning (src/fetch/server.ts).
  void NoteReadError(std::string note) {
    k_->read_errors++;
    std::lock_guard<std::mutex> lk(owner_->note_mu_);
    owner_->last_read_error_ = std::move(note);
  }

  void FinishReply(Conn* c) {
    io_->ResponseDone(c);
    Uncharge(c);
    c->plan = FetchPlan();
    c->part.reset();
    if (c->close_after_send) {
      // Half-close and let the peer read the reply before the connection goes: a
      // close with its unread input pending would send a reset that can destroy it.
      c->state = ConnState::kLinger;
      (void)shutdown(c->fd, SHUT_WR);  // ENOTCONN: the peer already went
      c->in_len = 0;
      SetDeadline(c, MonoMs() + kLingerMs);
      if (!c->recv_busy) io_->Recv(c);
      return;
    }
    c->state = ConnState::kReady;
    SetDeadline(c, MonoMs() + opts_.idle_timeout_ms);
    ProcessInput(c);  // a pipelined request may be waiting
    if (!c->closing && !c->recv_busy && c->in_len < kInCap) io_->Recv(c);
  }

  // --- long-poll ---
  void Park(Conn* c, int64_t deadline) {
    c->state = ConnState::kParked;
    SetDeadline(c, deadline);
    parked_.push_back(c);
    k_->parked.store(parked_.size(), std::memory_order_relaxed);
    signal_->SetWaiting(true);
    // Batches published between the plan above and SetWaiting() sent no wake-up.
    TryParked(c, false);
  }

  void Unpark(Conn* c) {
    parked_.erase(std::remove(parked_.begin(), parked_.end(), c), parked_.end());
    k_->parked.store(parked_.size(), std::memory_order_relaxed);
    if (parked_.empty()) signal_->SetWaiting(false);
  }

  void TryParked(Conn* c, bool expired) {
    if (c->part->closed.load(std::memory_order_acquire)) {
      Unpark(c);
      return Reply(c, Error::kUnknownTopicOrPartition);  // deleted while we waited
    }
    if (c->part->failed.load(std::memory_order_acquire)) {
      Unpark(c);
      return Reply(c, Error::kIoError);  // fenced by a write error: nothing more will come until it is reopened
    }
    Error e = Plan(c);
    if (e == Error::kOk && c->plan.pieces.empty() && !expired) return;
    Unpark(c);
    SendPlan(c, e);
  }

  void CheckParked() {
    if (parked_.empty()) return;
    std::vector<Conn*> waiting = parked_;
    for (Conn* c : waiting)
      if (!c->closing && c->state == ConnState::kParked) TryParked(c, false);
  }

  // --- timeouts ---
  void Sweep(int64_t now) {
    int64_t next = kNoDeadline;
    for (std::vector<Conn*>* list : {&conns_, &refusals_}) {
      for (size_t i = 0; i < list->size();) {
        Conn* c = (*list)[i];
        if (c->deadline <= now) {
          if (c->state == ConnState::kParked) {
            TryParked(c, true);  // the wait is over: answer with what there is (maybe nothing)
          } else {
            if (c->state != ConnState::kLinger) k_->timeouts++;
            Close(c);  // swaps the last connection of its list into slot i
            continue;
          }
        }
        next = std::min(next, c->deadline);
        i++;
      }
    }
    next_deadline_ = next;
  }

  void Close(Conn* c) {
    if (c->closing) return;
    if (c->state == ConnState::kParked) Unpark(c);
    c->closing = true;
    Uncharge(c);
    io_->Cancel(c);
    std::vector<Conn*>& list = c->refusal ? refusals_ : conns_;
    Conn* last = list.back();
    list[c->slot] = last;
    last->slot = c->slot;
    list.pop_back();
    k_->connections.store(conns_.size(), std::memory_order_relaxed);
    k_->lingering.store(refusals_.size(), std::memory_order_relaxed);
    doomed_.push_back(c);
  }

  void FreeDoomed() {
    for (size_t i = 0; i < doomed_.size();) {
      Conn* c = doomed_[i];
      if (!io_->Idle(c)) {
        i++;
        continue;
      }
      doomed_[i] = doomed_.back();
      doomed_.pop_back();
      Free(c);
    }
  }

  void Free(Conn* c) {
    io_->Release(c);
    close(c->fd);
    delete c;
  }

  const FetchServerOptions opts_;
  std::shared_ptr<PartitionDirectory> dir_;
  std::shared_ptr<PublishSignal> signal_;
  std::unique_ptr<FetchIo> io_;
  int listen_fd_;
  const int wake_fd_;
  FetchServer* const owner_;
  FetchCounters* k_;
  std::atomic<bool> stop_{false};

  std::vector<Conn*> conns_;   // open
  std::vector<Conn*> refusals_;  // refused, half-closed, waiting for their client to close
  std::vector<Conn*> doomed_;  // closed, freed once the kernel is done with them
  std::vector<Conn*> parked_;
  int64_t next_deadline_ = kNoDeadline;
  uint64_t mem_in_use_ = 0;
  bool accept_paused_ = false;
  int64_t accept_resume_ms_ = 0;
  bool leaked_ = false;
};

// ---------------------------------------------------------------------------------
Status FetchServer::Start(const FetchServerOptions& opts, std::shared_ptr<PartitionDirectory> dir,
                          std::shared_ptr<PublishSignal> signal, std::unique_ptr<FetchServer>* out) {
  std::unique_ptr<FetchServer> srv(new FetchServer());
  const std::string where = opts.host + ":" + std::to_string(opts.port);

  std::unique_ptr<FetchIo> io;
  if (opts.backend != BackendChoice::kThread) {
    std::string why;
    io = UringIo::Create(&why);
    if (io) {
      srv->backend_name_ = "io_uring";
      srv->backend_note_ = "io_uring available";
    } else if (opts.backend == BackendChoice::kIoUring) {
      return Status::Error(Code::kUnavailable, "io_uring backend requested for the fetch plane but unavailable: " + why);
    } else {
      srv->backend_note_ = why;
    }
  } else {
    srv->backend_note_ = "thread backend requested";
  }
  const bool uring = io != nullptr;
  if (!io) io = std::make_unique<EpollIo>();

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(opts.port);
  int rc = getaddrinfo(opts.host.empty() ? nullptr : opts.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || !res)
    return Status::Error(Code::kInvalidArgument, "cannot resolve fetch listener address " + where + ": " + gai_strerror(rc));
  // The io_uring accept waits in the kernel; epoll needs a non-blocking listener.
  int lfd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | (uring ? 0 : SOCK_NONBLOCK), 0);
  if (lfd < 0) {
    freeaddrinfo(res);
    return SysError("socket for fetch listener", where, -1, errno);
  }
  int one = 1;
  Status fail;
  if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) fail = SysError("setsockopt(SO_REUSEADDR)", where, -1, errno);
  else if (bind(lfd, res->ai_addr, res->ai_addrlen) != 0) fail = SysError("bind fetch listener", where, -1, errno);
  else if (listen(lfd, SOMAXCONN) != 0) fail = SysError("listen", where, -1, errno);
  freeaddrinfo(res);
  if (fail.ok()) {
    sockaddr_storage sa{};
    socklen_t sl = sizeof sa;
    if (getsockname(lfd, reinterpret_cast<sockaddr*>(&sa), &sl) != 0) fail = SysError("getsockname", where, -1, errno);
    else srv->port_ = ntohs(sa.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port
                                                      : reinterpret_cast<sockaddr_in*>(&sa)->sin_port);
  }
  if (!fail.ok()) {
    close(lfd);
    return fail;
  }
  // Blocking on purpose: the io_uring READ of it then waits in the kernel (a
  // non-blocking one would complete at once with EAGAIN). Writers never block on it.
  int wfd = eventfd(0, EFD_CLOEXEC);
  if (wfd < 0) {
    int e = errno;
    close(lfd);
    return SysError("eventfd", "fetch listener", -1, e);
  }
  if (!signal->Attach(wfd)) {
    close(lfd);
    close(wfd);
    return Status::Error(Code::kInvalidArgument, "a fetch server is already running for this broker");
  }
  // From here the loop owns lfd and wfd (and detaches the signal) whatever happens.
  srv->loop_ = std::make_unique<FetchLoop>(opts, std::move(dir), std::move(signal), std::move(io), lfd, wfd, srv.get());
  Status s = srv->loop_->Init();
  if (!s.ok()) return s;  // ~FetchServer → ~FetchLoop closes everything
  srv->thread_ = std::thread([loop = srv->loop_.get()] { loop->Run(); });
  *out = std::move(srv);
  return Status::Ok();
}

FetchServer::~FetchServer() { Stop(); }

std::string FetchServer::last_read_error() const {
  std::lock_guard<std::mutex> lk(note_mu_);
  return last_read_error_;
}

void FetchServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (loop_ && thread_.joinable()) {
    loop_->RequestStop();
    thread_.join();
  }
  loop_.reset();
  counters_.connections.store(0);
  counters_.parked.store(0);
  counters_.lingering.store(0);
}

}  // namespace uringmq
