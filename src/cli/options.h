/* options.h — one way to read a command line, for every command of the CLI
 * and every benchmark: getopt_long, so that each takes "--name value",
 * "--name=value", an unambiguous prefix of a long name, options before
 * and after its operands, and "--" to end the options (an input named
 * "-x.arrow"); numbers checked against the range they may take; usage
 * errors as one line naming the option and that range, then a hint to
 * --help, never the whole help. */
#ifndef XCHG_CLI_OPTIONS_H
#define XCHG_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

/* Prints "xchg <command>: <message>" and "Try 'xchg <command> --help'."
 * on standard error; returns 2 (XC_EXIT_USAGE), the exit code of a usage
 * error. */
int xc_usage_error(const char *command, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Starts getopt_long over a command's arguments (argv[0] its name), with
 * getopt's own messages off: errors are left to xc_option_error.  Every
 * command calls it first, since one process may parse several command lines
 * (the tests, fuzz_cli). */
void xc_options_begin(void);

/* getopt_long(argc, argv, optstring, longs, NULL) for a command line that
 * xc_options_begin started, permuting as documented (options before and
 * after the operands) even under POSIXLY_CORRECT, where glibc's would stop
 * at the first operand: at its end (-1), argv[optind..argc) are the
 * operands, in order, then what follows "--". */
int xc_getopt(int argc, char **argv, const char *optstring, const struct option *longs);

/* The usage error for what getopt_long (optstring beginning with ':',
 * long options longs) returned as '?' (an unknown option, a prefix of
 * several, or a value given to a flag) or ':' (a value missing), for `xchg
 * COMMAND` ("cat", "bench decode"): returns 2. */
int xc_option_error(const char *command, char **argv, const struct option *longs, int opt);

/* The one input operand that follows the options (FILE or '-'): -1 with
 * *path set, or the usage error's exit code when there is none or more. */
int xc_one_input(const char *command, int argc, char **argv, const char **path);

/* The two operands that follow the options, named by what ("IN and OUT"):
 * -1 with *first and *second set, or the usage error's exit code when there
 * are fewer or more. */
int xc_two_operands(const char *command, const char *what, int argc, char **argv,
                    const char **first, const char **second);

/* text as an integer in [min, max] into *out; false after printing the
 * usage error ("--rows must be an integer from 1 to 1000000000, not '0'"). */
bool xc_int_option(const char *command, const char *option, const char *text, int64_t min,
                   int64_t max, int64_t *out);

/* text as a comma-separated list of integers in [min, max], at most
 * capacity of them, into out: how many, or -1 after printing the error
 * ("--tasks takes up to 8 comma-separated integers from 1 to 100000, not
 * '0'"). */
int xc_list_option(const char *command, const char *option, const char *text, int min, int max,
                   int *out, int capacity);

#endif
