/* shortest.h — the shortest decimal text that reads back to the same float.
 *
 * For a finite value held at a precision of 16, 32 or 64 bits (half,
 * float, double), xv_shortest finds the decimal with the fewest significant
 * digits that rounds (to nearest, ties to even) back to the value at that
 * precision, and among those the one closest to it, and writes it as
 * printf's "%.<n>g" writes n such digits: "0.1", "123", "1e+20",
 * "1.5e-07", "-0".  Schubfach's algorithm (R. Giulietti, "The Schubfach way
 * to render doubles", 2020): one 64x128-bit product per bound, no loop of
 * trial conversions. */
#ifndef XCHG_CLI_SHORTEST_H
#define XCHG_CLI_SHORTEST_H

#include <stddef.h>
#include <stdint.h>

/* The longest text xv_shortest writes: "-1.2345678901234567e-308". */
#define XV_SHORTEST_MAX 32

/* Writes the text of finite v (exactly representable at bits 16, 32 or
 * 64) into out, without a terminating NUL; returns its length. */
size_t xv_shortest(char *out, double v, int bits);

/* Writes the decimal digits of d (at most 20) into out, without a
 * terminating NUL; returns how many. */
size_t xv_put_u64(char *out, uint64_t d);

#endif
