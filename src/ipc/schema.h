/* schema.h — Arrow schemas as the IPC reader needs them.
 *
 * An ipc_field is a field of Schema.fbs with everything the batch decoder
 * needs precomputed (its C Data Interface format string, the width of its
 * values, its dictionary encoding).  Schemas are parsed once per reader from
 * the schema message or the file footer, then exported to ArrowSchema as
 * often as asked. */
#ifndef XCHG_IPC_SCHEMA_H
#define XCHG_IPC_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/flatbuf.h"
#include "xchg/arrow_c.h"
#include "xchg/ipc.h"

/* The Type union of Schema.fbs, by its wire value. */
typedef enum ipc_type {
  IPC_NULL = 1,
  IPC_INT = 2,
  IPC_FLOAT = 3,
  IPC_BINARY = 4,
  IPC_UTF8 = 5,
  IPC_BOOL = 6,
  IPC_DECIMAL = 7,
  IPC_DATE = 8,
  IPC_TIME = 9,
  IPC_TIMESTAMP = 10,
  IPC_INTERVAL = 11,
  IPC_LIST = 12,
  IPC_STRUCT = 13,
  IPC_UNION = 14,
  IPC_FIXED_SIZE_BINARY = 15,
  IPC_FIXED_SIZE_LIST = 16,
  IPC_MAP = 17,
  IPC_DURATION = 18,
  IPC_LARGE_BINARY = 19,
  IPC_LARGE_UTF8 = 20,
  IPC_LARGE_LIST = 21,
  IPC_RUN_END_ENCODED = 22,
  IPC_BINARY_VIEW = 23,
  IPC_UTF8_VIEW = 24,
  IPC_LIST_VIEW = 25,
  IPC_LARGE_LIST_VIEW = 26
} ipc_type;

/* How a fixed-width value is byte-swapped when the data is big-endian. */
typedef enum ipc_swap {
  IPC_SWAP_NONE = 0, /* bytes, bits, or nothing to swap */
  IPC_SWAP_WHOLE,    /* the value is one integer of `width` bytes */
  IPC_SWAP_INT32S,   /* a sequence of int32 (interval day-time) */
  IPC_SWAP_MDN,      /* int32 months, int32 days, int64 nanoseconds */
  IPC_SWAP_VIEW      /* binary views: int32 length, then (when not inline)
                         int32 buffer index and int32 offset */
} ipc_swap;

typedef struct ipc_field {
  char *name;
  char *path; /* "a.b[0]" style, for error messages */
  int nullable;
  ipc_type type;
  char *format; /* C Data Interface format of the (value) type */
  int width;    /* bytes per value for fixed-width types, else 0 */
  ipc_swap swap;
  int union_dense;
  int32_t *union_type_ids; /* one per child */
  int32_t list_size;       /* fixed-size list */
  int keys_sorted;         /* map */
  char *metadata;          /* ArrowSchema.metadata encoding, or NULL */
  size_t metadata_size;
  /* Dictionary encoding: the field's buffers hold indices of `index_width`
   * bytes into the dictionary `dict_id`, whose values have this type. */
  int dict_encoded;
  int64_t dict_id;
  int dict_ordered;
  int index_width;
  int index_signed;
  struct ipc_field *children;
  int64_t n_children;
  int skip; /* not selected: neither decoded nor exported */
  /* The field nodes and buffers of the field and its descendants in a
   * RecordBatch message (V5; a V4 message has span_unions more buffers),
   * counted once by ipc_schema_count_spans so that planning a batch steps
   * over an unselected column without deriving them again; span_nodes is
   * 0 when they are not counted, or when only the message can tell (a
   * view type's buffers). */
  uint32_t span_nodes, span_buffers, span_unions;
} ipc_field;

typedef struct ipc_schema {
  ipc_field root; /* a struct field whose children are the columns */
  int big_endian;
  char *metadata;
  size_t metadata_size;
} ipc_schema;

/* Parses a Schema table, enforcing the depth and field-count limits. */
xchg_status ipc_schema_parse(const fb_table *schema, const xchg_ipc_read_options *opts,
                             ipc_schema *out, xchg_error *err);
void ipc_schema_free(ipc_schema *schema);

/* Size in bytes of metadata in the ArrowSchema.metadata encoding (an int32
 * count, then an int32 length and the bytes of every key and value); 0 for
 * NULL.  The writer and the cache copy a caller's metadata by it. */
size_t ipc_metadata_size(const char *metadata);

/* Encodes a vector of KeyValue tables as ArrowSchema.metadata (NULL when
 * absent or empty). */
xchg_status ipc_metadata_parse(const fb_table *t, int slot, char **out, size_t *out_size,
                               const char *where, xchg_error *err);

/* Exports a field (the root gives the "+s" schema of a batch). */
xchg_status ipc_field_export(const ipc_field *field, struct ArrowSchema *out, xchg_error *err);

