/* values.c — exact text renderings of single values.
 *
 * Assumes a little-endian host, as the reader hands out native-endian data
 * and decimals are read limb by limb from the low address up. */
#include "cli/render/values.h"

#include <math.h>
#include <string.h>

#include "cli/render/shortest.h"
#include "codec/helpers.h"

void xv_u64(xs *s, uint64_t v) {
  char *at = xs_room(s, 20);
  if (at != NULL) xs_commit(s, xv_put_u64(at, v));
}

void xv_i64(xs *s, int64_t v) {
  char *at = xs_room(s, 21);
  if (at == NULL) return;
  size_t sign = v < 0;
  at[0] = '-';
  xs_commit(s, sign + xv_put_u64(at + sign, sign ? (uint64_t)0 - (uint64_t)v : (uint64_t)v));
}

/* ---- floating point ---------------------------------------------------- */

static double xv_half_to_double(uint16_t h) {
  int exponent = (h >> 10) & 0x1f;
  int mantissa = h & 0x3ff;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * ldexp(mantissa | 0x400, exponent - 25);
}

void xv_float(xs *s, double v, int bits, bool json) {
  if (!isfinite(v)) {
    const char *text = isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity");
    xs_printf(s, json ? "\"%s\"" : "%s", text);
    return;
  }
  char *at = xs_room(s, XV_SHORTEST_MAX);
  if (at != NULL) xs_commit(s, xv_shortest(at, v, bits));
}

/* ---- decimals ------------------------------------------------------------ */

/* Divides the little-endian 32-bit limbs by d in place; returns the rest. */
static uint32_t limbs_divide(uint32_t *limbs, int n, uint32_t d) {
  uint64_t rest = 0;
  for (int i = n - 1; i >= 0; i--) {
    uint64_t cur = (rest << 32) | limbs[i];
    limbs[i] = (uint32_t)(cur / d);
    rest = cur % d;
  }
  return (uint32_t)rest;
}

static bool limbs_zero(const uint32_t *limbs, int n) {
  for (int i = 0; i < n; i++)
    if (limbs[i]) return false;
  return true;
}

/* Decimal digits of the magnitude, most significant first, into digits
 * (at least 80 bytes); returns how many. */
static int magnitude_digits(const uint8_t *bytes, int nbytes, bool *negative, char *digits) {
  uint32_t limbs[8];
  int n = nbytes / 4;
  memcpy(limbs, bytes, (size_t)nbytes);
  *negative = (bytes[nbytes - 1] & 0x80) != 0;
  if (*negative) { /* two's complement: invert and add one */
    uint64_t carry = 1;
    for (int i = 0; i < n; i++) {
      uint64_t sum = (uint64_t)(uint32_t)~limbs[i] + carry;
      limbs[i] = (uint32_t)sum;
      carry = sum >> 32;
    }
  }
  char reversed[96];
  int len = 0;
  do {
    uint32_t chunk = limbs_divide(limbs, n, 1000000000u);
    for (int k = 0; k < 9; k++) {
      reversed[len++] = (char)('0' + chunk % 10);
      chunk /= 10;
    }
  } while (!limbs_zero(limbs, n));
  while (len > 1 && reversed[len - 1] == '0') len--;
  for (int i = 0; i < len; i++) digits[i] = reversed[len - 1 - i];
  return len;
}

void xv_decimal(xs *s, const uint8_t *bytes, int nbytes, int32_t scale) {
  char digits[96] = {0};
  bool negative;
  int len = magnitude_digits(bytes, nbytes, &negative, digits);
  if (negative) xs_putc(s, '-');
  if (scale <= 0) {
    xs_append(s, digits, (size_t)len);
    if (len > 1 || digits[0] != '0')
      for (int32_t k = 0; k < -scale; k++) xs_putc(s, '0');
    return;
  }
  if (len <= scale) { /* 0.00ddd */
    xs_puts(s, "0.");
    for (int32_t k = len; k < scale; k++) xs_putc(s, '0');
    xs_append(s, digits, (size_t)len);
    return;
  }
  xs_append(s, digits, (size_t)(len - scale));
  xs_putc(s, '.');
  xs_append(s, digits + len - scale, (size_t)scale);
}

