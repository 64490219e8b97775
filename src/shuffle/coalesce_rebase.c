/* coalesce_rebase.c — offsets moved onto the values before them: a
 * constant added to each (see coalesce_internal.h).
 *
 * Every offset of every binary and list field of every block is rebased,
 * 887 instructions for a 512-row utf8 column as the compiler vectorised
 * the loop (SSE2, a vector of four a step and the rest one by one).  With
 * AVX2 the loop takes four 32-byte vectors a step, and what is left over
 * is one more vector that ends at the last offset (the offsets before it
 * in that vector are written twice, the same value each time: dst and src
 * do not overlap); fewer offsets than one vector go one by one.  The copy
 * to run is picked per call from the CPU's features (base/cpu.h). */
#include <string.h>

#include "base/cpu.h"
#include "shuffle/coalesce_internal.h"

void coalesce_rebase_portable(uint8_t *dst, const uint8_t *src, int64_t n, int width,
                              int64_t delta) {
  if (width == 4) {
    for (int64_t i = 0; i < n; i++) {
      uint32_t v;
      memcpy(&v, src + 4 * i, 4);
      v += (uint32_t)delta;
      memcpy(dst + 4 * i, &v, 4);
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      uint64_t v;
      memcpy(&v, src + 8 * i, 8);
      v += (uint64_t)delta;
      memcpy(dst + 8 * i, &v, 8);
    }
  }
}

#ifdef CPU_X86
CPU_TARGET("avx2") static inline __m256i add_lanes(__m256i v, __m256i d, int width) {
  return width == 4 ? _mm256_add_epi32(v, d) : _mm256_add_epi64(v, d);
}

/* One vector of offsets at byte `at` of src, rebased to the same byte of dst. */
CPU_TARGET("avx2")
static inline void rebase_vector(uint8_t *dst, const uint8_t *src, int64_t at, __m256i d,
                                 int width) {
  __m256i v = _mm256_loadu_si256((const __m256i *)(src + at));
  _mm256_storeu_si256((__m256i *)(dst + at), add_lanes(v, d, width));
}

CPU_TARGET("avx2")
static inline void rebase_avx2_of(uint8_t *dst, const uint8_t *src, int64_t n, int width,
                                  int64_t delta) {
  int64_t bytes = n * width, at = 0;
  if (bytes < 32) {
    coalesce_rebase_portable(dst, src, n, width, delta);
    return;
  }
  __m256i d = width == 4 ? _mm256_set1_epi32((int32_t)(uint32_t)delta) : _mm256_set1_epi64x(delta);
  for (; at + 128 <= bytes; at += 128)
    for (int v = 0; v < 4; v++) rebase_vector(dst, src, at + 32 * v, d, width);
  for (; at + 32 <= bytes; at += 32) rebase_vector(dst, src, at, d, width);
  if (at < bytes) rebase_vector(dst, src, bytes - 32, d, width);
}

CPU_TARGET("avx2")
void coalesce_rebase_avx2(uint8_t *dst, const uint8_t *src, int64_t n, int width, int64_t delta) {
  if (width == 4)
    rebase_avx2_of(dst, src, n, 4, delta);
  else
    rebase_avx2_of(dst, src, n, 8, delta);
}
#endif

void coalesce_rebase(uint8_t *dst, const uint8_t *src, int64_t n, int width, int64_t delta) {
#ifdef CPU_X86
  if (CPU_HAS("avx2")) {
    coalesce_rebase_avx2(dst, src, n, width, delta);
    return;
  }
#endif
  coalesce_rebase_portable(dst, src, n, width, delta);
}
