/* tests/test_scan.c — the loops full validation runs over every value
 * (src/ipc/scan.c), in each way this CPU has (portable, AVX2, AVX-512),
 * against a bit or an integer at a time.
 *
 * The lengths cross every step of the vector loops (a step of several
 * vectors, a vector at a time, the portable tail, and the AVX2 bit count's
 * per-byte sums folded every 15 pairs of vectors), at every alignment of
 * the start; every integer of an ordered sequence is lowered in turn (by
 * one and to the lowest value) and each must be seen, equal neighbours
 * must not; each bitmap is counted whole.  A way the CPU lacks is left out
 * and named; ipc_scan_select(NULL) must pick the fastest the CPU has, so
 * that a way never picked cannot pass for tested.  The reader's use of
 * them, through damaged files, is in tests/test_validation.c.
 *
 * Prints "N passed, M failed"; exits 1 on any failure. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ipc/scan.h"
#include "support/testutil.h"

static const char *const ways[] = {"portable", "avx2", "avx512"};
#define N_WAYS (sizeof ways / sizeof ways[0])

/* The way the CPU's features say ipc_scan_select(NULL) must pick. */
static const char *fastest_way(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq") &&
      __builtin_cpu_supports("popcnt"))
    return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")) return "avx2";
#endif
  return "portable";
}

/* Selects way w; 0 when the CPU does not have it. */
static int select_way(const char *w) {
  if (strcmp(ipc_scan_select(w), w) == 0) return 1;
  printf("  (no %s on this CPU: not tested)\n", w);
  return 0;
}

/* ---- offsets' order ------------------------------------------------------------- */

#define MAX_INTS 2200
/* The lengths checked at every integer; others just below and above the
 * step sizes (64 int32 / 32 int64 for AVX-512's four vectors, 64 / 32 for
 * AVX2's eight) and long ones. */
static const int64_t long_lengths[] = {255, 256, 257, 1023, 1025, 2049, MAX_INTS};

static void store(uint8_t *p, int width, int64_t k, int64_t v) {
  if (width == 4) {
    int32_t x = (int32_t)v;
    memcpy(p + 4 * k, &x, 4);
  } else {
    memcpy(p + 8 * k, &v, 8);
  }
}

static int64_t load(const uint8_t *p, int width, int64_t k) {
  if (width == 4) {
    int32_t x;
    memcpy(&x, p + 4 * k, 4);
    return x;
  }
  int64_t x;
  memcpy(&x, p + 8 * k, 8);
  return x;
}

/* n ordered integers at p (steps of 0, 1 or 2, so neighbours are often
 * equal), from a start above 1 so that lowering by one stays >= 0. */
static void fill_ordered(uint8_t *p, int width, int64_t n, uint64_t *seed) {
  int64_t v = 2 + (int64_t)(tu_splitmix64(seed) % 5);
  for (int64_t k = 0; k < n; k++) {
    store(p, width, k, v);
    v += (int64_t)(tu_splitmix64(seed) % 3);
  }
}

/* Ordered integers of length n at every alignment: accepted; each one
 * lowered below the one before (by one, and to the type's lowest value):
 * refused. */
static void order_case(const char *way, int width, int64_t n, uint64_t *seed) {
  static uint8_t bytes[8 * MAX_INTS + 64];
  int64_t lowest = width == 4 ? INT32_MIN : INT64_MIN;
  for (int shift = 0; shift < width; shift += (n > 300 ? 3 : 1)) {
    uint8_t *p = bytes + shift;
    fill_ordered(p, width, n, seed);
    TU_CHECK(ipc_never_decreasing(p, width, n),
             "%s: %d-byte, %" PRId64 " at +%d: ordered ones refused", way, width, n, shift);
    for (int64_t k = 1; k < n; k++) {
      int64_t v = load(p, width, k);
      store(p, width, k, load(p, width, k - 1) - 1);
      int by_one = ipc_never_decreasing(p, width, n);
      store(p, width, k, lowest);
      int to_lowest = ipc_never_decreasing(p, width, n);
      store(p, width, k, v);
      if (!TU_CHECK(!by_one && !to_lowest,
                    "%s: %d-byte, %" PRId64 " at +%d: integer %" PRId64 " below the one before "
                    "not seen (lowered by one: %s; to the lowest: %s)",
                    way, width, n, shift, k, by_one ? "missed" : "seen",
                    to_lowest ? "missed" : "seen"))
        return;
    }
  }
}

static void order_all(void) {
  uint64_t seed = 1;
  for (size_t w = 0; w < N_WAYS; w++) {
    if (!select_way(ways[w])) continue;
    for (int width = 4; width <= 8; width += 4) {
      for (int64_t n = 0; n <= 200; n++) order_case(ways[w], width, n, &seed);
      for (size_t i = 0; i < sizeof long_lengths / sizeof long_lengths[0]; i++)
        order_case(ways[w], width, long_lengths[i], &seed);
    }
  }
  ipc_scan_select(NULL);
}

/* ---- bit counts ------------------------------------------------------------------- */

#define MAX_BITMAP 2100 /* bytes: past two of AVX2's folds of 15 pairs of 32 bytes */

static int64_t bits_one_at_a_time(const uint8_t *bits, int64_t n_bytes) {
  int64_t set = 0;
  for (int64_t i = 0; i < 8 * n_bytes; i++) set += (bits[i / 8] >> (i % 8)) & 1;
  return set;
}

/* Every length up to 300 bytes, then every 13th up to MAX_BITMAP, at four
 * alignments: random bytes, all ones
 * (the per-byte sums at their largest) and a single set bit at the end. */
static void bits_all(void) {
  static uint8_t bytes[MAX_BITMAP + 8];
  for (size_t w = 0; w < N_WAYS; w++) {
    if (!select_way(ways[w])) continue;
    uint64_t seed = 7;
    for (int shift = 0; shift < 4; shift++) {
      uint8_t *bits = bytes + shift;
      for (int64_t n = 0; n <= MAX_BITMAP; n += n < 300 ? 1 : 13) {
        for (int kind = 0; kind < 3; kind++) {
          for (int64_t i = 0; i < n; i++)
            bits[i] = kind == 0 ? (uint8_t)tu_splitmix64(&seed) : kind == 1 ? 0xFF : 0;
          if (kind == 2 && n > 0) bits[n - 1] = 0x80;
          int64_t want = bits_one_at_a_time(bits, n), got = ipc_count_set_bits(bits, n);
          if (!TU_CHECK(got == want,
                        "%s: %" PRId64 " bytes at +%d (%s): %" PRId64 " set bits, not %" PRId64,
                        ways[w], n, shift,
                        kind == 0   ? "random"
                        : kind == 1 ? "ones"
                                    : "last bit",
                        got, want))
            return;
        }
      }
    }
  }
  ipc_scan_select(NULL);
}

/* ---- the pick ------------------------------------------------------------------------ */

static void picks_fastest(void) {
  const char *got = ipc_scan_select(NULL);
  TU_CHECK(strcmp(got, fastest_way()) == 0, "picked %s on a CPU whose fastest is %s", got,
           fastest_way());
  /* A limit above what the CPU has picks the fastest too. */
  TU_CHECK(strcmp(ipc_scan_select("avx512"), fastest_way()) == 0, "a limit of avx512 picked %s",
           ipc_scan_select("avx512"));
  TU_CHECK(strcmp(ipc_scan_select("portable"), "portable") == 0, "a limit of portable");
  ipc_scan_select(NULL);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"order", order_all},
      {"bits", bits_all},
      {"picks_fastest", picks_fastest},
  };
  return TU_MAIN(argc, argv, "scan", cases);
}