/* ---- dates and times ------------------------------------------------------ */

/* a = *quotient * b + remainder, 0 <= remainder < b (b > 0), without the
 * product that overflows near INT64_MIN. */
static int64_t floor_divmod(int64_t a, int64_t b, int64_t *quotient) {
  int64_t q = a / b, r = a % b;
  if (r < 0) {
    r += b;
    q -= 1;
  }
  *quotient = q;
  return r;
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q;
  floor_divmod(a, b, &q);
  return q;
}

/* Days since 1970-01-01 to a proleptic Gregorian date: shift to eras of
 * 400 years starting on March 1st, where leap days fall at the end. */
static void civil_from_days(int64_t days, int64_t *year, int *month, int *day) {
  int64_t z = days + 719468;
  int64_t era = floor_div(z, 146097);
  int64_t doe = z - era * 146097;                                      /* [0, 146096] */
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
  int64_t mp = (5 * doy + 2) / 153;                                    /* March = 0 */
  *day = (int)(doy - (153 * mp + 2) / 5 + 1);
  *month = (int)(mp < 10 ? mp + 3 : mp - 9);
  *year = yoe + era * 400 + (*month <= 2);
}

static void put_date(xs *s, int64_t days) {
  int64_t year;
  int month, day;
  civil_from_days(days, &year, &month, &day);
  if (year >= 0 && year <= 9999)
    xs_printf(s, "%04lld-%02d-%02d", (long long)year, month, day);
  else /* ISO-8601 expanded years carry a sign */
    xs_printf(s, "%+05lld-%02d-%02d", (long long)year, month, day);
}

static int64_t units_per_second(ipc_unit unit) {
  switch (unit) {
    case IPC_UNIT_MILLI: return 1000;
    case IPC_UNIT_MICRO: return 1000000;
    case IPC_UNIT_NANO: return 1000000000;
    default: return 1;
  }
}

static int fraction_digits(ipc_unit unit) {
  switch (unit) {
    case IPC_UNIT_MILLI: return 3;
    case IPC_UNIT_MICRO: return 6;
    case IPC_UNIT_NANO: return 9;
    default: return 0;
  }
}

static void put_clock(xs *s, int64_t second_of_day, int64_t fraction, ipc_unit unit) {
  xs_printf(s, "%02d:%02d:%02d", (int)(second_of_day / 3600), (int)(second_of_day / 60 % 60),
            (int)(second_of_day % 60));
  if (fraction_digits(unit) > 0)
    xs_printf(s, ".%0*lld", fraction_digits(unit), (long long)fraction);
}

static void xv_date_days(xs *s, int64_t days) { put_date(s, days); }

static void xv_timestamp(xs *s, int64_t v, ipc_unit unit, bool utc) {
  int64_t seconds, days;
  int64_t fraction = floor_divmod(v, units_per_second(unit), &seconds);
  int64_t second_of_day = floor_divmod(seconds, 86400, &days);
  put_date(s, days);
  xs_putc(s, 'T');
  put_clock(s, second_of_day, fraction, unit);
  if (utc) xs_putc(s, 'Z');
}

static void xv_date_millis(xs *s, int64_t millis) {
  if (millis % 86400000 == 0)
    put_date(s, millis / 86400000);
  else /* not a whole day: show all of it rather than lose the rest */
    xv_timestamp(s, millis, IPC_UNIT_MILLI, false);
}

static void xv_time_of_day(xs *s, int64_t v, ipc_unit unit) {
  int64_t per = units_per_second(unit);
  if (v < 0 || v / per >= 86400) { /* outside a day: keep the raw count */
    xs_printf(s, "%lld%s", (long long)v, ipc_unit_name(unit));
    return;
  }
  put_clock(s, v / per, v % per, unit);
}

/* "12.500" from a magnitude in 1/per units. */
static void put_seconds(xs *s, uint64_t magnitude, ipc_unit unit) {
  uint64_t per = (uint64_t)units_per_second(unit);
  xs_printf(s, "%llu", (unsigned long long)(magnitude / per));
  if (fraction_digits(unit) > 0)
    xs_printf(s, ".%0*llu", fraction_digits(unit), (unsigned long long)(magnitude % per));
}

