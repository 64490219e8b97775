/* values.h — text renderings of single values, one function per family.
 *
 * Shared by `cat --format csv|json` (readable values) and
 * `cat --format arrow-json` (Arrow's integration JSON).  Readable temporal
 * values: ISO-8601 dates (2024-03-01), timestamps (2024-03-01T12:00:00.123,
 * with a Z when the type has a time zone), times of day (12:00:00.5) and
 * durations (PT1.500S, P14M, P3DT0.250S, P1M2DT0.000000003S).  Renderings are
 * exact: integers of any width in full, decimals from their two's
 * complement bytes, floats with the fewest digits that read back to the
 * same float, temporal values as ISO-8601 in UTC (proleptic Gregorian). */
#ifndef XCHG_CLI_RENDER_VALUES_H
#define XCHG_CLI_RENDER_VALUES_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/render/node.h"
#include "cli/render/strbuf.h"

void xv_i64(xs *s, int64_t v);
void xv_u64(xs *s, uint64_t v);

/* Shortest round-trip decimal text of v held at bits (16, 32, 64) of
 * precision.  Non-finite values are "NaN", "Infinity", "-Infinity",
 * in double quotes when json is true (JSON has no literal for them). */
void xv_float(xs *s, double v, int bits, bool json);

/* The integer in nbytes little-endian two's complement bytes, with a
 * decimal point scale digits from the right (scale 0: the plain integer;
 * negative scale: trailing zeros). */
void xv_decimal(xs *s, const uint8_t *bytes, int nbytes, int32_t scale);

/* Uppercase hexadecimal, two digits a byte. */
void xv_hex(xs *s, const uint8_t *bytes, int64_t n);

/* A JSON string literal of UTF-8 text; invalid sequences become U+FFFD. */
void xv_json_string(xs *s, const uint8_t *bytes, int64_t n);

/* A field name as it is, or as a JSON string literal where it would read
 * ambiguously in a line of text: when it is empty, begins or ends with a
 * space, or holds a control character (a newline), a double quote, a
 * backslash or one of the characters of separators (", " in a list of
 * names, ":" before a type).  name may be NULL (an unnamed field). */
void xv_name(xs *s, const char *name, const char *separators);

/* Appends the readable text of the non-null scalar element i of n (any
 * non-nested, non-dictionary type).  json: string-like values are written
 * as JSON string literals; otherwise raw text (for CSV cells). */
void xv_scalar(xs *s, const xc_node *n, int64_t i, bool json);

#endif
