/* values.h — text renderings of single values, one function per family.
 *
 * Shared by `cat --format csv|json` (readable values) and
 * `cat --format arrow-json` (Arrow's integration JSON).  Renderings are
 * exact: integers of any width in full, decimals from their two's
 * complement bytes, floats with the fewest digits that read back to the
 * same float, temporal values as ISO-8601 in UTC (proleptic Gregorian). */
#ifndef XCHG_CLI_VALUES_H
#define XCHG_CLI_VALUES_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/node.h"
#include "cli/strbuf.h"

void xv_i64(xs *s, int64_t v);
void xv_u64(xs *s, uint64_t v);

/* Shortest round-trip decimal text of v held at bits (16, 32, 64) of
 * precision.  Non-finite values are "NaN", "Infinity", "-Infinity",
 * in double quotes when json is true (JSON has no literal for them). */
void xv_float(xs *s, double v, int bits, bool json);
double xv_half_to_double(uint16_t h);

/* The integer in nbytes little-endian two's complement bytes, with a
 * decimal point scale digits from the right (scale 0: the plain integer;
 * negative scale: trailing zeros). */
void xv_decimal(xs *s, const uint8_t *bytes, int nbytes, int32_t scale);

/* ISO-8601: 2024-03-01, 2024-03-01T12:00:00.123456[Z], 12:00:00.5 */
void xv_date_days(xs *s, int64_t days);
void xv_date_millis(xs *s, int64_t millis);
void xv_timestamp(xs *s, int64_t v, xc_unit unit, bool utc);
void xv_time_of_day(xs *s, int64_t v, xc_unit unit);
/* ISO-8601 durations: PT1.500S, P14M, P3DT0.250S, P1M2DT0.000000003S */
void xv_duration(xs *s, int64_t v, xc_unit unit);
void xv_interval_months(xs *s, int32_t months);
void xv_interval_day_time(xs *s, int32_t days, int32_t millis);
void xv_interval_month_day_nano(xs *s, int32_t months, int32_t days, int64_t nanos);

/* Uppercase hexadecimal, two digits a byte. */
void xv_hex(xs *s, const uint8_t *bytes, int64_t n);

/* A JSON string literal of UTF-8 text; invalid sequences become U+FFFD. */
void xv_json_string(xs *s, const uint8_t *bytes, int64_t n);

/* Appends the readable text of the non-null scalar element i of n (any
 * non-nested, non-dictionary type).  json: string-like values are written
 * as JSON string literals; otherwise raw text (for CSV cells). */
void xv_scalar(xs *s, const xc_node *n, int64_t i, bool json);

#endif
