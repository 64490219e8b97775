/* stream_hash.c — the checksums stream formats carry: XXH32 (lz4-java's
 * block checksum; liblz4 keeps its copy private) and CRC-32C (the snappy
 * framing format).  Both written from their specifications. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/cpu.h"
#include "codec/stream_hash.h"
#include "codec/stream_window.h"

#define XXH_P1 2654435761u
#define XXH_P2 2246822519u
#define XXH_P3 3266489917u
#define XXH_P4 668265263u
#define XXH_P5 374761393u

static inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

static inline uint32_t xxh_round(uint32_t acc, uint32_t lane) {
  return rotl32(acc + lane * XXH_P2, 13) * XXH_P1;
}

uint32_t xchg_xxh32(const void *data, size_t n, uint32_t seed) {
  const uint8_t *p = data;
  const uint8_t *end = p + n;
  uint32_t h;
  if (n >= 16) {
    uint32_t v1 = seed + XXH_P1 + XXH_P2, v2 = seed + XXH_P2, v3 = seed, v4 = seed - XXH_P1;
    const uint8_t *last_stripe = end - 16;
    do {
      v1 = xxh_round(v1, stream_le32(p));
      v2 = xxh_round(v2, stream_le32(p + 4));
      v3 = xxh_round(v3, stream_le32(p + 8));
      v4 = xxh_round(v4, stream_le32(p + 12));
      p += 16;
    } while (p <= last_stripe);
    h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
  } else {
    h = seed + XXH_P5;
  }
  h += (uint32_t)n;
  for (; end - p >= 4; p += 4) h = rotl32(h + stream_le32(p) * XXH_P3, 17) * XXH_P4;
  for (; p < end; p++) h = rotl32(h + *p * XXH_P5, 11) * XXH_P1;
  h ^= h >> 15;
  h *= XXH_P2;
  h ^= h >> 13;
  h *= XXH_P3;
  h ^= h >> 16;
  return h;
}

/* ---- CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) ------------------
 *
 * Two ways, the same result: eight bytes per step through eight tables
 * (any CPU), and the x86-64 SSE4.2 crc32 instruction, picked at run time.
 * The instruction takes 3 cycles but starts one a cycle, so long inputs run
 * as three streams side by side, joined by shifting a stream's CRC over the
 * bytes after it (a multiplication by x^(8n) modulo the polynomial, four
 * table lookups for a fixed n).  The tables are built on first use. */
#define CRC_POLY 0x82F63B78u
#define CRC_LONG 2048 /* bytes per stream in a step of three, for long inputs */
#define CRC_SHORT 256 /* the same for what is left */

static uint32_t crc_tables[8][256];
static uint32_t crc_shift_long[4][256], crc_shift_short[4][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* a * b modulo the polynomial, in the reflected bit order (zlib's
 * multmodp). */
static uint32_t crc_multmodp(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
    if (a & m) p ^= b;
    b = (b >> 1) ^ (CRC_POLY & (0u - (b & 1)));
  }
  return p;
}

/* x^(8n) modulo the polynomial: what a CRC is multiplied by to shift it
 * over n zero bytes. */
static uint32_t crc_x8n(size_t n) {
  uint32_t r = 1u << 31, sq = 1u << 30;                     /* x^0, x^1 */
  for (size_t k = 0; k < 3; k++) sq = crc_multmodp(sq, sq); /* x^8 */
  for (; n != 0; n >>= 1, sq = crc_multmodp(sq, sq))
    if (n & 1) r = crc_multmodp(sq, r);
  return r;
}

static void crc_build_shift(uint32_t table[4][256], size_t n) {
  uint32_t x8n = crc_x8n(n);
  for (int k = 0; k < 4; k++)
    for (uint32_t i = 0; i < 256; i++) table[k][i] = crc_multmodp(x8n, i << (8 * k));
}

