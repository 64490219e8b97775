/* options.h — a benchmark's command line: numbers checked against the
 * range they may take, and usage errors as one line that names the option
 * and that range, then a hint to --help (never the whole help). */
#ifndef XCHG_BENCH_OPTIONS_H
#define XCHG_BENCH_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

/* The ranges the benchmarks accept (what fits their tables and memory). */
#define BENCH_MAX_ROWS 1000000000
#define BENCH_MAX_RUNS 1000
#define BENCH_MAX_THREADS 256
#define BENCH_MAX_TASKS 100000

/* Prints "xchg bench NAME: <message>" and "Try 'xchg bench NAME --help'."
 * on standard error; returns 2, the exit code of a usage error. */
int bench_usage_error(const char *bench, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* text as an integer in [min, max] into *out; false after printing the
 * usage error ("--rows must be an integer from 1 to 1000000000, not '0'"). */
bool bench_int_option(const char *bench, const char *option, const char *text, int64_t min,
                      int64_t max, int64_t *out);

/* text as a comma-separated list of integers in [min, max], at most
 * capacity of them, into out: how many, or -1 after printing the error
 * ("--tasks takes up to 8 comma-separated integers from 1 to 100000, not
 * '0'"). */
int bench_list_option(const char *bench, const char *option, const char *text, int min, int max,
                      int *out, int capacity);

/* The usage error for what getopt_long (optstring ":", opterr 0) returned
 * as '?' (an unknown option) or ':' (a value missing): returns 2. */
int bench_option_error(const char *bench, char **argv, int opt);

/* Starts getopt_long over a benchmark's arguments (argv[0] its name),
 * errors left to bench_option_error. */
void bench_options_begin(void);

#endif
