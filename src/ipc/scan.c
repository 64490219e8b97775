/* scan.c — see scan.h.  The AVX2 and AVX-512 ways are compiled and picked
 * as base/cpu.h says, at the first scan; elsewhere there is the portable
 * way only. */
#include <stdatomic.h>
#include <string.h>

#include "base/cpu.h"
#include "ipc/scan.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* ---- portable ------------------------------------------------------------------ */

/* Four words a step, in four sums: with popcnt (the builtin is a library
 * call per word without it) a popcnt and an add per word, where a word at
 * a time also spends the loop's own three instructions on each. */
ALWAYS_INLINE int64_t count_set_bits(const uint8_t *bits, int64_t n_bytes) {
  int64_t set = 0, i = 0, s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (; i + 32 <= n_bytes; i += 32) {
    uint64_t w0, w1, w2, w3;
    memcpy(&w0, bits + i, 8);
    memcpy(&w1, bits + i + 8, 8);
    memcpy(&w2, bits + i + 16, 8);
    memcpy(&w3, bits + i + 24, 8);
    s0 += __builtin_popcountll(w0);
    s1 += __builtin_popcountll(w1);
    s2 += __builtin_popcountll(w2);
    s3 += __builtin_popcountll(w3);
  }
  set = s0 + s1 + s2 + s3;
  for (; i + 8 <= n_bytes; i += 8) {
    uint64_t word;
    memcpy(&word, bits + i, 8);
    set += __builtin_popcountll(word);
  }
  for (; i < n_bytes; i++) set += __builtin_popcount(bits[i]);
  return set;
}

/* Each integer against the one before, no early exit; also the tail of
 * the vector ways. */
ALWAYS_INLINE int never_decreasing(const uint8_t *p, int width, int64_t n) {
  int decreases = 0;
  if (width == 4) {
    for (int64_t k = 1; k < n; k++) {
      int32_t before, after;
      memcpy(&before, p + 4 * (k - 1), 4);
      memcpy(&after, p + 4 * k, 4);
      decreases |= after < before;
    }
  } else {
    for (int64_t k = 1; k < n; k++) {
      int64_t before, after;
      memcpy(&before, p + 8 * (k - 1), 8);
      memcpy(&after, p + 8 * k, 8);
      decreases |= after < before;
    }
  }
  return !decreases;
}

static int64_t count_set_bits_portable(const uint8_t *bits, int64_t n_bytes) {
  return count_set_bits(bits, n_bytes);
}

static int never_decreasing_portable(const uint8_t *p, int width, int64_t n) {
  return never_decreasing(p, width, n);
}

#ifdef CPU_X86
/* ---- AVX2 ------------------------------------------------------------------------ */

/* The bits of each half byte looked up in a 16-entry table (vpshufb) and
 * summed per byte, 8 at most a vector, for up to 30 vectors, then per 8
 * bytes (vpsadbw): two vectors a step, eight instructions each where
 * popcnt spends twelve (a popcnt, an add and the zeroing that breaks
 * popcnt's false dependency, per word); the last bytes a word at a time. */
CPU_TARGET("avx2") ALWAYS_INLINE __m256i bits_per_byte(__m256i v) {
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2,
                                         1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low = _mm256_set1_epi8(0x0F);
  return _mm256_add_epi8(
      _mm256_shuffle_epi8(table, _mm256_and_si256(v, low)),
      _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low)));
}

CPU_TARGET("avx2,popcnt")
static int64_t count_set_bits_avx2(const uint8_t *bits, int64_t n_bytes) {
  const __m256i zero = _mm256_setzero_si256();
  __m256i sums = zero;
  int64_t pairs = n_bytes / 64;
  const uint8_t *p = bits;
  while (pairs > 0) {
    int64_t chunk = pairs < 15 ? pairs : 15;
    __m256i s0 = zero, s1 = zero;
    pairs -= chunk;
    for (const uint8_t *end = p + 64 * chunk; p != end; p += 64) {
      s0 = _mm256_add_epi8(s0, bits_per_byte(_mm256_loadu_si256((const __m256i *)p)));
      s1 = _mm256_add_epi8(s1, bits_per_byte(_mm256_loadu_si256((const __m256i *)(p + 32))));
    }
    sums = _mm256_add_epi64(sums,
                            _mm256_add_epi64(_mm256_sad_epu8(s0, zero), _mm256_sad_epu8(s1, zero)));
  }
  int64_t lanes[4];
  _mm256_storeu_si256((__m256i *)lanes, sums);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + count_set_bits(p, n_bytes - (p - bits));
}

