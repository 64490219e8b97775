/* rows.h — row-at-a-time output: CSV (RFC 4180) and JSON Lines.
 *
 * A row is a set of top-level columns (xc_nodes) and an index.  Values are
 * rendered by values.h; dictionary-encoded values print as the dictionary
 * value, unions as the selected child's value, run-end encoded arrays as
 * the run's value.  Nested values are JSON: lists and list views as arrays,
 * structs as objects, maps as arrays of {"key": k, "value": v}.  In CSV, a
 * null is an empty field and an empty string is "". */
#ifndef XCHG_CLI_ROWS_H
#define XCHG_CLI_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/node.h"
#include "cli/strbuf.h"

typedef enum xc_row_format { XC_ROWS_CSV, XC_ROWS_JSON } xc_row_format;

void xc_rows_header(xs *out, xc_row_format format, const xc_node *const *columns, int n_columns);

/* Writes rows first .. first + count - 1 (flushing out as it grows);
 * scratch is a work string the caller keeps.  Stops after a row with a
 * value that refers outside its array (a union type id or dictionary index
 * the reader should have rejected) and returns its number from first; -1
 * when all were fine. */
int64_t xc_rows_write(xs *out, xs *scratch, xc_row_format format, const xc_node *const *columns, int n_columns,
                      int64_t first, int64_t count);

#endif
