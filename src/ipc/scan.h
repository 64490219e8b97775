/* scan.h — the loops that full validation runs over every value: the
 * order of offsets and the set bits of a validity bitmap.
 *
 * They are most of what validating a batch costs (an offsets buffer has a
 * value per row), so each comes in three ways: portable C, AVX2 (with
 * popcnt) and AVX-512 (F and VPOPCNTDQ: a masked compare and a 64-byte
 * bit count per instruction).  The fastest way the CPU has is picked at
 * the first scan; tests pick each in turn (ipc_scan_select) so that every
 * way is checked on a CPU that has them all. */
#ifndef XCHG_IPC_SCAN_H
#define XCHG_IPC_SCAN_H

#include <stdint.h>

/* Set bits in n_bytes bytes of a bitmap. */
int64_t ipc_count_set_bits(const uint8_t *bits, int64_t n_bytes);

/* Whether n integers of `width` bytes (4 or 8, signed) at p never
 * decrease.  One pass with no early exit: a caller looks for the first
 * decrease only when there is one. */
int ipc_never_decreasing(const uint8_t *p, int width, int64_t n);

/* Makes the scans run the fastest way this CPU has that is no faster than
 * `most` ("portable", "avx2" or "avx512"; NULL: no limit), and returns the
 * way's name.  For tests: the library picks the fastest by itself. */
const char *ipc_scan_select(const char *most);

#endif
