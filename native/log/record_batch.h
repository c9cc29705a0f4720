// The RecordBatch layout shared by the wire and the disk (docs/FORMAT.md is the spec).
// All integers little-endian. The CRC covers bytes [20, batchLength): everything but
// magic, length, baseOffset and the CRC itself, so the broker can stamp baseOffset
// without recomputing it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/status.h"

namespace uringmq {

namespace batch {
inline constexpr uint32_t kMagic = 0x424D5155;  // bytes "UQMB"
inline constexpr uint8_t kVersion = 1;
inline constexpr uint32_t kHeaderSize = 64;
inline constexpr size_t kOffMagic = 0;
inline constexpr size_t kOffLength = 4;
inline constexpr size_t kOffBaseOffset = 8;
inline constexpr size_t kOffCrc = 16;
inline constexpr size_t kCrcStart = 20;
inline constexpr size_t kOffVersion = 20;
inline constexpr size_t kOffAttributes = 21;
inline constexpr size_t kOffHeaderLength = 22;
inline constexpr size_t kOffRecordCount = 24;
inline constexpr size_t kOffLastOffsetDelta = 28;
inline constexpr size_t kOffFirstTimestamp = 32;
inline constexpr size_t kOffMaxTimestamp = 40;
inline constexpr size_t kOffProducerId = 48;
inline constexpr size_t kOffBaseSequence = 56;
}  // namespace batch

template <typename T>
inline T LoadLE(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // x86-64 only: little-endian already
  return v;
}
template <typename T>
inline void StoreLE(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

struct BatchHeader {
  uint32_t length = 0;
  int64_t base_offset = 0;
  uint32_t crc = 0;
  uint32_t record_count = 0;
  int64_t first_timestamp = 0;
  int64_t max_timestamp = 0;
  int64_t producer_id = -1;
  int32_t base_sequence = -1;
  int64_t last_offset() const { return base_offset + record_count - 1; }
};

// Reads the fixed header fields; checks magic, version and the length bounds only.
// `avail` is how many bytes follow p. Returns false (without touching *h) if the
// bytes cannot be the start of a batch; a zeroed region (preallocated file) fails.
bool PeekHeader(const uint8_t* p, size_t avail, BatchHeader* h);

enum class CrcMode { kVerify, kSeal };

// Full validation of one batch occupying exactly [p, p+len): header, every record's
// framing, offset deltas, timestamps, and the CRC (kVerify) or computing and storing
// it (kSeal, for batches encoded by our own trusted JavaScript codec).
Status ValidateBatch(uint8_t* p, size_t len, CrcMode mode, BatchHeader* out);

// Checks the CRC of a batch whose header PeekHeader accepted and whose bytes are all
// present. Used by recovery and reads.
bool BatchCrcOk(const uint8_t* p, const BatchHeader& h);

}  // namespace uringmq
