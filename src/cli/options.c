/* options.c — see options.h. */
#include "cli/options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/render/strbuf.h"

int xc_usage_error(const char *command, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "xchg %s: ", command);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry 'xchg %s --help'.\n", command);
  return XC_EXIT_USAGE;
}

/* Digits alone, after a '-' only where min is below 0: strtoll would also
 * take leading blanks and a '+', and "-0" for a count, which XCHG_THREADS
 * refuses (xchg_pool_parse_env) and so does every option. */
static bool parse_integer(const char *text, int64_t min, int64_t max, char **end, int64_t *out) {
  const char *digits = text + (min < 0 && *text == '-');
  *end = (char *)text;
  if (!isdigit((unsigned char)*digits)) return false;
  errno = 0;
  long long v = strtoll(text, end, 10);
  if (*end == text || errno != 0 || v < min || v > max) return false;
  *out = v;
  return true;
}

bool xc_int_option(const char *command, const char *option, const char *text, int64_t min,
                   int64_t max, int64_t *out) {
  char *end;
  if (parse_integer(text, min, max, &end, out) && *end == '\0') return true;
  xc_usage_error(command, "%s must be an integer from %lld to %lld, not '%s'", option,
                 (long long)min, (long long)max, text);
  return false;
}

int xc_list_option(const char *command, const char *option, const char *text, int min, int max,
                   int *out, int capacity) {
  int n = 0;
  const char *s = text;
  for (;;) {
    char *end;
    int64_t v;
    if (n == capacity || !parse_integer(s, min, max, &end, &v) || (*end != ',' && *end != '\0'))
      break;
    for (int k = 0; k < n; k++)
      if (out[k] == v) { /* the same configuration run twice, as two */
        xc_usage_error(command, "%s lists %lld twice, in '%s'", option, (long long)v, text);
        return -1;
      }
    out[n++] = (int)v;
    if (*end == '\0') return n;
    s = end + 1;
  }
  xc_usage_error(command, "%s takes up to %d comma-separated integers from %d to %d, not '%s'",
                 option, capacity, min, max, text);
  return -1;
}

/* The long options that "--NAME" (up to a '=') is a prefix of: written to
 * out as "--a or --b", and how many there are. */
static int options_named(const struct option *longs, const char *arg, xs *out) {
  size_t len = strcspn(arg + 2, "=");
  int n = 0;
  for (const struct option *o = longs; o->name != NULL; o++)
    if (strncmp(o->name, arg + 2, len) == 0)
      xs_printf(out, "%s--%s", n++ > 0 ? " or " : "", o->name);
  return n;
}

int xc_option_error(const char *command, char **argv, const struct option *longs, int opt) {
  const char *arg = argv[optind - 1];
  if (opt == ':') return xc_usage_error(command, "option '%s' needs a value", arg);
  if (strncmp(arg, "--", 2) == 0) {
    xs names;
    xs_init(&names, NULL);
    int n = options_named(longs, arg, &names);
    int rc = n > 1    ? xc_usage_error(command, "option '%s' is ambiguous: %s", arg,
                                    names.failed ? "more than one" : xs_cstr(&names))
                : n == 1 ? xc_usage_error(command, "option '%s' takes no value", arg)
                      : xc_usage_error(command, "unknown option '%s'", arg);
    xs_free(&names);
    return rc;
  }
  return xc_usage_error(command, "unknown option '-%c'", optopt);
}

int xc_one_input(const char *command, int argc, char **argv, const char **path) {
  if (optind == argc) return xc_usage_error(command, "missing FILE (or '-' for standard input)");
  if (optind + 1 < argc)
    return xc_usage_error(command, "one input at a time ('%s' and '%s')", argv[optind],
                          argv[optind + 1]);
  *path = argv[optind];
  return -1;
}

int xc_two_operands(const char *command, const char *what, int argc, char **argv,
                    const char **first, const char **second) {
  if (argc - optind < 2) return xc_usage_error(command, "needs %s", what);
  if (argc - optind > 2)
    return xc_usage_error(command, "too many arguments: %s only, not '%s' too", what,
                          argv[optind + 2]);
  *first = argv[optind];
  *second = argv[optind + 1];
  return -1;
}

/* The operands xc_getopt has met so far, moved to argv[1..] in order. */
static int operands_met;

/* optind 0, not 1: glibc's getopt then forgets the argument vector it
 * scanned last (its permutation), as a new command line needs. */
void xc_options_begin(void) {
  optind = 0;
  opterr = 0;
  operands_met = 0;
}

/* glibc permutes (options after operands) unless POSIXLY_CORRECT is set,
 * when it stops at the first operand: with "-" before optstring it hands
 * each operand back in place (as 1) whatever the environment, and the
 * operands are permuted here instead, as glibc would: gathered at the
 * front of argv as they come (over slots already read), then put just
 * before optind, ahead of what follows "--". */
int xc_getopt(int argc, char **argv, const char *optstring, const struct option *longs) {
  char in_order[64];
  snprintf(in_order, sizeof in_order, "-%s", optstring);
  int opt;
  while ((opt = getopt_long(argc, argv, in_order, longs, NULL)) == 1)
    argv[1 + operands_met++] = optarg;
  if (opt == -1 && operands_met > 0) {
    memmove(argv + optind - operands_met, argv + 1, (size_t)operands_met * sizeof *argv);
    optind -= operands_met;
    operands_met = 0; /* once: a second call finds them in place */
  }
  return opt;
}
