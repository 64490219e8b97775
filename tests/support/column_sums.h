/* tests/support/column_sums.h — the sums that stand for a generated data
 * set (src/gen/shapes.h defines them, `xchg gen --sums` prints them): per
 * column the values added up and the nulls counted, the row count, and for
 * the rows shape the sum of the payload bytes.  A test reads them from that
 * JSON (or from another implementation's, which prints the same:
 * tests/interop/polars/check.mjs), computes them itself from the batches an
 * IPC reader hands out, and compares the two. */
#ifndef XCHG_TESTS_COLUMN_SUMS_H
#define XCHG_TESTS_COLUMN_SUMS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "xchg/xchg.h"

#define TU_SUMS_MAX_COLUMNS 8

typedef struct tu_column_sums {
  char name[32];
  uint64_t sum;
  int64_t nulls;
} tu_column_sums;

typedef struct tu_sums {
  int64_t rows;
  int n;
  tu_column_sums cols[TU_SUMS_MAX_COLUMNS];
  uint64_t payload; /* "payload_byte_sum" (the rows shape), 0 when absent */
} tu_sums;

/* Adds the values of column a (schema s) to *sum as src/gen/shapes.h and
 * `xchg gen --sums` define them: int64/int32 values and float64 bit
 * patterns added modulo 2^64, string bytes added up (utf8, large utf8,
 * utf8 view), true booleans counted; nulls counted in *nulls.  Returns -1
 * for a type it does not know. */
int tu_column_sum(const struct ArrowSchema *s, const struct ArrowArray *a, uint64_t *sum,
                  int64_t *nulls);

/* The sums in doc: {"rows": N, "columns": {"<name>": {"sum": "<decimal>",
 * "nulls": N}, ...}, "payload_byte_sum": "<decimal>"}.  0; or -1 when a
 * column has no sum or there are more than TU_SUMS_MAX_COLUMNS. */
int tu_sums_from_json(json_t *doc, tu_sums *out);

/* tu_sums_from_json of the JSON file at path; -1 also when it cannot be
 * read or parsed. */
int tu_sums_load(const char *path, tu_sums *out);

/* Called with each batch tu_sums_of_reader reads, for a test's own checks
 * of it: 0, or -1 with msg (msgsz bytes) filled to stop. */
typedef int (*tu_sums_batch_fn)(void *ctx, const struct ArrowArray *batch, char *msg, size_t msgsz);

/* The sums of everything r reads from here on, every column of every
 * batch; on_batch (NULL: none) sees each batch too.  r stays the caller's.
 * 0; or -1 with msg filled (read errors, an unknown column type, more than
 * TU_SUMS_MAX_COLUMNS columns). */
int tu_sums_of_reader(xchg_ipc_reader *r, tu_sums *out, tu_sums_batch_fn on_batch, void *ctx,
                      char *msg, size_t msgsz);

/* 0 when got has want's rows and columns, each with want's name, sum and
 * nulls; -1 with the first difference in msg.  An empty want (no columns)
 * is a difference: it would prove nothing. */
int tu_sums_compare(const tu_sums *want, const tu_sums *got, char *msg, size_t msgsz);

#endif