static uint64_t magnitude(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }

static void xv_duration(xs *s, int64_t v, ipc_unit unit) {
  xs_puts(s, v < 0 ? "-PT" : "PT");
  put_seconds(s, magnitude(v), unit);
  xs_putc(s, 'S');
}

static void xv_interval_months(xs *s, int32_t months) { xs_printf(s, "P%dM", months); }

static void put_signed_seconds(xs *s, int64_t v, ipc_unit unit) {
  if (v < 0) xs_putc(s, '-');
  put_seconds(s, magnitude(v), unit);
  xs_putc(s, 'S');
}

static void xv_interval_day_time(xs *s, int32_t days, int32_t millis) {
  xs_printf(s, "P%dDT", days);
  put_signed_seconds(s, millis, IPC_UNIT_MILLI);
}

static void xv_interval_month_day_nano(xs *s, int32_t months, int32_t days, int64_t nanos) {
  xs_printf(s, "P%dM%dDT", months, days);
  put_signed_seconds(s, nanos, IPC_UNIT_NANO);
}

/* ---- bytes and text ------------------------------------------------------- */

void xv_hex(xs *s, const uint8_t *bytes, int64_t n) {
  static const char digits[] = "0123456789ABCDEF";
  for (int64_t i = 0; i < n; i++) {
    char pair[2] = {digits[bytes[i] >> 4], digits[bytes[i] & 15]};
    xs_append(s, pair, 2);
  }
}

