/* stream_hash.h — the checksums stream formats carry: XXH32 (lz4-java)
 * and masked CRC-32C (the snappy framing) (private to src/codec). */
#ifndef XCHG_CODEC_STREAM_HASH_H
#define XCHG_CODEC_STREAM_HASH_H

#include <stddef.h>
#include <stdint.h>

uint32_t xchg_xxh32(const void *data, size_t n, uint32_t seed);
uint32_t xchg_crc32c(const void *data, size_t n);
/* Picks how xchg_crc32c computes from now on: the CPU's CRC-32C instruction
 * where it has one (x86-64 SSE4.2), or with portable != 0 the table way
 * every CPU can run; returns "sse4.2" or "table".  The first CRC picks the
 * best by itself: this is for tests, which check both ways. */
const char *xchg_crc32c_select(int portable);
static inline uint32_t stream_snappy_mask_crc(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

#endif
