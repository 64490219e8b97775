/* tests/test_values.c — the values `xchg cat` prints, checked against
 * independent computations, through the real command on IPC streams that
 * xchg's own writer makes.
 *
 *  - floats: every half bit pattern, and random and edge floats and
 *    doubles (subnormals, extremes, powers of ten and two) print the text
 *    of the old trial loop (the first printf "%.<p>g" that reads back,
 *    kept here as the oracle), or, where the shortest decimal lies only on
 *    the narrow side of a power of two, a shorter text that still reads
 *    back; halves read back when rounded to half precision, so 2^-24 is
 *    "6e-08", not float32's "5.9604645e-08".  NaN and infinities as the
 *    CLI documents them, quoted in JSON.
 *  - timestamps, dates, durations and times of day of every unit at
 *    INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX (int32
 *    extremes for the 32-bit types), against text computed here with
 *    128-bit arithmetic and a calendar found by search, not by the CLI's
 *    formula; the sanitized CLI must not report undefined behaviour.
 *  - integers: powers of ten and their neighbours, the ends of int64 and
 *    uint64, against printf.
 *  - fixed_size_binary[0]: `inspect` names it, `cat` prints its empty
 *    values ("" in CSV and JSON) and nulls, `--format arrow-json` works. */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/c_fixture.h"
#include "support/interop.h"
#include "support/roundtrip.h"
#include "support/testutil.h"
#include "xchg/writer.h"
#include "xchg/xchg.h"

static const char *cli;

/* ---- one-column streams and the CLI ----------------------------------------------- */

/* Writes a stream of one batch whose columns have the given formats,
 * names and data buffers (validity optional); false on failure. */
static bool write_columns(const char *path, int n, const char *const *formats,
                          const char *const *names, const void *const *validity,
                          const void *const *data, int64_t rows) {
  struct ArrowSchema fields[8], root, *field_ptrs[8];
  struct ArrowArray columns[8], batch, *column_ptrs[8];
  const void *buffers[8][2];
  for (int c = 0; c < n; c++) {
    tu_fixture_schema(&fields[c], formats[c], names[c], 0, NULL);
    field_ptrs[c] = &fields[c];
    buffers[c][0] = validity ? validity[c] : NULL;
    buffers[c][1] = data[c];
    tu_fixture_array(&columns[c], rows, 2, buffers[c], 0, NULL);
    columns[c].null_count = -1; /* unknown, as the C Data Interface allows */
    column_ptrs[c] = &columns[c];
  }
  tu_fixture_schema(&root, "+s", "", n, field_ptrs);
  root.flags = 0;
  tu_fixture_array(&batch, rows, 1, (const void *[]){NULL}, n, column_ptrs);
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  xchg_buf *buf;
  char msg[256];
  if (rt_write(&root, &batch, 1, &opts, &buf, msg, sizeof msg) != 0) {
    TU_CHECK(0, "%s: %s", path, msg);
    return false;
  }
  int rc = tu_write_file(path, xchg_buf_data(buf), xchg_buf_size(buf));
  xchg_buf_unref(buf);
  TU_CHECK(rc == 0, "cannot write %s", path);
  return rc == 0;
}

static bool write_column(const char *path, const char *format, const void *data, int64_t rows) {
  return write_columns(path, 1, &format, (const char *const[]){"v"}, NULL, &data, rows);
}

/* Standard output of `$XCHG_CLI args`, NUL-terminated; the command must
 * exit 0 with nothing on standard error (the sanitizers report there). */
static tu_bytes cli_output(const char *args) {
  char err_path[] = "/tmp/test_values_err_XXXXXX", cmd[1024];
  tu_bytes out = {0};
  int fd = mkstemp(err_path);
  if (fd < 0) {
    TU_CHECK(false, "mkstemp");
    return out;
  }
  close(fd);
  snprintf(cmd, sizeof cmd, "'%s' %s 2>'%s'", cli, args, err_path);
  FILE *p = popen(cmd, "r");
  char chunk[65536];
  size_t n;
  while (p && (n = fread(chunk, 1, sizeof chunk, p)) > 0) tu_bytes_append(&out, chunk, n);
  int status = p ? pclose(p) : -1;
  tu_bytes_append(&out, "", 1);
  out.size--;
  tu_bytes err = tu_read_bytes(err_path);
  unlink(err_path);
  int shown = err.size < 300 ? (int)err.size : 300; /* the file's bytes have no NUL after them */
  TU_CHECK(status == 0, "`xchg %s` failed (status %d): %.*s", args, status, shown,
           err.data ? (char *)err.data : "");
  TU_CHECK(err.size == 0, "`xchg %s` wrote to stderr: %.*s", args, shown,
           err.data ? (char *)err.data : "");
  free(err.data);
  return out;
}

