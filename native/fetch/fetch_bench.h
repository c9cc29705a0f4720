// Benchmark helpers for bench/fetch.ts, exported by the addon for benchmarks only:
// the ceiling (a bare sendfile loop from a file to a loopback socket, drained by a
// native reader) and a native fetch-protocol client that drains a partition, so the
// fetch plane can be measured with the same kind of reader as the ceiling. Each
// call owns the threads and sockets it makes, and closes them before returning.
#pragma once

#include <cstdint>
#include <string>

namespace uringmq {

struct BenchResult {
  uint64_t bytes = 0;
  uint64_t records = 0;
  uint64_t requests = 0;
  double seconds = 0;
  std::string error;  // empty when it worked
};

// sendfile(2) of [0, data_bytes) of `path`, over and over, to a loopback TCP socket
// for `seconds`; a second thread reads and discards.
BenchResult SendfileCeiling(const std::string& path, uint64_t data_bytes, double seconds);

struct FetchDrainOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string token;
  std::string topic;
  uint32_t partition = 0;
  int64_t from_offset = 0;  // start here, and again after reaching the end
  uint32_t max_bytes = 1u << 20;
  double seconds = 3;
};

// Fetches from_offset..end of one partition, over and over, for `seconds`; one
// request in flight, each response read into one buffer and its batches counted.
BenchResult FetchDrain(const FetchDrainOptions& o);

}  // namespace uringmq
