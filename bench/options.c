/* options.c — see options.h. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int bench_usage_error(const char *bench, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "xchg bench %s: ", bench);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry 'xchg bench %s --help'.\n", bench);
  return 2;
}

static bool parse_integer(const char *text, int64_t min, int64_t max, char **end, int64_t *out) {
  errno = 0;
  long long v = strtoll(text, end, 10);
  if (*end == text || errno != 0 || v < min || v > max) return false;
  *out = v;
  return true;
}

bool bench_int_option(const char *bench, const char *option, const char *text, int64_t min,
                      int64_t max, int64_t *out) {
  char *end;
  if (parse_integer(text, min, max, &end, out) && *end == '\0') return true;
  bench_usage_error(bench, "%s must be an integer from %lld to %lld, not '%s'", option,
                    (long long)min, (long long)max, text);
  return false;
}

int bench_list_option(const char *bench, const char *option, const char *text, int min, int max,
                      int *out, int capacity) {
  int n = 0;
  const char *s = text;
  for (;;) {
    char *end;
    int64_t v;
    if (n == capacity || !parse_integer(s, min, max, &end, &v) || (*end != ',' && *end != '\0'))
      break;
    out[n++] = (int)v;
    if (*end == '\0') return n;
    s = end + 1;
  }
  bench_usage_error(bench, "%s takes up to %d comma-separated integers from %d to %d, not '%s'",
                    option, capacity, min, max, text);
  return -1;
}

int bench_option_error(const char *bench, char **argv, int opt) {
  const char *arg = argv[optind - 1];
  if (opt == ':') return bench_usage_error(bench, "option '%s' needs a value", arg);
  return bench_usage_error(bench, "unknown option '%s'", arg);
}

void bench_options_begin(void) {
  optind = 1;
  opterr = 0;
}