/* Length of the valid UTF-8 sequence at p (of at most n bytes), or 0. */
static int utf8_sequence(const uint8_t *p, int64_t n) {
  uint8_t c = p[0];
  int len;
  uint32_t min;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
    min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    min = 0x10000;
  } else
    return 0;
  if (n < len) return 0;
  uint32_t cp = c & (0x3f >> (len - 1));
  for (int k = 1; k < len; k++) {
    if ((p[k] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (p[k] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

/* Bytes from i on that a JSON string holds as they are: printable ASCII
 * but the quote and the backslash. */
static int64_t plain_ascii_run(const uint8_t *bytes, int64_t i, int64_t n) {
  int64_t end = i;
  while (end < n && bytes[end] >= 0x20 && bytes[end] < 0x80 && bytes[end] != '"' &&
         bytes[end] != '\\')
    end++;
  return end - i;
}

static bool name_needs_quotes(const char *name, size_t len, const char *separators) {
  if (len == 0 || name[0] == ' ' || name[len - 1] == ' ') return true;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\' || strchr(separators, c) != NULL)
      return true;
  }
  return false;
}

void xv_name(xs *s, const char *name, const char *separators) {
  if (name == NULL) name = "";
  size_t len = strlen(name);
  if (name_needs_quotes(name, len, separators))
    xv_json_string(s, (const uint8_t *)name, (int64_t)len);
  else
    xs_append(s, name, len);
}

void xv_json_string(xs *s, const uint8_t *bytes, int64_t n) {
  xs_putc(s, '"');
  int64_t i = 0;
  while (i < n) {
    int64_t run = plain_ascii_run(bytes, i, n);
    xs_append(s, bytes + i, (size_t)run);
    i += run;
    if (i == n) break;
    uint8_t c = bytes[i];
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      xs_append(s, esc, 2);
      i++;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': xs_puts(s, "\\n"); break;
        case '\r': xs_puts(s, "\\r"); break;
        case '\t': xs_puts(s, "\\t"); break;
        default: xs_printf(s, "\\u%04x", c); break;
      }
      i++;
    } else {
      int len = utf8_sequence(bytes + i, n - i);
      if (len == 0) {
        xs_puts(s, "\\ufffd");
        i++;
      } else {
        xs_append(s, bytes + i, (size_t)len);
        i += len;
      }
    }
  }
  xs_putc(s, '"');
}

/* ---- one scalar element of a column, readable -------------------------------- */

static void scalar_int(xs *s, const xc_node *n, int64_t i) {
  if (n->type.is_signed)
    xv_i64(s, xc_read_int(n, 1, i, n->type.bit_width));
  else
    xv_u64(s, xc_read_uint(n, 1, i, n->type.bit_width));
}

static void scalar_float(xs *s, const xc_node *n, int64_t i, bool json) {
  double v;
  if (n->type.bit_width == 16) {
    v = xv_half_to_double((uint16_t)xc_read_uint(n, 1, i, 16));
  } else if (n->type.bit_width == 32) {
    float f;
    memcpy(&f, xc_fixed(n, 1, i, 4), 4);
    v = f;
  } else {
    memcpy(&v, xc_fixed(n, 1, i, 8), 8);
  }
  xv_float(s, v, n->type.bit_width, json);
}

static void scalar_bool(xs *s, const xc_node *n, int64_t i) {
  xs_puts(s, bitmap_get(n->array->buffers[1], n->array->offset + i) ? "true" : "false");
}

static void scalar_binary(xs *s, const xc_node *n, int64_t i, bool json) {
  int64_t size;
  const uint8_t *bytes = xc_binary(n, i, &size);
  if (n->type.utf8) {
    if (json)
      xv_json_string(s, bytes, size);
    else
      xs_append(s, bytes, (size_t)size);
    return;
  }
  if (json) xs_putc(s, '"');
  xv_hex(s, bytes, size);
  if (json) xs_putc(s, '"');
}

/* Temporal, interval and decimal values: plain ASCII text. */
static void scalar_textual(xs *s, const xc_node *n, int64_t i) {
  const ipc_schema_view *t = &n->type;
  switch (t->kind) {
    case IPC_KIND_DECIMAL:
      xv_decimal(s, xc_fixed(n, 1, i, t->bit_width / 8), t->bit_width / 8, t->scale);
      return;
    case IPC_KIND_DATE:
      if (t->unit == IPC_UNIT_DAY)
        xv_date_days(s, xc_read_int(n, 1, i, 32));
      else
        xv_date_millis(s, xc_read_int(n, 1, i, 64));
      return;
    case IPC_KIND_TIME: xv_time_of_day(s, xc_read_int(n, 1, i, t->bit_width), t->unit); return;
    case IPC_KIND_TIMESTAMP:
      xv_timestamp(s, xc_read_int(n, 1, i, 64), t->unit, t->tz[0] != '\0');
      return;
    case IPC_KIND_DURATION: xv_duration(s, xc_read_int(n, 1, i, 64), t->unit); return;
    case IPC_KIND_INTERVAL: {
      const uint8_t *p = xc_fixed(n, 1, i,
                                  t->interval == IPC_INTERVAL_YEAR_MONTH ? 4
                                  : t->interval == IPC_INTERVAL_DAY_TIME ? 8
                                                                         : 16);
      int32_t a, b;
      int64_t c;
      memcpy(&a, p, 4);
      if (t->interval == IPC_INTERVAL_YEAR_MONTH) {
        xv_interval_months(s, a);
        return;
      }
      memcpy(&b, p + 4, 4);
      if (t->interval == IPC_INTERVAL_DAY_TIME) {
        xv_interval_day_time(s, a, b);
        return;
      }
      memcpy(&c, p + 8, 8);
      xv_interval_month_day_nano(s, a, b, c);
      return;
    }
    default: return;
  }
}

void xv_scalar(xs *s, const xc_node *n, int64_t i, bool json) {
  switch (n->type.kind) {
    case IPC_KIND_BOOL: scalar_bool(s, n, i); return;
    case IPC_KIND_INT: scalar_int(s, n, i); return;
    case IPC_KIND_FLOAT: scalar_float(s, n, i, json); return;
    case IPC_KIND_BINARY:
    case IPC_KIND_BINARY_VIEW:
    case IPC_KIND_FIXED_BINARY: scalar_binary(s, n, i, json); return;
    default:
      if (json) xs_putc(s, '"');
      scalar_textual(s, n, i);
      if (json) xs_putc(s, '"');
      return;
  }
}