/* The lines of text after the header line (CSV) or from the start; each
 * line's newline becomes a NUL. */
static char **split_lines(tu_bytes *text, bool skip_header, size_t *count) {
  size_t cap = 1024, n = 0;
  char **lines = malloc(cap * sizeof *lines);
  char *p = (char *)text->data;
  if (skip_header) p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
  while (lines && *p) {
    char *end = strchr(p, '\n');
    if (end == NULL) break;
    *end = '\0';
    if (n == cap) lines = realloc(lines, (cap *= 2) * sizeof *lines);
    if (lines) lines[n++] = p;
    p = end + 1;
  }
  *count = lines ? n : 0;
  return lines;
}

/* ---- floats: the oracle ------------------------------------------------------------ */

/* Round to nearest, ties to even, of a double to half precision: the bits. */
static uint16_t half_from_double(double d) {
  uint16_t sign = signbit(d) ? 0x8000 : 0;
  double a = fabs(d);
  if (isnan(d)) return 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00; /* beyond max + half an ulp */
  int e;
  frexp(a, &e);                        /* a = m 2^e, m in [0.5, 1) */
  int q = e - 11 < -24 ? -24 : e - 11; /* the ulp's exponent at half precision */
  double scaled = ldexp(a, -q);        /* exact: a has 53 bits */
  double c = nearbyint(scaled);        /* ties to even in the default mode */
  return sign | (uint16_t)(c >= 2048   ? ((q + 1 + 25) << 10) | ((uint16_t)(c / 2) & 0x3ff)
                           : c >= 1024 ? ((q + 25) << 10) | ((uint16_t)c & 0x3ff)
                                       : (uint16_t)c);
}

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double mag = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
  return (h & 0x8000) ? -mag : mag;
}

static bool reads_back(const char *text, double v, int bits) {
  if (bits == 64) return strtod(text, NULL) == v;
  if (bits == 32) return strtof(text, NULL) == (float)v;
  return half_from_double(strtod(text, NULL)) == half_from_double(v);
}

/* The README's notation of the digits and exponent of printf's "%.<p>e"
 * text: plain for 1e-4 <= |v| < 1e16, else "d.ddde+XX". */
static void readme_notation(char *out, size_t size, const char *e_text) {
  char digits[32];
  int n = 0;
  const char *p = e_text;
  bool negative = *p == '-';
  if (negative) p++;
  for (; *p && *p != 'e'; p++)
    if (*p >= '0' && *p <= '9') digits[n++] = *p;
  int x = atoi(p + 1); /* the exponent of the first digit */
  while (n > 1 && digits[n - 1] == '0') n--;
  digits[n] = '\0';
  const char *sign = negative ? "-" : "";
  if (digits[0] == '0')
    snprintf(out, size, "%s0", sign);
  else if (x >= 16 || x < -4)
    snprintf(out, size, "%s%c%s%.*se%c%02d", sign, digits[0], n > 1 ? "." : "", n - 1, digits + 1,
             x < 0 ? '-' : '+', abs(x));
  else if (x < 0)
    snprintf(out, size, "%s0.%.*s%s", sign, -x - 1, "000", digits);
  else if (x + 1 >= n)
    snprintf(out, size, "%s%s%.*s", sign, digits, x + 1 - n, "000000000000000");
  else
    snprintf(out, size, "%s%.*s.%s", sign, x + 1, digits, digits + x + 1);
}

/* The old algorithm: the first "%.<p>g" that reads back, in the README's
 * notation. */
static void trial_loop(char *text, size_t size, double v, int bits) {
  char e_text[64];
  for (int p = 1; p <= 17; p++) {
    snprintf(e_text, sizeof e_text, "%.*e", p - 1, v);
    if (reads_back(e_text, v, bits)) break;
  }
  readme_notation(text, size, e_text);
}