/* Exports the schema as a "+s" ArrowSchema carrying the schema's metadata. */
xchg_status ipc_schema_export(const ipc_schema *schema, struct ArrowSchema *out, xchg_error *err);

/* The private data of an exported ArrowSchema node: it owns the node's
 * strings and child tables, and its dictionary's struct.  The export here
 * and the cache's copies of exported schemas (cache_schema.c) make their
 * nodes with it and release them alike. */
typedef struct ipc_schema_node {
  char *format, *name, *metadata;
  struct ArrowSchema **children;
  struct ArrowSchema *child_structs;
  struct ArrowSchema dictionary;
} ipc_schema_node;

/* Makes *out a node of its own: copies of format, of name and of the
 * metadata_size bytes of metadata (a NULL name or metadata stays NULL), and
 * room for n_children children, out->children[i] pointing at
 * child_structs[i].  out->n_children is left 0, for the caller to count
 * the children it has filled in, so that out->release frees all that was
 * made when a later step fails; the caller points out->dictionary at
 * ->dictionary when it fills that in.  NULL when out of memory (*out is
 * then released). */
ipc_schema_node *ipc_schema_node_make(struct ArrowSchema *out, const char *format, const char *name,
                                      const char *metadata, size_t metadata_size,
                                      int64_t n_children);

/* Whether a schema comparison counts the key/value metadata of the schema
 * and of its fields: each caller says which it needs (a file's footer and
 * its stream, the parts of one broadcast: types only; the IPC streams the
 * CLI makes one table of: metadata too).  No metadata and metadata of no
 * pairs are alike. */
typedef enum ipc_metadata_rule { IPC_METADATA_IGNORED, IPC_METADATA_COMPARED } ipc_metadata_rule;

/* The one rule for "the same schema": non-zero when the two have the same
 * byte order and describe the same columns (names, types, nullability,
 * dictionary encoding: index type, ordering and id; sorted map keys;
 * children), and the same metadata where the rule says so.  Otherwise
 * describes the first difference in err, naming the column or field and
 * what it is on each side: a_where and b_where say where each schema comes
 * from, as the message puts it ("column 2 \"c2\": type \"l\" in the footer,
 * \"u\" in the stream"; "3 columns in the first IPC stream, 2 here"). */
int ipc_schema_equal(const ipc_schema *a, const char *a_where, const ipc_schema *b,
                     const char *b_where, ipc_metadata_rule metadata, xchg_error *err);

/* ipc_schema_equal for two "+s" ArrowSchemas (dictionary ids, which an
 * ArrowSchema has not, numbered alike on both sides): XCHG_OK with *equal
 * set and, when 0, err saying the difference; an error status when one
 * could not be read (out of memory, or not a schema ipc_schema_import
 * takes). */
xchg_status ipc_arrow_schema_equal(const struct ArrowSchema *a, const char *a_where,
                                   const struct ArrowSchema *b, const char *b_where,
                                   ipc_metadata_rule metadata, int *equal, xchg_error *err);

/* Builds an ipc_schema from a "+s" ArrowSchema, each field's type read
 * through ipc/schema_view.h, and numbers its dictionaries (ids given, or
 * 0, 1, 2, ... in post order): the writer's schema, and either side of
 * ipc_arrow_schema_equal (src/ipc/writer_schema.c). */
xchg_status ipc_schema_import(const struct ArrowSchema *schema, const int64_t *ids, int64_t n_ids,
                              ipc_schema *out, xchg_error *err);

/* Calls fn for every dictionary-encoded field, depth first, including the
 * fields inside dictionary value types; with selected_only, only for the
 * fields that will be decoded. */
typedef xchg_status (*ipc_field_visit_fn)(void *ctx, const ipc_field *field, xchg_error *err);
xchg_status ipc_schema_visit_dictionaries(const ipc_schema *schema, int selected_only,
                                          ipc_field_visit_fn fn, void *ctx, xchg_error *err);

/* The dictionary ids of the selected dictionary-encoded fields, a field's
 * before those inside it (xchg_ipc_reader_dictionary_ids and
 * xchg_shuffle_reader_dictionary_ids): up to capacity into ids; returns
 * how many there are. */
int64_t ipc_schema_dictionary_ids(const ipc_schema *schema, int64_t *ids, int64_t capacity);

/* Selects the columns to decode, replacing any earlier selection.  A path
 * names a top-level column ("c4") or, through structs, a nested field
 * ("s.f1": the struct s with only its child f1).  A path that goes into a
 * list, map, union or dictionary selects that whole column.  Unknown names
 * are an XCHG_EINVAL error naming them. */
xchg_status ipc_schema_select_paths(ipc_schema *schema, const char *const *paths, int64_t n,
                                    xchg_error *err);
/* Selects top-level columns by index. */
xchg_status ipc_schema_select_indices(ipc_schema *schema, const int64_t *indices, int64_t n,
                                      xchg_error *err);

#endif
