/* rows.h — row-at-a-time output: CSV (RFC 4180) and JSON Lines.
 *
 * A row is a set of top-level columns (xc_nodes) and an index.  Values are
 * rendered by values.h; dictionary-encoded values print as the dictionary
 * value, unions as the selected child's value, run-end encoded arrays as
 * the run's value.  Nested values are JSON: lists and list views as arrays,
 * structs as objects, maps as arrays of {"key": k, "value": v}.  In CSV, a
 * null is an empty field and an empty string is "". */
#ifndef XCHG_CLI_RENDER_ROWS_H
#define XCHG_CLI_RENDER_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/render/node.h"
#include "cli/render/strbuf.h"
#include "xchg/pool.h"

typedef enum xc_row_format { XC_ROWS_CSV, XC_ROWS_JSON } xc_row_format;

void xc_rows_header(xs *out, xc_row_format format, const xc_node *const *columns, int n_columns);

/* What writing rows keeps from one call to the next: a work string and,
 * with a pool, a string per piece of a batch (see xc_rows_write). */
typedef struct xc_rows_piece xc_rows_piece;
typedef struct xc_rows_writer {
  xs scratch;
  xchg_pool *pool; /* NULL: every row on the calling thread */
  xc_rows_piece *pieces;
  int n_pieces;
} xc_rows_writer;

void xc_rows_writer_init(xc_rows_writer *w, xchg_pool *pool);
void xc_rows_writer_free(xc_rows_writer *w);

/* Writes rows first .. first + count - 1 (flushing out as it grows).  On a
 * pool, the rows of a large call are cut into pieces that the pool's
 * threads format at the same time, each into a string of its own, and the
 * pieces go into out in order: the output is the same byte for byte.
 * Stops after a row with a value that refers outside its array (a union
 * type id or dictionary index the reader should have rejected) and returns
 * its number from first; -1 when all were fine.  Out of memory shows as
 * xs_failed(out). */
int64_t xc_rows_write(xc_rows_writer *w, xs *out, xc_row_format format,
                      const xc_node *const *columns, int n_columns, int64_t first, int64_t count);

#endif