static int significant_digits(const char *text) {
  int n = 0, leading = 1, trailing = 0;
  for (const char *p = text; *p && *p != 'e'; p++) {
    if (*p < '0' || *p > '9') continue;
    if (*p == '0' && leading) continue;
    leading = 0;
    n++;
    trailing = *p == '0' ? trailing + 1 : 0;
  }
  return n - trailing;
}

typedef struct float_tally {
  long checked, shorter;
} float_tally;

static void check_float_text(const char *got, double v, int bits, float_tally *tally) {
  char want[64];
  if (isnan(v))
    snprintf(want, sizeof want, "NaN");
  else if (isinf(v))
    snprintf(want, sizeof want, v > 0 ? "Infinity" : "-Infinity");
  else
    trial_loop(want, sizeof want, v, bits);
  tally->checked++;
  if (strcmp(got, want) == 0) return;
  /* The loop tries only the nearest p-digit decimal: beside a power of
   * two, a p-digit decimal on the wide side may read back when that one
   * does not. */
  int binary_exponent;
  bool power_of_two = isfinite(v) && v != 0 && fabs(frexp(v, &binary_exponent)) == 0.5;
  bool shorter = power_of_two && significant_digits(got) < significant_digits(want) &&
                 reads_back(got, v, bits);
  if (shorter) {
    tally->shorter++;
    return;
  }
  TU_CHECK(false, "float%d %.17g (%a): printed %s, expected %s", bits, v, v, got, want);
}

/* "WIDTH HEX TEXT" of every float checked, for tests/interop/floats/check.mjs. */
static FILE *node_cases;

static void add_node_case(int bits, const void *data, int64_t i, const char *text) {
  uint64_t raw = 0;
  if (bits == 16)
    raw = ((const uint16_t *)data)[i];
  else if (bits == 32)
    raw = ((const uint32_t *)data)[i];
  else
    raw = ((const uint64_t *)data)[i];
  if (node_cases) fprintf(node_cases, "%d %" PRIx64 " %s\n", bits, raw, text);
}

/* Prints values (of the given width) through `xchg cat` and checks every line. */
static void check_floats(const char *format, int bits, const void *data, const double *values,
                         int64_t n, float_tally *tally) {
  char path[] = "/tmp/test_values_float_XXXXXX", args[256];
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  if (fd < 0 || !write_column(path, format, data, n)) return;
  snprintf(args, sizeof args, "cat '%s' --format csv", path);
  tu_bytes out = cli_output(args);
  size_t count;
  char **lines = out.data ? split_lines(&out, true, &count) : NULL;
  TU_CHECK(lines && count == (size_t)n, "float%d: %zu lines for %lld values", bits,
           lines ? count : 0, (long long)n);
  for (int64_t i = 0; lines && i < n && i < (int64_t)count; i++) {
    check_float_text(lines[i], values[i], bits, tally);
    add_node_case(bits, data, i, lines[i]);
  }
  free(lines);
  free(out.data);
  unlink(path);
}

static void test_all_halves(void) {
  enum { N = 65536 };
  uint16_t *bits = malloc(N * sizeof *bits);
  double *values = malloc(N * sizeof *values);
  for (int i = 0; i < N; i++) {
    bits[i] = (uint16_t)i;
    values[i] = half_to_double((uint16_t)i);
  }
  float_tally t = {0, 0};
  check_floats("e", 16, bits, values, N, &t);
  printf("halves: %ld checked, %ld shorter than the trial loop's\n", t.checked, t.shorter);
  free(bits);
  free(values);
}

/* Doubles or floats: edge values first, then random bit patterns and
 * random values in [0, 1) (the cache shape's). */
