/* helpers.h — the small helpers that more than one layer needs: a
 * monotonic clock, one bit of a bitmap, the FNV-1a hash, the magic of a
 * skippable frame, the words of an input cut short.
 *
 * One copy of each instead of one per file.  The header sits in codec/,
 * the lowest layer that uses one of them (the stream metrics time their
 * reads), so that every file that includes it is at or above its home and
 * no layer reaches upward.  Everything is static inline. */
#ifndef XCHG_CODEC_HELPERS_H
#define XCHG_CODEC_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC: for durations, never for dates. */
static inline int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Bit i of an Arrow bitmap (least significant bit first), 0 or 1. */
static inline int bitmap_get(const uint8_t *bits, int64_t i) {
  return (bits[i >> 3] >> (i & 7)) & 1;
}

/* The 64-bit FNV-1a hash of n bytes, continuing from h: FNV1A_BASIS for
 * a fresh hash, the previous result to hash more bytes after it. */
#define FNV1A_BASIS 0xcbf29ce484222325ull
static inline uint64_t fnv1a(const void *data, size_t n, uint64_t h) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/* Whether magic (the first 4 bytes, little-endian) begins a skippable
 * frame, LZ4's and zstd's alike: 0x184D2A50 to 0x184D2A5F, then a 4-byte
 * length of bytes that carry no data. */
static inline int is_skippable_frame_magic(uint32_t magic) {
  return (magic & 0xFFFFFFF0u) == 0x184D2A50u;
}

/* The words of an input that ends inside a piece of it, as the IPC reader
 * says them (src/ipc/reader.c): a format fragment that follows what was
 * being read and where it starts ("lz4-java block 3 at byte 40"), takes
 * the byte the input ends at (an unsigned long long), and leaves room for
 * what each reader knows more (", 30 of its 80 bytes"). */
#define CUT_SHORT_AT " is cut short: the input ends at byte %llu"

#endif
