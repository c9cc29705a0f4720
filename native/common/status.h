// Error values that cross from the core to JavaScript. A Status carries a stable
// code (mapped 1:1 to UringmqError codes in src/errors.ts) and a message that names
// the path and offset involved, so a user can act on it without reading our source.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>

namespace uringmq {

enum class Code : int {
  kOk = 0,
  kInvalidArgument = 1,
  kCorruptBatch = 2,
  kIoError = 3,
  kOffsetOutOfRange = 4,
  kDirLocked = 5,
  kRecordTooLarge = 6,
  kClosed = 7,
  kPartitionClosed = 8,
  kUnavailable = 9,
  kResourceExhausted = 10,  // the disk is full: this batch (or topic) only, nothing written
};

inline const char* CodeName(Code c) {
  switch (c) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: return "INVALID_ARGUMENT";
    case Code::kCorruptBatch: return "CORRUPT_BATCH";
    case Code::kIoError: return "IO_ERROR";
    case Code::kOffsetOutOfRange: return "OFFSET_OUT_OF_RANGE";
    case Code::kDirLocked: return "DIR_LOCKED";
    case Code::kRecordTooLarge: return "RECORD_TOO_LARGE";
    case Code::kClosed: return "BROKER_CLOSED";
    case Code::kPartitionClosed: return "TOPIC_NOT_FOUND";
    case Code::kUnavailable: return "IO_URING_UNAVAILABLE";
    case Code::kResourceExhausted: return "RESOURCE_EXHAUSTED";
  }
  return "IO_ERROR";
}

struct Status {
  Code code = Code::kOk;
  std::string message;

  bool ok() const { return code == Code::kOk; }
  static Status Ok() { return {}; }
  static Status Error(Code c, std::string msg) { return {c, std::move(msg)}; }
};

// "pwrite /data/t/0/000.log at offset 4096: No space left on device (errno 28)"
inline Status SysError(const char* op, const std::string& path, long long offset, int err) {
  std::string m = std::string(op) + " " + path;
  if (offset >= 0) m += " at offset " + std::to_string(offset);
  m += ": ";
  m += std::strerror(err);
  m += " (errno " + std::to_string(err) + ")";
  return Status::Error(Code::kIoError, std::move(m));
}

// A file system out of space (or the user's quota): a condition that passes, unlike
// other I/O errors, once retention or an operator frees space.
inline bool IsNoSpace(int err) { return err == ENOSPC || err == EDQUOT; }

}  // namespace uringmq
