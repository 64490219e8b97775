/* command.h — the commands of the `xchg` tool and its dispatcher.
 *
 * The CLI's own commands (src/cli/cmd_*.c) are in its table; a program
 * links more in by passing them to xc_main (src/app/main.c adds
 * `xchg bench`, bench/), so that nothing in src/cli depends on them. */
#ifndef XCHG_CLI_COMMAND_H
#define XCHG_CLI_COMMAND_H

#include <stddef.h>

typedef struct xc_command {
  const char *name;
  const char *summary; /* its line in `xchg --help` */
  /* argv[0] is the command name; returns the process exit code. */
  int (*run)(int argc, char **argv);
} xc_command;

/* `xchg <command> [args]`: runs the command argv[1] names, one of the
 * CLI's own or one of the n_extra in extra (listed after them by
 * `xchg --help`), and returns the process exit code. */
int xc_main(int argc, char **argv, const xc_command *extra, size_t n_extra);

#endif
