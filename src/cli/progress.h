/* progress.h — a progress line on standard error for long work (convert,
 * cat, gen of large inputs), drawn only when standard error is a terminal,
 * so that scripts and logs never see it.
 *
 * The line is redrawn in place ("\r"), at most once per percent (or per
 * 64 MiB of an input of unknown size) and never more often than ten times
 * a second, and erased when the work ends, so that what the command prints
 * afterwards starts on a clean line. */
#ifndef XCHG_CLI_PROGRESS_H
#define XCHG_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "xchg/shuffle.h"

typedef struct xc_progress {
  bool on;    /* standard error is a terminal */
  bool drawn; /* a line is on the screen */
  const char *label;
  const char *unit; /* "bytes" (shown as sizes) or a count's name */
  int64_t total;    /* -1: unknown */
  int64_t last_step;
  int64_t last_ns;
} xc_progress;

/* unit "bytes" shows sizes ("12.5 MiB of 40.0 MiB"), any other a count
 * ("3 of 500 batches"); total -1 when unknown.  to_stdout: the command
 * writes its output to standard output, and when that is the terminal too
 * the output is the progress (a line drawn there would garble it). */
void xc_progress_init(xc_progress *p, const char *label, const char *unit, int64_t total,
                      bool to_stdout);

/* Work done so far: redraws the line when it has moved on enough. */
void xc_progress_update(xc_progress *p, int64_t done);

/* The wire bytes a shuffle reader has read so far (cat and convert of
 * Comet blocks): its input's bytes, as a file's size counts them. */
void xc_progress_blocks(xc_progress *p, const xchg_shuffle_reader *reader);

/* Erases the line. */
void xc_progress_end(xc_progress *p);

/* Erases whichever line is on the screen: errors call it before they print
 * (xc_runtime_error), so that no message lands inside a progress line. */
void xc_progress_erase(void);

#endif