static int64_t float_cases(double *out, int64_t n, int bits, uint64_t *seed) {
  int64_t k = 0;
  double edges[] = {0.0,
                    -0.0,
                    1.0,
                    -1.0,
                    0.1,
                    0.5,
                    1.5,
                    100.0,
                    123456.0,
                    1e21,
                    1e22,
                    1e23,
                    9007199254740993.0,
                    DBL_MIN,
                    DBL_MAX,
                    DBL_TRUE_MIN,
                    2 * DBL_TRUE_MIN,
                    3 * DBL_TRUE_MIN,
                    DBL_MIN - DBL_TRUE_MIN,
                    FLT_MIN,
                    FLT_MAX,
                    FLT_TRUE_MIN,
                    2 * (double)FLT_TRUE_MIN,
                    0x1p-24,
                    0x1p-14,
                    65504.0,
                    5e-324};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
    out[k++] = bits == 32 ? (float)edges[i] : edges[i];
  int lo = bits == 32 ? -45 : -323, hi = bits == 32 ? 38 : 308;
  for (int e = lo; e <= hi; e++) { /* powers of ten and their neighbours */
    char text[16];
    snprintf(text, sizeof text, "1e%d", e);
    double p = bits == 32 ? (double)strtof(text, NULL) : strtod(text, NULL);
    out[k++] = p;
    out[k++] = bits == 32 ? (double)nextafterf((float)p, INFINITY) : nextafter(p, INFINITY);
  }
  for (int e = bits == 32 ? -149 : -1074; e <= (bits == 32 ? 127 : 1023); e++)
    out[k++] = ldexp(1.0, e);
  while (k < n) {
    uint64_t r = tu_splitmix64(seed);
    double v;
    if (k % 3 == 0) {
      v = (double)(r >> 11) * 0x1p-53;
    } else if (bits == 32) {
      uint32_t u = (uint32_t)r;
      float f;
      memcpy(&f, &u, 4);
      v = f;
    } else {
      memcpy(&v, &r, 8);
    }
    if (bits == 32) v = (float)v;
    out[k++] = v;
  }
  return k;
}

static void test_random_floats(int bits, int64_t n) {
  uint64_t seed = bits == 32 ? 0x5eed32 : 0x5eed64;
  double *values = malloc((size_t)n * sizeof *values);
  float *singles = malloc((size_t)n * sizeof *singles);
  n = float_cases(values, n, bits, &seed);
  for (int64_t i = 0; i < n; i++) singles[i] = (float)values[i];
  float_tally t = {0, 0};
  check_floats(bits == 32 ? "f" : "g", bits,
               bits == 32 ? (const void *)singles : (const void *)values, values, n, &t);
  printf("float%d: %ld checked, %ld shorter than the trial loop's\n", bits, t.checked, t.shorter);
  free(values);
  free(singles);
}

/* The special values, CSV and JSON, and the half of the issue. */
static void test_float_texts(void) {
  /* 2^-24; infinities; NaN; -0; 1; 1365/4096 (0.3333 is within half
   * of 2^-12 of it); 65504 (65500 is within 16: half of its gap below). */
  static const uint16_t halves[] = {0x0001, 0x7c00, 0xfc00, 0x7e00, 0x8000, 0x3c00, 0x3555, 0x7bff};
  static const char *const csv[] = {"6e-08", "Infinity", "-Infinity", "NaN",
                                    "-0",    "1",        "0.3333",    "65500"};
  char path[] = "/tmp/test_values_half_XXXXXX", args[256];
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  if (fd < 0 || !write_column(path, "e", halves, 8)) return;
  for (int json = 0; json < 2; json++) {
    snprintf(args, sizeof args, "cat '%s' --format %s", path, json ? "json" : "csv");
    tu_bytes out = cli_output(args);
    size_t count;
    char **lines = out.data ? split_lines(&out, !json, &count) : NULL;
    for (size_t i = 0; lines && i < 8 && i < count; i++) {
      char want[64];
      bool quoted = json && (i >= 1 && i <= 3);
      snprintf(want, sizeof want, json ? (quoted ? "{\"v\":\"%s\"}" : "{\"v\":%s}") : "%s", csv[i]);
      TU_CHECK(strcmp(lines[i], want) == 0, "half 0x%04x (%s): printed %s, expected %s", halves[i],
               json ? "json" : "csv", lines[i], want);
    }
    TU_CHECK(lines && count == 8, "%zu lines of halves", lines ? count : 0);
    free(lines);
    free(out.data);
  }
  unlink(path);
}

/* The README's examples, through a float32 and a float64 column in CSV and
 * JSON: plain notation for 1e-4 <= |v| < 1e16, the exponent outside. */
