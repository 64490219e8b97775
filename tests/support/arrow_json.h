/* tests/support/arrow_json.h — Apache Arrow integration JSON, as an oracle.
 *
 * Arrow's integration tests describe every gold file twice: as Arrow IPC
 * (.stream, .arrow_file) and as a human-readable JSON document
 * (docs/source/format/Integration.rst in apache/arrow).  This module loads
 * that JSON (optionally gzip-compressed) and compares it, slot by slot and
 * buffer by buffer, with what a reader hands out through the C Data
 * Interface.  It is deliberately strict: any type, type parameter or JSON key
 * it does not understand is reported as a mismatch, never skipped, so a
 * passing comparison means everything in the JSON was checked.
 *
 * Every compare function returns 0 when the C structs equal the JSON and -1
 * otherwise, writing into msg a message that names the batch, the column
 * path ("struct_nullable.f1[7]"), the buffer and what was expected and found.
 * msg may be NULL; messages are truncated to msgsz, never overflowed. */
#ifndef XCHG_TESTS_ARROW_JSON_H
#define XCHG_TESTS_ARROW_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "xchg/arrow_c.h"

typedef struct arrow_json arrow_json;

/* Loads an integration JSON file (plain or gzip-compressed: zlib detects
 * which).  Returns 0, or -1 with a message when the file cannot be read or
 * is not a JSON object with "schema" and "batches". */
int arrow_json_load(const char *path, arrow_json **out, char *msg, size_t msgsz);

void arrow_json_free(arrow_json *doc);

/* When accept is non-zero, the schema comparison also accepts Arrow's
 * canonical names "entries", "key" and "value" for a map's children where
 * the JSON has other names.  Only for gold files known to have been written
 * that way (a writer that normalised the names); off by default. */
void arrow_json_accept_canonical_map_names(arrow_json *doc, int accept);

/* Number of record batches described by the JSON. */
int64_t arrow_json_num_batches(const arrow_json *doc);

/* Compares the schema: a "+s" ArrowSchema whose children are the fields
 * (names, nullability, format strings with every type parameter,
 * dictionary encoding and ordering, map key sorting, field and schema
 * metadata, nested children). */
int arrow_json_compare_schema(const arrow_json *doc, const struct ArrowSchema *schema, char *msg,
                              size_t msgsz);

/* Compares record batch i (from 0) with a "+s" ArrowArray whose children are
 * the columns; dictionary-encoded columns are compared with the JSON
 * "dictionaries" through ArrowArray.dictionary.  schema is the schema the
 * batch was read with; its field names must match the JSON columns. */
int arrow_json_compare_batch(const arrow_json *doc, int64_t i, const struct ArrowSchema *schema,
                             const struct ArrowArray *batch, char *msg, size_t msgsz);

#endif
