// The fetch plane's wire format (docs/FETCH-PROTOCOL.md is the spec). All integers
// little-endian, like the RecordBatch format whose bytes the responses carry.
// Shared by the server (fetch_server.cc) and the native benchmark client.
#pragma once

#include <cstddef>
#include <cstdint>

namespace uringmq {
namespace fetchproto {

inline constexpr uint32_t kMagic = 0x46514D55;  // bytes "UMQF"
// The versions this server speaks: a connection speaks the one its client's hello
// names (version 2 adds the INCARNATION flag; a version-1 connection is byte for byte
// what it was).
inline constexpr uint16_t kMinVersion = 1;
inline constexpr uint16_t kVersion = 2;
inline constexpr size_t kMaxTokenBytes = 256;

// Client hello: magic u32, version u16, token_len u16, token bytes.
inline constexpr size_t kClientHelloFixed = 8;
// Server hello: magic u32, version u16, error u16, max_fetch_bytes u32, max_wait_ms u32.
inline constexpr size_t kServerHelloSize = 16;

// Fetch request frame: length u32 (bytes after this field), type u8, flags u8,
// topic_len u16, correlation_id u32, partition u32, offset i64, max_bytes u32,
// max_wait_ms u32, [incarnation u64 when flags has kFlagIncarnation (version 2)],
// then topic_len bytes of topic name.
inline constexpr uint8_t kTypeFetch = 1;
// Version 2: the request names the topic's incarnation (its createdAt) it expects; a
// topic of that name that is another incarnation is answered kTopicIncarnationMismatch.
inline constexpr uint8_t kFlagIncarnation = 0x01;
inline constexpr size_t kIncarnationBytes = 8;
inline constexpr size_t kFetchFixed = 32;  // including the length field
inline constexpr size_t kMaxTopicBytes = 249;
inline constexpr size_t kMaxRequestBytes = kFetchFixed + kIncarnationBytes + kMaxTopicBytes;

// Response header: correlation_id u32, error u16, reserved u16, high_watermark i64,
// log_start_offset i64, length u32, reserved u32; then `length` bytes of whole
// RecordBatches.
inline constexpr size_t kResponseHeaderSize = 32;

enum class Error : uint16_t {
  kOk = 0,
  kUnknownTopicOrPartition = 1,
  kOffsetOutOfRange = 2,
  kInvalidRequest = 3,
  kUnsupportedVersion = 4,
  kAuthFailed = 5,
  kTooManyConnections = 6,
  kIoError = 7,
  kShuttingDown = 8,
  kTopicIncarnationMismatch = 9,  // version 2: the topic under that name is another incarnation
};

inline void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void Put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t Get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
inline uint64_t Get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

}  // namespace fetchproto
}  // namespace uringmq
