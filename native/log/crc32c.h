// CRC32C (Castagnoli), the checksum of every RecordBatch. Uses the SSE4.2 crc32
// instruction when the CPU has it (checked once at startup), else slicing-by-8.
#pragma once

#include <cstddef>
#include <cstdint>

namespace uringmq {

uint32_t Crc32c(const uint8_t* data, size_t len, uint32_t crc = 0);

}  // namespace uringmq
