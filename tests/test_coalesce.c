/* tests/test_coalesce.c — the shuffle coalescer's parts below the reader
 * (test_shuffle reads through it end to end): the offset rebase, each copy
 * of it (the portable loop; AVX2 where the CPU has it) against a plain
 * sum worked out here, at every count of offsets up to a few vectors past
 * the unrolled step, every byte alignment of source and destination, and
 * deltas that wrap. */
#include <stdio.h>
#include <string.h>

#include "ipc/array.h"
#include "shuffle/coalesce_internal.h"
#include "support/testutil.h"

typedef void rebase_fn(uint8_t *dst, const uint8_t *src, int64_t n, int width, int64_t delta);

enum { MAX_OFFSETS = 300, GUARD = 40, SPACE = 8 * MAX_OFFSETS + 2 * GUARD + 8 };

/* Offset i of a buffer of `width`-byte little-endian offsets. */
static uint64_t offset_at(const uint8_t *p, int width, int64_t i) {
  uint64_t v = 0;
  for (int b = width - 1; b >= 0; b--) v = v << 8 | p[width * i + b];
  return v;
}

/* One call of fn, its output checked offset by offset and the bytes
 * around it unchanged; returns 0, or -1 with msg set. */
static int check_one(rebase_fn *fn, int width, int64_t n, int src_shift, int dst_shift,
                     int64_t delta, uint64_t *seed, char *msg, size_t size) {
  uint8_t src[SPACE], dst[SPACE];
  for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)tu_splitmix64(seed);
  memset(dst, 0xa5, sizeof dst);
  uint8_t *out = dst + GUARD + dst_shift;
  const uint8_t *in = src + GUARD + src_shift;
  fn(out, in, n, width, delta);
  uint64_t mask = width == 4 ? 0xffffffffu : ~(uint64_t)0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t want = (offset_at(in, width, i) + (uint64_t)delta) & mask;
    if (offset_at(out, width, i) != want)
      return tu_errorf(msg, size, "offset %lld of %lld: %llu, not %llu", (long long)i, (long long)n,
                       (unsigned long long)offset_at(out, width, i), (unsigned long long)want);
  }
  for (uint8_t *p = dst; p < dst + sizeof dst; p++)
    if ((p < out || p >= out + n * width) && *p != 0xa5)
      return tu_errorf(msg, size, "byte %lld of the destination, outside the %lld offsets, written",
                       (long long)(p - out), (long long)n);
  return 0;
}

static void check_copy(const char *name, rebase_fn *fn) {
  static const int64_t deltas[] = {0,         1,         -1,        7,         -123456,
                                   INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, (int64_t)1 << 32};
  uint64_t seed = 21;
  int failed = 0;
  for (int width = 4; width <= 8 && !failed; width += 4)
    for (int64_t n = 0; n <= MAX_OFFSETS && !failed; n++)
      for (int shift = 0; shift < 8 && !failed; shift++) {
        char msg[256];
        int64_t delta = deltas[(n + shift) % (int64_t)(sizeof deltas / sizeof *deltas)];
        failed = check_one(fn, width, n, shift, (shift * 3) % 8, delta, &seed, msg, sizeof msg);
        TU_CHECK(!failed, "%s, %d-byte offsets, %lld of them, source at +%d: %s", name, width,
                 (long long)n, shift, msg);
      }
}

static void rebase_portable(void) { check_copy("portable", coalesce_rebase_portable); }

static void rebase_avx2(void) {
#ifdef COALESCE_REBASE_AVX2
  if (IPC_CPU_HAS("avx2")) {
    check_copy("avx2", coalesce_rebase_avx2);
    return;
  }
#endif
  printf("rebase_avx2: this CPU has no AVX2 copy to check\n");
}

static void rebase_picked(void) { check_copy("the copy picked", coalesce_rebase); }

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"rebase_portable", rebase_portable},
      {"rebase_avx2", rebase_avx2},
      {"rebase_picked", rebase_picked},
  };
  return TU_MAIN(argc, argv, "coalesce", cases);
}
