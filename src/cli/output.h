/* output.h — the file a command writes (`xchg convert`, `xchg gen`), made so
 * that a failure never destroys anything the command did not create.
 *
 *  - An existing regular file OUT (or one a symbolic link points to) is
 *    the user's, not the command's: it is refused unless forced
 *    (-f/--force), as zstd and gzip refuse it.
 *  - A regular file OUT, new or forced, is written to a temporary file
 *    beside it (".OUT.xchg-XXXXXX", created with O_EXCL) and renamed over
 *    OUT only once everything is written and fsync'ed: on any failure, and
 *    on SIGINT, SIGTERM, SIGHUP or SIGPIPE (not ignored: a standard output
 *    whose reader is gone), the temporary file is removed and the
 *    old OUT is left as it was.  A new file gets the mode any new file gets
 *    (0666 less the umask); an existing one keeps its permission bits (not
 *    its owner, and other hard links to it keep the old contents, as with
 *    every tool that replaces a file by renaming).  The directory must be
 *    writable, even when OUT itself is.  Unforced, the temporary file
 *    takes OUT's name only if nothing has it by then (a hard link, which
 *    fails atomically where the name exists): a file another process made
 *    under that name while this one wrote (two commands writing the same
 *    OUT) is left as it is, and the command fails.
 *  - OUT that is a symbolic link to a regular file: the file it points to
 *    is replaced (the link stays a link); a link to nothing is refused,
 *    rather than creating a file wherever it points.
 *  - '-' (standard output), pipes, devices and other files that are not
 *    regular are written directly and never removed.
 *  - OUT that is the input (the same device and inode, links followed;
 *    standard output redirected to it included) is refused before anything
 *    is opened for writing.
 *  - OUT that is a terminal (standard output or a path) is refused unless
 *    forced, as zstd and gzip refuse: the data is binary.
 * Every write, fsync, close and rename is checked; the first failure's
 * errno is kept, so that the command can say "write to 'OUT' failed: No
 * space left on device" and stop. */
#ifndef XCHG_CLI_OUTPUT_H
#define XCHG_CLI_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/render/strbuf.h"
#include "xchg/xchg.h"

typedef struct xc_output {
  const char *path; /* as given: "-" for standard output */
  int fd;           /* -1 when closed */
  char *target;     /* a regular file: the path the temporary file is renamed to */
  char *temp;       /* the temporary file, while it exists */
  int write_errno;  /* the errno of the first failed write, fsync, close or rename; 0 if none */
  bool replace;     /* forced: the temporary file may replace a file of OUT's name */
} xc_output;

/* Opens path for writing ("-": standard output).  input is the file being
 * read (NULL or "-" when there is none to protect): OUT may not be it.
 * force (-f/--force): an existing regular OUT is replaced, a terminal
 * written. */
xchg_status xc_output_open(xc_output *o, const char *path, const char *input, bool force,
                           xchg_error *err);

/* The same check for a command that writes to standard output itself
 * (cat, inspect): -1 when standard output is not the input file, else
 * (`xchg cat IN >> IN` would read what it appends) prints the error and
 * returns XC_EXIT_ERROR. */
int xc_refuse_stdout_input(const char *input);

/* Ends a report held in memory until its input was read through (inspect),
 * so that a failure prints nothing but the error: prints out on standard
 * output when st is XCHG_OK and out lacks nothing (out of memory is an
 * error in err), else the error about path; frees out and returns the
 * exit code. */
int xc_print_report(xs *out, xchg_status st, const char *path, xchg_error *err);

/* An xchg_write_fn (ctx: the xc_output): writes all n bytes or fails. */
xchg_status xc_output_write(void *ctx, const void *data, size_t n, xchg_error *err);

/* Finishes a successful output: syncs and closes it and renames the
 * temporary file into place. */
xchg_status xc_output_commit(xc_output *o, xchg_error *err);

/* Closes the output and removes its temporary file, if it still has one:
 * call it after xc_output_commit too, and after a failed xc_output_open. */
void xc_output_discard(xc_output *o);

/* Removes the temporary file of the output being written, if any: for a
 * signal handler (async-signal-safe), before the command dies. */
void xc_remove_temp_output(void);

/* Prints "xchg: write to standard output failed: <strerror(errnum)>" (or
 * "write to 'PATH' ...") and returns XC_EXIT_ERROR; but for EPIPE, unless
 * SIGPIPE is ignored, the process dies of SIGPIPE, silently, as it would
 * had the write been the main thread's.  Call it once the output is
 * put away. */
int xc_write_error(const char *path, int errnum);

/* Reports a failure about o: the failed write when there was one, else
 * "xchg: <OUT or standard output>: <message>"; returns XC_EXIT_ERROR. */
int xc_output_error(const xc_output *o, const char *message);

#endif
