#include "log/crc32c.h"

#include <cstring>
#include <nmmintrin.h>

namespace uringmq {
namespace {

struct Tables {
  uint32_t t[8][256];
  Tables() {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
      for (int s = 1; s < 8; s++) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};

const Tables& SoftTables() {
  static const Tables tables;
  return tables;
}

uint32_t Crc32cSoft(const uint8_t* p, size_t n, uint32_t crc) {
  const Tables& T = SoftTables();
  crc = ~crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    v ^= crc;
    crc = T.t[7][v & 0xff] ^ T.t[6][(v >> 8) & 0xff] ^ T.t[5][(v >> 16) & 0xff] ^
          T.t[4][(v >> 24) & 0xff] ^ T.t[3][(v >> 32) & 0xff] ^ T.t[2][(v >> 40) & 0xff] ^
          T.t[1][(v >> 48) & 0xff] ^ T.t[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ T.t[0][(crc ^ *p++) & 0xff];
  return ~crc;
}

// Interleaving: the crc32 instruction has a latency of 3 cycles but a throughput
// of 1 per cycle, so one dependent chain runs at a third of the possible speed
// (~8 GB/s against ~20). Three chains over adjacent blocks run at once; their CRCs
// are combined by "shifting" the first over the length of the next block, a linear
// operator over GF(2) precomputed as byte tables (the method of Mark Adler's
// crc32c.c). Batches are checksummed on the producer, on the server's I/O thread
// and by consumers, so this is on every hot path.
constexpr size_t kLong = 8192;
constexpr size_t kShort = 256;
constexpr uint32_t kPoly = 0x82F63B78u;

uint32_t Gf2Times(const uint32_t* mat, uint32_t vec) {
  uint32_t sum = 0;
  while (vec) {
    if (vec & 1) sum ^= *mat;
    vec >>= 1;
    mat++;
  }
  return sum;
}

void Gf2Square(uint32_t* square, const uint32_t* mat) {
  for (int n = 0; n < 32; n++) square[n] = Gf2Times(mat, mat[n]);
}

// The operator that appends `len` zero bytes (a power of two) to a raw CRC.
void ZerosOperator(uint32_t* even, size_t len) {
  uint32_t odd[32];
  odd[0] = kPoly;
  uint32_t row = 1;
  for (int n = 1; n < 32; n++) {
    odd[n] = row;
    row <<= 1;
  }
  Gf2Square(even, odd);  // 2 zero bits
  Gf2Square(odd, even);  // 4 zero bits
  // Each square doubles: the first gives one zero byte, in `even`.
  do {
    Gf2Square(even, odd);
    len >>= 1;
    if (len == 0) return;
    Gf2Square(odd, even);
    len >>= 1;
  } while (len);
  for (int n = 0; n < 32; n++) even[n] = odd[n];
}

struct ShiftTable {
  uint32_t t[4][256];
  explicit ShiftTable(size_t len) {
    uint32_t op[32];
    ZerosOperator(op, len);
    for (uint32_t n = 0; n < 256; n++) {
      t[0][n] = Gf2Times(op, n);
      t[1][n] = Gf2Times(op, n << 8);
      t[2][n] = Gf2Times(op, n << 16);
      t[3][n] = Gf2Times(op, n << 24);
    }
  }
  uint32_t Shift(uint32_t crc) const { return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24]; }
};

const ShiftTable kLongShift(kLong);
const ShiftTable kShortShift(kShort);

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

template <size_t kBlock>
__attribute__((target("sse4.2"))) inline uint64_t ThreeWay(const uint8_t*& p, size_t& n, uint64_t c0, const ShiftTable& shift) {
  while (n >= 3 * kBlock) {
    uint64_t c1 = 0, c2 = 0;
    const uint8_t* end = p + kBlock;
    do {
      c0 = _mm_crc32_u64(c0, Load64(p));
      c1 = _mm_crc32_u64(c1, Load64(p + kBlock));
      c2 = _mm_crc32_u64(c2, Load64(p + 2 * kBlock));
      p += 8;
    } while (p < end);
    c0 = shift.Shift(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    c0 = shift.Shift(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c2);
    p += 2 * kBlock;
    n -= 3 * kBlock;
  }
  return c0;
}

__attribute__((target("sse4.2"))) uint32_t Crc32cHw(const uint8_t* p, size_t n, uint32_t crc) {
  uint64_t c = ~crc & 0xffffffffu;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    n--;
  }
  c = ThreeWay<kLong>(p, n, c, kLongShift);
  c = ThreeWay<kShort>(p, n, c, kShortShift);
  while (n >= 8) {
    c = _mm_crc32_u64(c, Load64(p));
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}

const bool kHaveHw = __builtin_cpu_supports("sse4.2");

}  // namespace

uint32_t Crc32c(const uint8_t* data, size_t len, uint32_t crc) {
  return kHaveHw ? Crc32cHw(data, len, crc) : Crc32cSoft(data, len, crc);
}

}  // namespace uringmq