static void test_float_notation(void) {
  static const float singles[] = {100.0f, 250.0f,  123456789.0f, 1e16f,
                                  1e-5f,  0.0001f, 1.5e-7f,      3.4028235e38f};
  static const double doubles[] = {100.0, 250.0,  123456789.0, 1e16,
                                   1e-5,  0.0001, 1.5e-7,      9999999999999998.0};
  static const char *const want[][2] = {{"100", "100"},
                                        {"250", "250"},
                                        {"123456790", "123456789"},
                                        {"1e+16", "1e+16"},
                                        {"1e-05", "1e-05"},
                                        {"0.0001", "0.0001"},
                                        {"1.5e-07", "1.5e-07"},
                                        {"3.4028235e+38", "9999999999999998"}};
  enum { N = sizeof singles / sizeof singles[0] };
  char path[] = "/tmp/test_values_notation_XXXXXX", args[256];
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  const void *data[] = {singles, doubles};
  if (fd < 0 || !write_columns(path, 2, (const char *const[]){"f", "g"},
                               (const char *const[]){"f", "d"}, NULL, data, N))
    return;
  for (int json = 0; json < 2; json++) {
    snprintf(args, sizeof args, "cat '%s' --format %s", path, json ? "json" : "csv");
    tu_bytes out = cli_output(args);
    size_t count;
    char **lines = out.data ? split_lines(&out, !json, &count) : NULL;
    for (size_t i = 0; lines && i < N && i < count; i++) {
      char line[128];
      snprintf(line, sizeof line, json ? "{\"f\":%s,\"d\":%s}" : "%s,%s", want[i][0], want[i][1]);
      TU_CHECK(strcmp(lines[i], line) == 0, "%s row %zu: printed %s, expected %s",
               json ? "json" : "csv", i, lines[i], line);
    }
    TU_CHECK(lines && count == N, "%zu lines of %d values", lines ? count : 0, N);
    free(lines);
    free(out.data);
  }
  unlink(path);
}

/* Every float checked above again, by another implementation: JavaScript
 * finds the shortest digits on its own (exact BigInt arithmetic, and V8's
 * String(x) for doubles) and renders them as the README says. */
static void test_floats_against_node(const char *cases_path) {
  char cmd[8192];
  int ready = tu_run("node --version >/dev/null 2>&1");
  TU_CHECK(ready == 0, "node is not on PATH (run scripts/setup.sh)");
  if (ready != 0) return;
  char out_path[] = "/tmp/test_values_node_XXXXXX";
  int fd = mkstemp(out_path);
  if (fd >= 0) close(fd);
  snprintf(cmd, sizeof cmd, "node '%s/check.mjs' '%s' > '%s'", tu_interop_dir("floats"), cases_path,
           out_path);
  int rc = tu_run("%s", cmd);
  tu_bytes out = tu_read_bytes(out_path);
  unlink(out_path);
  long checked = -1;
  if (out.data) {
    tu_bytes_append(&out, "", 1);
    sscanf((const char *)out.data, "checked %ld", &checked);
  }
  TU_CHECK(rc == 0 && checked > 200000, "%s exited %d after %ld values", cmd, rc, checked);
  printf("node: %ld float texts checked\n", checked);
  free(out.data);
}

/* ---- temporal values at the extremes -------------------------------------------------- */

typedef __int128 i128;

