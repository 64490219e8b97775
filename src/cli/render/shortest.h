/* shortest.h — the shortest decimal text that reads back to the same float.
 *
 * For a finite value held at a precision of 16, 32 or 64 bits (half,
 * float, double), xv_shortest finds the decimal with the fewest significant
 * digits that rounds (to nearest, ties to even) back to the value at that
 * precision, and among those the one closest to it, and writes it as
 * Python's repr writes a float's shortest digits, without its ".0": plain
 * notation from 1e-4 up to (not including) 1e16, "100", "250", "0.0001",
 * "123456790" (float32 123456789), and exponent notation outside it, with
 * at least two exponent digits, "1e+16", "1.5e-05", "-0" kept.
 * JavaScript's Number.prototype.toString is plain up to 1e21, but there an
 * integer such as 100000000000000000000 no longer fits the 64-bit integer
 * that JSON parsers (jansson) and CSV type inference read it as.
 * Schubfach's algorithm (R. Giulietti, "The Schubfach way to render
 * doubles", 2020): one 64x128-bit product per bound, no loop of trial
 * conversions. */
#ifndef XCHG_CLI_RENDER_SHORTEST_H
#define XCHG_CLI_RENDER_SHORTEST_H

#include <stddef.h>
#include <stdint.h>

/* The longest text xv_shortest writes: "-1.2345678901234567e-308". */
#define XV_SHORTEST_MAX 32

/* Plain notation when the exponent of the first significant digit is in
 * [XV_PLAIN_MIN, XV_PLAIN_END): 1e-4 <= |v| < 1e16. */
#define XV_PLAIN_MIN (-4)
#define XV_PLAIN_END 16

/* Writes the text of finite v (exactly representable at bits 16, 32 or
 * 64) into out, without a terminating NUL; returns its length. */
size_t xv_shortest(char *out, double v, int bits);

/* Writes the decimal digits of d (at most 20) into out, without a
 * terminating NUL; returns how many. */
size_t xv_put_u64(char *out, uint64_t d);

#endif