/* Lanes of `before` above the same lanes of `after`: all ones where the
 * integers decrease. */
CPU_TARGET("avx2") ALWAYS_INLINE __m256i lanes_above(__m256i before, __m256i after, int width) {
  return width == 4 ? _mm256_cmpgt_epi32(before, after) : _mm256_cmpgt_epi64(before, after);
}

/* Eight 32-byte vectors a step, each compared with the vector one integer
 * before it and ORed into one sum that is tested once, at the end: a load,
 * a compare and an OR per vector (eight int32), and the loop's three
 * instructions per eight vectors; then a vector at a time, then the
 * portable loop for the last few. */
CPU_TARGET("avx2")
ALWAYS_INLINE int never_decreasing_avx2_of(const uint8_t *p, int width, int64_t n) {
  const int64_t lanes = 32 / width;
  __m256i decreases = _mm256_setzero_si256();
  int64_t k = 1; /* integer k is compared with integer k - 1 */
  for (; k + 8 * lanes <= n; k += 8 * lanes) {
    const uint8_t *after = p + width * k, *before = after - width;
    for (int v = 0; v < 8; v++)
      decreases = _mm256_or_si256(
          decreases, lanes_above(_mm256_loadu_si256((const __m256i *)(before + 32 * v)),
                                 _mm256_loadu_si256((const __m256i *)(after + 32 * v)), width));
  }
  for (; k + lanes <= n; k += lanes) {
    const uint8_t *after = p + width * k, *before = after - width;
    decreases =
        _mm256_or_si256(decreases, lanes_above(_mm256_loadu_si256((const __m256i *)before),
                                               _mm256_loadu_si256((const __m256i *)after), width));
  }
  return _mm256_testz_si256(decreases, decreases) &&
         never_decreasing(p + width * (k - 1), width, n - (k - 1));
}

CPU_TARGET("avx2") static int never_decreasing_avx2(const uint8_t *p, int width, int64_t n) {
  return width == 4 ? never_decreasing_avx2_of(p, 4, n) : never_decreasing_avx2_of(p, 8, n);
}

/* ---- AVX-512 ---------------------------------------------------------------------- */

#define AVX512 "avx512f,avx512vpopcntdq,popcnt"

/* A 64-byte vector's bit count per instruction, two sums; the last bytes
 * a word at a time. */
CPU_TARGET(AVX512) static int64_t count_set_bits_avx512(const uint8_t *bits, int64_t n_bytes) {
  __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
  int64_t i = 0;
  for (; i + 128 <= n_bytes; i += 128) {
    s0 = _mm512_add_epi64(s0, _mm512_popcnt_epi64(_mm512_loadu_si512(bits + i)));
    s1 = _mm512_add_epi64(s1, _mm512_popcnt_epi64(_mm512_loadu_si512(bits + i + 64)));
  }
  if (i + 64 <= n_bytes) {
    s0 = _mm512_add_epi64(s0, _mm512_popcnt_epi64(_mm512_loadu_si512(bits + i)));
    i += 64;
  }
  return _mm512_reduce_add_epi64(_mm512_add_epi64(s0, s1)) + count_set_bits(bits + i, n_bytes - i);
}

/* The integers one before those of `cur`: the last of `prev`, then all
 * but the last of `cur` (valignd), so that each integer is loaded once,
 * where a second load one integer back would cross a cache line in three
 * vectors of four. */
CPU_TARGET(AVX512) ALWAYS_INLINE __m512i one_before(__m512i cur, __m512i prev, int width) {
  return width == 4 ? _mm512_alignr_epi32(cur, prev, 15) : _mm512_alignr_epi64(cur, prev, 7);
}

/* Lanes where `before` <= `after`, among those of `ok`.  (The 64-bit
 * compare's own mask is eight bits: a compare under a 16-bit mask would
 * move it through a general register each time.) */
CPU_TARGET(AVX512)
ALWAYS_INLINE __mmask16 lanes_in_order(__mmask16 ok, __m512i before, __m512i after, int width) {
  return width == 4 ? _mm512_mask_cmple_epi32_mask(ok, before, after)
                    : _mm512_kand(ok, (__mmask16)_mm512_cmple_epi64_mask(before, after));
}

