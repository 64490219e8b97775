/* cli.h — pieces shared by the commands of the `xchg` tool.
 *
 * Exit codes: 0 success, 1 a runtime error (bad input, I/O), 2 a usage
 * error.  Runtime errors print as "xchg: <file>: <message>". */
#ifndef XCHG_CLI_CLI_H
#define XCHG_CLI_CLI_H

#include "xchg/xchg.h"

enum { XC_EXIT_OK = 0, XC_EXIT_ERROR = 1, XC_EXIT_USAGE = 2 };

/* Commands: argv[0] is the command name. */
int xc_cmd_inspect(int argc, char **argv);
int xc_cmd_cat(int argc, char **argv);

/* Opens FILE (memory-mapped) or "-" (standard input, read as a stream). */
xchg_status xc_open_input(const char *path, xchg_ipc_reader **out, xchg_error *err);

/* How errors name an input: the path, or "<stdin>" for "-". */
const char *xc_input_label(const char *path);

/* Prints "xchg: <file>: <message>" and returns XC_EXIT_ERROR. */
int xc_runtime_error(const char *path, const char *message);

/* Prints "xchg <command>: <message>" and a hint, returns XC_EXIT_USAGE. */
int xc_usage_error(const char *command, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* True when arg is "-h" or "--help". */
int xc_is_help(const char *arg);

#endif
