// The native fetch plane: a TCP listener on its own thread that answers fetches
// (docs/FETCH-PROTOCOL.md) with whole RecordBatches spliced from the segment files
// to the socket, so the bytes never pass through user space and JavaScript is not on
// the data path. Driven by io_uring (accept, recv, send, linked file→pipe→socket
// SPLICE) where the kernel allows it, else by epoll + sendfile(2) — the same choice
// as the log engine's backend. Created and stopped by the JS thread; everything
// else happens on the fetch thread, which owns every connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "fetch/partition_directory.h"
#include "log/io_backend.h"

namespace uringmq {

struct FetchServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: an ephemeral port
  BackendChoice backend = BackendChoice::kAuto;
  std::string token;                       // empty: no authentication
  uint32_t max_connections = 1024;         // more are refused (TOO_MANY_CONNECTIONS)
  uint32_t handshake_timeout_ms = 10'000;  // connected, no complete hello yet
  uint32_t idle_timeout_ms = 300'000;      // no request
  uint32_t send_timeout_ms = 30'000;       // a response that makes no progress
  uint32_t max_fetch_bytes = 64u << 20;    // largest max_bytes a request may ask for
  uint32_t max_wait_ms = 60'000;           // longest long-poll a request may ask for
  uint64_t memory_per_connection = 1u << 20;  // tail-cache copies per response
  uint64_t memory_total = 64u << 20;          // tail-cache copies, all connections
};

// Counters, written by the fetch thread, read by anyone.
struct FetchCounters {
  std::atomic<uint64_t> connections{0};  // open now
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> refused{0};
  std::atomic<uint64_t> lingering{0};  // refused, waiting now for their client to close
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> bad_requests{0};  // malformed, refused hello, bad fields
  std::atomic<uint64_t> timeouts{0};      // connections closed by a timeout
  std::atomic<uint64_t> bytes_spliced{0};  // file → socket without a copy
  std::atomic<uint64_t> bytes_copied{0};   // from memory (tail cache, partial block)
  std::atomic<uint64_t> parked{0};         // long-polls waiting now
  // Fetches that failed reading a segment file (an I/O error, a file shorter than the
  // log says): answered IO_ERROR when the open or a header read of the plan failed, or
  // cut off with their connection closed when it failed after the header went out.
  std::atomic<uint64_t> read_errors{0};
};

class FetchLoop;

class FetchServer {
 public:
  // Binds, listens and starts the fetch thread. Fails if the address is taken, or
  // if another fetch server is attached to `signal` (one per engine).
  static Status Start(const FetchServerOptions& opts, std::shared_ptr<PartitionDirectory> dir,
                      std::shared_ptr<PublishSignal> signal, std::unique_ptr<FetchServer>* out);
  ~FetchServer();
  FetchServer(const FetchServer&) = delete;
  FetchServer& operator=(const FetchServer&) = delete;

  // JS thread: closes the listener and every connection, joins the thread. Idempotent.
  void Stop();
  int port() const { return port_; }
  const char* backend_name() const { return backend_name_; }
  const std::string& backend_note() const { return backend_note_; }
  const FetchCounters& counters() const { return counters_; }
  // Any thread. The last read error counted in read_errors (partition, offset, file,
  // errno text); empty before the first.
  std::string last_read_error() const;

 private:
  FetchServer() = default;
  int port_ = 0;
  const char* backend_name_ = "thread";
  std::string backend_note_;
  FetchCounters counters_;
  friend class FetchLoop;
  mutable std::mutex note_mu_;
  std::string last_read_error_;  // guarded by note_mu_
  std::unique_ptr<FetchLoop> loop_;
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace uringmq
