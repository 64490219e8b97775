/* arrow_json.h — writing Arrow's integration-test JSON format.
 *
 * The format of the generated_*.json files that Arrow implementations use
 * to check each other (apache/arrow docs/source/format/Integration.rst):
 * {"schema": {fields, metadata}, "batches": [{count, columns}],
 *  "dictionaries": [{id, data}]}.  64-bit integers, 64-bit offsets and
 * decimals are JSON strings, binary is uppercase hex.  Batches stream out
 * as they come; each dictionary is written once, at the end, as last seen
 * (a delta-extended dictionary is a superset of the earlier ones).  The
 * format has no way to say that a stream replaced a dictionary: that is an
 * XCHG_ENOTSUP error rather than earlier batches shown with the wrong
 * values. */
#ifndef XCHG_CLI_RENDER_ARROW_JSON_H
#define XCHG_CLI_RENDER_ARROW_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/render/node.h"
#include "cli/render/strbuf.h"

typedef struct xc_arrow_json {
  xs *out;
  int64_t *ids;     /* the distinct dictionary ids of the schema */
  xs *dictionaries; /* rendered {"id", "data"} for ids[k] */
  bool *seen;       /* whether dictionaries[k] holds one */
  int64_t n_dictionaries;
  int64_t n_batches;
  xs scratch;     /* a dictionary being rendered */
  bool *replaced; /* whether a message replaced dictionaries[k] since the last batch */
} xc_arrow_json;

/* Writes the schema of the fields (a schema-only tree) and opens the batch
 * list.  dict_ids are the ids of the trees' dictionary-encoded fields (an
 * id shared by several fields may repeat): one dictionary each. */
xchg_status xc_arrow_json_begin(xc_arrow_json *w, xs *out, const struct ArrowSchema *root,
                                const xc_node *const *fields, int n_fields, const int64_t *dict_ids,
                                int64_t n_dict_ids, xchg_error *err);

/* Writes rows start..start+count of one batch: the columns are top-level
 * nodes of the batch's tree, numbered like the schema-only tree, and start
 * is the batch struct's offset plus the first row wanted. */
xchg_status xc_arrow_json_batch(xc_arrow_json *w, const xc_node *const *columns, int n_columns,
                                int64_t start, int64_t count, xchg_error *err);

/* Tells the writer that the input replaced (not extended) the dictionary
 * of id it had sent before: the next batch must not show that dictionary
 * changed (others may change by deltas). */
void xc_arrow_json_note_replacement(xc_arrow_json *w, int64_t id);

/* Closes the batch list and writes the dictionaries. */
void xc_arrow_json_end(xc_arrow_json *w);
void xc_arrow_json_free(xc_arrow_json *w);

#endif
