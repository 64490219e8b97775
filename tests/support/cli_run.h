/* tests/support/cli_run.h — running the `xchg` command ($XCHG_CLI) as a
 * user does, through the shell, and keeping what it printed. */
#ifndef XCHG_TESTS_CLI_RUN_H
#define XCHG_TESTS_CLI_RUN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct tu_cli_result {
  char *out; /* stdout, NUL-terminated */
  size_t out_len;
  char *err;     /* stderr, NUL-terminated */
  int exit_code; /* -1 when killed by a signal */
} tu_cli_result;

/* Runs `'cli' args` through the shell (args are already quoted and may
 * redirect standard input); false when it could not be run or its output
 * read. */
bool tu_cli_run(const char *cli, const char *args, tu_cli_result *r);

/* The same with the file input fed through a pipe (`cat 'input' | 'cli'
 * args`): standard input that cannot seek nor be mapped. */
bool tu_cli_run_piped(const char *cli, const char *input, const char *args, tu_cli_result *r);

/* The same with args formatted as printf does, through a pipe fed from
 * `input` when it is not NULL; a run that cannot be made is a failed check
 * (TU_CHECK) and gives empty output and exit_code -2.  Free the result
 * with tu_cli_result_free. */
tu_cli_result tu_cli_runf(const char *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
tu_cli_result tu_cli_piped_runf(const char *cli, const char *input, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void tu_cli_result_free(tu_cli_result *r);

#endif