static i128 floor_div128(i128 a, i128 b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* Days from 1970-01-01 to January 1st of year y (proleptic Gregorian):
 * 365 a year plus a day for each leap year in between, counted as the
 * multiples of 4, 100 and 400 among the years before y and after 0. */
static i128 days_before_year(i128 y) {
  i128 leaps_before = floor_div128(y - 1, 4) - floor_div128(y - 1, 100) + floor_div128(y - 1, 400);
  i128 leaps_before_1970 = 1969 / 4 - 1969 / 100 + 1969 / 400;
  return 365 * (y - 1970) + leaps_before - leaps_before_1970;
}

static bool is_leap(i128 y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* The date of a day number, by binary search over years and a walk over
 * the months. */
static void date_of(i128 days, i128 *year, int *month, int *day) {
  i128 lo = -400000000000000LL,
       hi = 400000000000000LL; /* the last year starting on or before days */
  while (lo < hi) {
    i128 mid = lo + (hi - lo + 1) / 2;
    if (days_before_year(mid) <= days)
      lo = mid;
    else
      hi = mid - 1;
  }
  *year = lo;
  i128 rest = days - days_before_year(lo);
  static const int lengths[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int m = 0;
  while (rest >= lengths[m] + (m == 1 && is_leap(lo)))
    rest -= lengths[m] + (m == 1 && is_leap(lo)), m++;
  *month = m + 1;
  *day = (int)rest + 1;
}

static int put_date_text(char *out, size_t size, i128 days) {
  i128 y;
  int m, d;
  date_of(days, &y, &m, &d);
  long long year = (long long)y;
  if (year >= 0 && year <= 9999) return snprintf(out, size, "%04lld-%02d-%02d", year, m, d);
  return snprintf(out, size, "%c%04lld-%02d-%02d", year < 0 ? '-' : '+', year < 0 ? -year : year, m,
                  d);
}

static const int64_t per_second[4] = {1, 1000, 1000000, 1000000000};
static const char unit_codes[4] = {'s', 'm', 'u', 'n'};
static const char *const unit_names[4] = {"s", "ms", "us", "ns"};

static void fraction_text(char *out, size_t size, int unit, i128 fraction) {
  if (unit == 0)
    out[0] = '\0';
  else
    snprintf(out, size, ".%0*lld", unit * 3, (long long)fraction);
}

static void timestamp_text(char *out, size_t size, int64_t v, int unit, bool utc) {
  i128 per = per_second[unit], seconds = floor_div128(v, per), fraction = (i128)v - seconds * per;
  i128 days = floor_div128(seconds, 86400), second_of_day = seconds - days * 86400;
  char frac[32];
  fraction_text(frac, sizeof frac, unit, fraction);
  int n = put_date_text(out, size, days);
  snprintf(out + n, size - (size_t)n, "T%02d:%02d:%02d%s%s", (int)(second_of_day / 3600),
           (int)(second_of_day / 60 % 60), (int)(second_of_day % 60), frac, utc ? "Z" : "");
}

static void duration_text(char *out, size_t size, int64_t v, int unit) {
  i128 magnitude = v < 0 ? -(i128)v : (i128)v, per = per_second[unit];
  char frac[32];
  fraction_text(frac, sizeof frac, unit, magnitude % per);
  snprintf(out, size, "%sPT%llu%sS", v < 0 ? "-" : "", (unsigned long long)(magnitude / per), frac);
}

static void time_text(char *out, size_t size, int64_t v, int unit) {
  i128 per = per_second[unit];
  if (v < 0 || v / per >= 86400) {
    snprintf(out, size, "%lld%s", (long long)v, unit_names[unit]);
    return;
  }
  i128 s = v / per;
  char frac[32];
  fraction_text(frac, sizeof frac, unit, v % per);
  snprintf(out, size, "%02d:%02d:%02d%s", (int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60), frac);
}

static void date64_text(char *out, size_t size, int64_t millis) {
  if (millis % 86400000 == 0)
    put_date_text(out, size, millis / 86400000);
  else
    timestamp_text(out, size, millis, 1, false);
}

#define N_EXTREMES 7
static const int64_t extremes64[N_EXTREMES] = {INT64_MIN, INT64_MIN + 1, -1,       0,
                                               1,         INT64_MAX - 1, INT64_MAX};
static const int32_t extremes32[N_EXTREMES] = {INT32_MIN, INT32_MIN + 1, -1,       0,
                                               1,         INT32_MAX - 1, INT32_MAX};

typedef struct temporal_column {
  char format[8];
  char name[16];
  bool wide; /* int64 values, else int32 */
  char expected[N_EXTREMES][96];
} temporal_column;

static int temporal_columns(temporal_column *cols) {
  int n = 0;
  for (int u = 0; u < 4; u++) {
    for (int utc = 0; utc < 2; utc++) {
      temporal_column *c = &cols[n++];
      snprintf(c->format, sizeof c->format, "ts%c:%s", unit_codes[u], utc ? "UTC" : "");
      snprintf(c->name, sizeof c->name, "ts_%s%s", unit_names[u], utc ? "_utc" : "");
      c->wide = true;
      for (int i = 0; i < N_EXTREMES; i++)
        timestamp_text(c->expected[i], 96, extremes64[i], u, utc);
    }
    temporal_column *d = &cols[n++];
    snprintf(d->format, sizeof d->format, "tD%c", unit_codes[u]);
    snprintf(d->name, sizeof d->name, "dur_%s", unit_names[u]);
    d->wide = true;
    for (int i = 0; i < N_EXTREMES; i++) duration_text(d->expected[i], 96, extremes64[i], u);
    temporal_column *t = &cols[n++];
    snprintf(t->format, sizeof t->format, "tt%c", unit_codes[u]);
    snprintf(t->name, sizeof t->name, "time_%s", unit_names[u]);
    t->wide = u >= 2;
    for (int i = 0; i < N_EXTREMES; i++)
      time_text(t->expected[i], 96, t->wide ? extremes64[i] : extremes32[i], u);
  }
  temporal_column *d32 = &cols[n++], *d64 = &cols[n++];
  snprintf(d32->format, sizeof d32->format, "tdD");
  snprintf(d32->name, sizeof d32->name, "date32");
  snprintf(d64->format, sizeof d64->format, "tdm");
  snprintf(d64->name, sizeof d64->name, "date64");
  d64->wide = true;
  for (int i = 0; i < N_EXTREMES; i++) {
    put_date_text(d32->expected[i], 96, extremes32[i]);
    date64_text(d64->expected[i], 96, extremes64[i]);
  }
  return n;
}

static void test_temporal_extremes(void) {
  enum { MAX_COLUMNS = 18 };
  temporal_column cols[MAX_COLUMNS];
  memset(cols, 0, sizeof cols);
  int n = temporal_columns(cols);
  for (int c = 0; c < n; c++) {
    char path[] = "/tmp/test_values_time_XXXXXX", args[256];
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    const char *format = cols[c].format, *name = cols[c].name;
    const void *data = cols[c].wide ? (const void *)extremes64 : (const void *)extremes32;
    if (fd < 0 || !write_columns(path, 1, &format, &name, NULL, &data, N_EXTREMES)) continue;
    snprintf(args, sizeof args, "cat '%s' --format csv", path);
    tu_bytes out = cli_output(args);
    size_t count;
    char **lines = out.data ? split_lines(&out, true, &count) : NULL;
    TU_CHECK(lines && count == N_EXTREMES, "%s: %zu lines", name, lines ? count : 0);
    for (size_t i = 0; lines && i < count && i < N_EXTREMES; i++)
      TU_CHECK(strcmp(lines[i], cols[c].expected[i]) == 0, "%s at %lld: printed %s, expected %s",
               name, cols[c].wide ? (long long)extremes64[i] : (long long)extremes32[i], lines[i],
               cols[c].expected[i]);
    free(lines);
    free(out.data);
    unlink(path);
  }
}

/* ---- integers ------------------------------------------------------------------------------ */

/* Every power of ten and its neighbours, and the ends of the range, signed
 * and unsigned, against printf. */
static void test_integers(void) {
  enum { N = 64 };
  int64_t signed_values[N];
  uint64_t unsigned_values[N];
  int n = 0;
  uint64_t p = 1;
  for (int e = 0; e < 20; e++, p *= 10) {
    unsigned_values[n] = p - 1, unsigned_values[n + 1] = p, unsigned_values[n + 2] = p + 1;
    n += 3;
  }
  unsigned_values[n++] = UINT64_MAX;
  unsigned_values[n++] = 0;
  for (int i = 0; i < n; i++)
    signed_values[i] = (int64_t)unsigned_values[i]; /* wraps: negatives too */
  signed_values[n - 2] = INT64_MIN;
  signed_values[n - 1] = INT64_MAX;
  const char *formats[2] = {"l", "L"}, *names[2] = {"l", "L"};
  const void *data[2] = {signed_values, unsigned_values};
  char path[] = "/tmp/test_values_int_XXXXXX", args[256];
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  if (fd < 0 || !write_columns(path, 2, formats, names, NULL, data, n)) return;
  snprintf(args, sizeof args, "cat '%s' --format csv", path);
  tu_bytes out = cli_output(args);
  size_t count;
  char **lines = out.data ? split_lines(&out, true, &count) : NULL;
  TU_CHECK(lines && count == (size_t)n, "integers: %zu lines for %d rows", lines ? count : 0, n);
  for (int i = 0; lines && i < n && i < (int)count; i++) {
    char want[64];
    snprintf(want, sizeof want, "%" PRId64 ",%" PRIu64, signed_values[i], unsigned_values[i]);
    TU_CHECK(strcmp(lines[i], want) == 0, "integers: printed %s, expected %s", lines[i], want);
  }
  free(lines);
  free(out.data);
  unlink(path);
}

/* ---- fixed_size_binary[0] ---------------------------------------------------------------- */

static void test_zero_width_binary(void) {
  static const uint8_t validity[1] = {0x5}; /* rows 0 and 2 valid */
  static const int32_t ints[3] = {1, 2, 3};
  static const uint8_t no_bytes[1] = {0};
  char path[] = "/tmp/test_values_w0_XXXXXX", args[256];
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  const char *formats[2] = {"w:0", "i"}, *names[2] = {"w0", "i"};
  const void *valid[2] = {validity, NULL}, *data[2] = {no_bytes, ints};
  if (fd < 0 || !write_columns(path, 2, formats, names, valid, data, 3)) return;
  static const char *const wants[3][2] = {
      {"fixed_size_binary[0]", NULL},
      {"w0,i\n\"\",1\n,2\n\"\",3\n", "csv"},
      {"{\"w0\":\"\",\"i\":1}\n{\"w0\":null,\"i\":2}\n{\"w0\":\"\",\"i\":3}\n", "json"},
  };
  for (int k = 0; k < 3; k++) {
    if (k == 0)
      snprintf(args, sizeof args, "inspect '%s'", path);
    else
      snprintf(args, sizeof args, "cat '%s' --format %s", path, wants[k][1]);
    tu_bytes out = cli_output(args);
    bool ok = out.data && (k == 0 ? strstr((char *)out.data, wants[k][0]) != NULL
                                  : strcmp((char *)out.data, wants[k][0]) == 0);
    TU_CHECK(ok, "`xchg %s` printed:\n%s", args, out.data ? (char *)out.data : "");
    free(out.data);
  }
  snprintf(args, sizeof args, "cat '%s' --format arrow-json", path);
  tu_bytes out = cli_output(args);
  TU_CHECK(out.data && strstr((char *)out.data, "\"byteWidth\":0") != NULL,
           "arrow-json of w:0: %.300s", out.data ? (char *)out.data : "");
  free(out.data);
  unlink(path);
}

/* cat formats the rows of a large batch on every core, piece by piece:
 * the output must be byte for byte that of one thread, in every format and
 * with --limit cutting a batch. */
static void test_rows_on_threads(void) {
  char dir[] = "/tmp/xchg-values-XXXXXX";
  if (!mkdtemp(dir)) {
    TU_CHECK(0, "mkdtemp: %s", strerror(errno));
    return;
  }
  TU_CHECK(tu_run("'%s' gen cache '%s/c.arrows' --rows 25000 --compression lz4 >/dev/null", cli,
                  dir) == 0,
           "xchg gen cache");
  static const char *const args[] = {"--format csv", "--format json", "--format json --limit 12345",
                                     "--format csv --columns c3,c0"};
  for (int a = 0; a < 4; a++) {
    int rc = tu_run(
        "XCHG_THREADS=1 '%s' cat '%s/c.arrows' %s > '%s/one' && "
        "XCHG_THREADS=4 '%s' cat '%s/c.arrows' %s > '%s/four' && "
        "test -s '%s/one' && cmp -s '%s/one' '%s/four'",
        cli, dir, args[a], dir, cli, dir, args[a], dir, dir, dir, dir);
    TU_CHECK(rc == 0, "cat %s on 4 threads differs from 1 thread (or failed)", args[a]);
  }
  tu_run("rm -rf '%s'", dir);
}

/* Every float text, against the trial loop here and then node's. */
static void floats(void) {
  char cases_path[] = "/tmp/test_values_cases_XXXXXX";
  int fd = mkstemp(cases_path);
  node_cases = fd >= 0 ? fdopen(fd, "w") : NULL;
  TU_CHECK(node_cases != NULL, "cannot create %s", cases_path);
  test_float_texts();
  test_float_notation();
  test_all_halves();
  test_random_floats(32, 100000);
  test_random_floats(64, 100000);
  if (node_cases && fclose(node_cases) == 0) test_floats_against_node(cases_path);
  node_cases = NULL;
  unlink(cases_path);
}

int main(int argc, char **argv) {
  cli = tu_cli_path();
  static const tu_case cases[] = {
      {"floats", floats},
      {"temporal_extremes", test_temporal_extremes},
      {"integers", test_integers},
      {"zero_width_binary", test_zero_width_binary},
      {"rows_on_threads", test_rows_on_threads},
  };
  return TU_MAIN(argc, argv, "values", cases);
}