static void crc_build(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (CRC_POLY & (0u - (c & 1)));
    crc_tables[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      crc_tables[t][i] = (crc_tables[t - 1][i] >> 8) ^ crc_tables[0][crc_tables[t - 1][i] & 0xFF];
  crc_build_shift(crc_shift_long, CRC_LONG);
  crc_build_shift(crc_shift_short, CRC_SHORT);
}

/* The CRC register c carried over the n bytes the table was built for. */
static inline uint32_t crc_shift(const uint32_t table[4][256], uint32_t c) {
  return table[0][c & 0xFF] ^ table[1][(c >> 8) & 0xFF] ^ table[2][(c >> 16) & 0xFF] ^
         table[3][c >> 24];
}

static uint32_t crc32c_table(uint32_t c, const uint8_t *p, size_t n) {
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo = c ^ stream_le32(p), hi = stream_le32(p + 4);
    c = crc_tables[7][lo & 0xFF] ^ crc_tables[6][(lo >> 8) & 0xFF] ^
        crc_tables[5][(lo >> 16) & 0xFF] ^ crc_tables[4][lo >> 24] ^ crc_tables[3][hi & 0xFF] ^
        crc_tables[2][(hi >> 8) & 0xFF] ^ crc_tables[1][(hi >> 16) & 0xFF] ^
        crc_tables[0][hi >> 24];
  }
  for (; n > 0; n--, p++) c = (c >> 8) ^ crc_tables[0][(c ^ *p) & 0xFF];
  return c;
}

typedef uint32_t (*crc32c_fn)(uint32_t c, const uint8_t *p, size_t n);

#ifdef CPU_X86
#define CRC_SSE42 CPU_TARGET("sse4.2")

/* Three streams of `len` bytes each at p, p + len, p + 2 len, joined. */
CRC_SSE42 static inline uint64_t crc32c_sse42_three(uint64_t c0, const uint8_t *p, size_t len,
                                                    const uint32_t shift[4][256]) {
  uint64_t c1 = 0, c2 = 0;
  for (const uint8_t *end = p + len; p < end; p += 8) {
    c0 = _mm_crc32_u64(c0, stream_le64(p));
    c1 = _mm_crc32_u64(c1, stream_le64(p + len));
    c2 = _mm_crc32_u64(c2, stream_le64(p + 2 * len));
  }
  c0 = crc_shift(shift, (uint32_t)c0) ^ c1;
  return crc_shift(shift, (uint32_t)c0) ^ c2;
}

CRC_SSE42 static uint32_t crc32c_sse42(uint32_t c, const uint8_t *p, size_t n) {
  uint64_t c0 = c;
  for (; n >= 3 * CRC_LONG; n -= 3 * CRC_LONG, p += 3 * CRC_LONG)
    c0 = crc32c_sse42_three(c0, p, CRC_LONG, crc_shift_long);
  for (; n >= 3 * CRC_SHORT; n -= 3 * CRC_SHORT, p += 3 * CRC_SHORT)
    c0 = crc32c_sse42_three(c0, p, CRC_SHORT, crc_shift_short);
  for (; n >= 8; n -= 8, p += 8) c0 = _mm_crc32_u64(c0, stream_le64(p));
  uint32_t c32 = (uint32_t)c0;
  for (; n > 0; n--, p++) c32 = _mm_crc32_u8(c32, *p);
  return c32;
}
#endif

/* The way in use: NULL until the first CRC, which picks the best.  The
 * release/acquire pair makes the tables built before it visible with it. */
static _Atomic(crc32c_fn) crc_impl; /* static: starts NULL */

const char *xchg_crc32c_select(int portable) {
  pthread_once(&crc_once, crc_build);
  crc32c_fn f = crc32c_table;
  const char *name = "table";
#ifdef CPU_X86
  if (!portable && CPU_HAS("sse4.2")) {
    f = crc32c_sse42;
    name = "sse4.2";
  }
#endif
  atomic_store_explicit(&crc_impl, f, memory_order_release);
  return name;
}

uint32_t xchg_crc32c(const void *data, size_t n) {
  crc32c_fn f = atomic_load_explicit(&crc_impl, memory_order_acquire);
  if (f == NULL) {
    (void)xchg_crc32c_select(0);
    f = atomic_load_explicit(&crc_impl, memory_order_acquire);
  }
  return f(0xFFFFFFFFu, data, n) ^ 0xFFFFFFFFu;
}
