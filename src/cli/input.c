/* input.c — opening inputs and reporting errors the same way everywhere. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

const char *xc_input_label(const char *path) { return strcmp(path, "-") == 0 ? "<stdin>" : path; }

xchg_status xc_open_input(const char *path, xchg_ipc_reader **out, xchg_error *err) {
  if (strcmp(path, "-") != 0) return xchg_ipc_reader_open_file(path, NULL, out, err);
  xchg_source *src = xchg_source_from_fd(STDIN_FILENO, 0);
  if (src == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  return xchg_ipc_reader_open(src, NULL, out, err); /* takes src, even on failure */
}

int xc_runtime_error(const char *path, const char *message) {
  fflush(stdout); /* keep what was printed before the error ahead of it */
  fprintf(stderr, "xchg: %s: %s\n", xc_input_label(path), message);
  return XC_EXIT_ERROR;
}

int xc_usage_error(const char *command, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "xchg %s: ", command);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry 'xchg %s --help'.\n", command);
  return XC_EXIT_USAGE;
}

int xc_is_help(const char *arg) { return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0; }