/* As the AVX2 way, with the sum in mask registers: a compare under the
 * mask of the lanes in order so far keeps only those still in order, so
 * that a vector (sixteen int32) costs a load, a valignd and a compare.
 * Four masks, four vectors a step, so that no compare waits for the one
 * before; then a vector at a time, then the portable loop from the last
 * integer a vector held. */
CPU_TARGET(AVX512)
ALWAYS_INLINE int never_decreasing_avx512_of(const uint8_t *p, int width, int64_t n) {
  const int64_t lanes = 64 / width;
  const __mmask16 all = width == 4 ? 0xFFFF : 0xFF;
  if (n < lanes) return never_decreasing(p, width, n);
  __mmask16 ok0 = all, ok1 = all, ok2 = all, ok3 = all;
  int64_t first;
  memcpy(&first, p, 8); /* n >= lanes: 64 bytes are there */
  /* Integer 0 is compared with itself. */
  __m512i prev = width == 4 ? _mm512_set1_epi32((int32_t)first) : _mm512_set1_epi64(first);
  int64_t k = 0; /* the first integer of the next vector */
  for (; k + 4 * lanes <= n; k += 4 * lanes) {
    const uint8_t *at = p + width * k;
    __m512i c0 = _mm512_loadu_si512(at), c1 = _mm512_loadu_si512(at + 64),
            c2 = _mm512_loadu_si512(at + 128), c3 = _mm512_loadu_si512(at + 192);
    ok0 = lanes_in_order(ok0, one_before(c0, prev, width), c0, width);
    ok1 = lanes_in_order(ok1, one_before(c1, c0, width), c1, width);
    ok2 = lanes_in_order(ok2, one_before(c2, c1, width), c2, width);
    ok3 = lanes_in_order(ok3, one_before(c3, c2, width), c3, width);
    prev = c3;
  }
  for (; k + lanes <= n; k += lanes) {
    __m512i c = _mm512_loadu_si512(p + width * k);
    ok0 = lanes_in_order(ok0, one_before(c, prev, width), c, width);
    prev = c;
  }
  return (ok0 & ok1 & ok2 & ok3) == all &&
         never_decreasing(p + width * (k - 1), width, n - (k - 1));
}

CPU_TARGET(AVX512) static int never_decreasing_avx512(const uint8_t *p, int width, int64_t n) {
  return width == 4 ? never_decreasing_avx512_of(p, 4, n) : never_decreasing_avx512_of(p, 8, n);
}
#endif

/* ---- picking a way ------------------------------------------------------------------ */

typedef struct scan_way {
  const char *name;
  int (*cpu_has)(void);
  int64_t (*count_set_bits)(const uint8_t *bits, int64_t n_bytes);
  int (*never_decreasing)(const uint8_t *p, int width, int64_t n);
} scan_way;

static int always(void) { return 1; }

#ifdef CPU_X86
static int has_avx2(void) { return CPU_HAS("avx2") && CPU_HAS("popcnt"); }
static int has_avx512(void) {
  return CPU_HAS("avx512f") && CPU_HAS("avx512vpopcntdq") && CPU_HAS("popcnt");
}
#endif

/* Slowest first. */
static const scan_way ways[] = {
    {"portable", always, count_set_bits_portable, never_decreasing_portable},
#ifdef CPU_X86
    {"avx2", has_avx2, count_set_bits_avx2, never_decreasing_avx2},
    {"avx512", has_avx512, count_set_bits_avx512, never_decreasing_avx512},
#endif
};

static _Atomic(const scan_way *) way_in_use; /* NULL until the first scan */

const char *ipc_scan_select(const char *most) {
  const scan_way *best = &ways[0];
  for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
    if (ways[i].cpu_has()) best = &ways[i];
    if (most && strcmp(ways[i].name, most) == 0) break;
  }
  atomic_store_explicit(&way_in_use, best, memory_order_relaxed);
  return best->name;
}

static const scan_way *way(void) {
  const scan_way *w = atomic_load_explicit(&way_in_use, memory_order_relaxed);
  if (!w) {
    (void)ipc_scan_select(NULL);
    w = atomic_load_explicit(&way_in_use, memory_order_relaxed);
  }
  return w;
}

int64_t ipc_count_set_bits(const uint8_t *bits, int64_t n_bytes) {
  return way()->count_set_bits(bits, n_bytes);
}

int ipc_never_decreasing(const uint8_t *p, int width, int64_t n) {
  return way()->never_decreasing(p, width, n);
}
