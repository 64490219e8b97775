/* stream_hash.c — the checksums stream formats carry: XXH32 (lz4-java's
 * block checksum; liblz4 keeps its copy private) and CRC-32C (the snappy
 * framing format).  Both written from their specifications. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

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

/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), eight bytes per
 * step with eight tables built on first use. */
static uint32_t crc_tables[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_build(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
    crc_tables[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      crc_tables[t][i] = (crc_tables[t - 1][i] >> 8) ^ crc_tables[0][crc_tables[t - 1][i] & 0xFF];
}

uint32_t xchg_crc32c(const void *data, size_t n) {
  pthread_once(&crc_once, crc_build);
  const uint8_t *p = data;
  uint32_t c = 0xFFFFFFFFu;
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo = c ^ stream_le32(p), hi = stream_le32(p + 4);
    c = crc_tables[7][lo & 0xFF] ^ crc_tables[6][(lo >> 8) & 0xFF] ^
        crc_tables[5][(lo >> 16) & 0xFF] ^ crc_tables[4][lo >> 24] ^ crc_tables[3][hi & 0xFF] ^
        crc_tables[2][(hi >> 8) & 0xFF] ^ crc_tables[1][(hi >> 16) & 0xFF] ^
        crc_tables[0][hi >> 24];
  }
  for (; n > 0; n--, p++) c = (c >> 8) ^ crc_tables[0][(c ^ *p) & 0xFF];
  return c ^ 0xFFFFFFFFu;
}
