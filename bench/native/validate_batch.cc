// What the I/O thread spends per record on a batch it takes from JavaScript, before the
// write: the copy into the partition's staging buffer, the CRC32C, and the walk that
// checks every record's framing (PartitionLog::Stage, ValidateBatch). 1000-record batches
// of 100-byte values, copied from 256 source buffers (27 MB, as many as the gRPC
// benchmark keeps in flight, so the sources are not in cache).
//
//   npm run bench:validate
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "log/crc32c.h"
#include "log/record_batch.h"

using namespace uringmq;

namespace {

// A batch as the JavaScript codec encodes it: no keys or headers, one timestamp.
std::vector<uint8_t> EncodeBatch(int n, int value_bytes) {
  std::vector<uint8_t> b(batch::kHeaderSize, 0);
  for (int i = 0; i < n; i++) {
    std::vector<uint8_t> body = {0, 0};  // attributes, timestamp delta
    for (unsigned v = i;; v >>= 7) {
      if (v < 0x80) {
        body.push_back(static_cast<uint8_t>(v));
        break;
      }
      body.push_back(static_cast<uint8_t>((v & 0x7f) | 0x80));
    }
    body.push_back(0);  // no key
    body.push_back(static_cast<uint8_t>(value_bytes));
    body.insert(body.end(), value_bytes, 0x62);
    body.push_back(0);  // no headers
    b.push_back(static_cast<uint8_t>(body.size()));
    b.insert(b.end(), body.begin(), body.end());
  }
  StoreLE<uint32_t>(&b[batch::kOffMagic], batch::kMagic);
  StoreLE<uint32_t>(&b[batch::kOffLength], static_cast<uint32_t>(b.size()));
  b[batch::kOffVersion] = batch::kVersion;
  StoreLE<uint16_t>(&b[batch::kOffHeaderLength], batch::kHeaderSize);
  StoreLE<uint32_t>(&b[batch::kOffRecordCount], n);
  StoreLE<uint32_t>(&b[batch::kOffLastOffsetDelta], n - 1);
  StoreLE<int64_t>(&b[batch::kOffFirstTimestamp], 1'700'000'000'000);
  StoreLE<int64_t>(&b[batch::kOffMaxTimestamp], 1'700'000'000'000);
  StoreLE<int64_t>(&b[batch::kOffProducerId], -1);
  StoreLE<int32_t>(&b[batch::kOffBaseSequence], -1);
  StoreLE<uint32_t>(&b[batch::kOffCrc], Crc32c(&b[batch::kCrcStart], b.size() - batch::kCrcStart));
  return b;
}

}  // namespace

int main() {
  constexpr int kSources = 256, kRecords = 1000, kIters = 6000;
  constexpr size_t kStaging = 1 << 20;
  const std::vector<uint8_t> proto = EncodeBatch(kRecords, 100);
  const size_t len = proto.size();
  std::vector<uint8_t*> sources(kSources);
  for (auto& s : sources) {
    s = static_cast<uint8_t*>(std::aligned_alloc(64, (len + 63) / 64 * 64));
    std::memcpy(s, proto.data(), len);
  }
  auto* staging = static_cast<uint8_t*>(std::aligned_alloc(4096, kStaging));
  std::memset(staging, 0, kStaging);

  struct Case {
    const char* name;
    int steps;  // 1 copy, 2 + CRC, 3 + CRC and walk (ValidateBatch, kVerify), 4 walk and seal on a staged copy
  };
  const Case cases[] = {{"copy into staging", 1}, {"copy + CRC32C", 2}, {"copy + ValidateBatch (CRC and walk)", 3}, {"ValidateBatch in cache (walk + seal)", 4}};
  std::printf("uringmq bench:validate — %d-record batches of 100 B values (%zu B), %d sources\n\n", kRecords, len, kSources);
  std::printf("| step | ns per record (best of 3) |\n|---|---:|\n");
  for (const Case& c : cases) {
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
      size_t pos = 0;
      uint32_t sink = 0;
      const auto t0 = std::chrono::steady_clock::now();
      for (int it = 0; it < kIters; it++) {
        if (pos + len > kStaging) pos = 0;
        uint8_t* dst = staging + pos;
        if (c.steps < 4) std::memcpy(dst, sources[it % kSources], len);
        if (c.steps == 2) sink ^= Crc32c(dst + batch::kCrcStart, len - batch::kCrcStart);
        if (c.steps >= 3) {
          BatchHeader h;
          Status s = ValidateBatch(c.steps == 4 ? staging : dst, len, c.steps == 4 ? CrcMode::kSeal : CrcMode::kVerify, &h);
          if (!s.ok()) {
            std::fprintf(stderr, "%s\n", s.message.c_str());
            return 1;
          }
          sink ^= h.crc;
        }
        if (c.steps < 4) pos += len;
      }
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / kIters / kRecords;
      if (ns < best) best = ns;
      if (sink == 0x12345678) std::puts("");  // keeps the CRC from being optimised away
    }
    std::printf("| %s | %.1f |\n", c.name, best);
  }
  return 0;
}
