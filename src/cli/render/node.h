/* node.h — a column as the writers see it: schema, array and parsed type.
 *
 * The writers walk an xc_node tree built from an ArrowSchema and (for data)
 * the matching ArrowArray.  Building checks that the array has the shape
 * its type needs — buffer and child counts, the buffers that must be
 * present — so that a malformed export is reported, not dereferenced.
 * Dictionary-encoded fields get the input's own dictionary ids, which the
 * IPC reader lists in a pre-order walk of the schema, so that a schema-only
 * tree and every batch's tree agree on them, and fields sharing one
 * dictionary share its id.
 *
 * Indices: "logical" indices count elements of the array (0..length-1);
 * accessors add array->offset themselves. */
#ifndef XCHG_CLI_RENDER_NODE_H
#define XCHG_CLI_RENDER_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/render/types.h"
#include "xchg/arrow_c.h"
#include "xchg/error.h"

typedef struct xc_node {
  const struct ArrowSchema *schema;
  const struct ArrowArray *array; /* NULL in a schema-only tree */
  ipc_schema_view type;           /* for a dictionary: the index type */
  int64_t dict_id;                /* -1 unless dictionary-encoded */
  struct xc_node *dictionary;     /* the dictionary values, or NULL */
  int64_t n_children;
  struct xc_node *children;
  char **json_keys; /* structs whose fields share a name: distinct keys (keys.h), else NULL */
  int8_t child_of_type_id[IPC_MAX_UNION_CHILDREN]; /* unions: type id -> child, -1 */
} xc_node;

/* The dictionary ids of dictionary-encoded fields in pre-order (a field,
 * then its dictionary's values, then its children), as
 * xchg_ipc_reader_dictionary_ids lists them; building takes them in turn,
 * from `next`. */
typedef struct xc_dict_ids {
  const int64_t *ids;
  int64_t count;
  int64_t next;
} xc_dict_ids;

/* How many dictionary-encoded fields the tree of schema holds, schema
 * included: where the ids of the next top-level column begin. */
int64_t xc_count_dictionaries(const struct ArrowSchema *schema);

/* Builds the tree for schema (and array, which may be NULL), taking the ids
 * of its dictionary-encoded fields from dict_ids; running out of ids is an
 * XCHG_EFORMAT error. */
xchg_status xc_node_build(xc_node *node, const struct ArrowSchema *schema,
                          const struct ArrowArray *array, xc_dict_ids *dict_ids, xchg_error *err);
void xc_node_free(xc_node *node);

/* Validity of element i (true when there is no validity bitmap). */
bool xc_is_valid(const xc_node *n, int64_t i);

/* Element i of buffer b read as a little integer of the given width. */
int64_t xc_read_int(const xc_node *n, int b, int64_t i, int bit_width);
uint64_t xc_read_uint(const xc_node *n, int b, int64_t i, int bit_width);

/* Raw pointer to fixed-width element i (of byte_width bytes) of buffer b. */
const uint8_t *xc_fixed(const xc_node *n, int b, int64_t i, int64_t byte_width);

/* Offsets buffer (buffer 1) entry i, 32- or 64-bit per type.large. */
int64_t xc_offset(const xc_node *n, int64_t i);

/* Bytes of variable-size binary element i (offsets or views). */
const uint8_t *xc_binary(const xc_node *n, int64_t i, int64_t *size);

/* Number of variadic data buffers of a view array. */
int64_t xc_view_buffer_count(const xc_node *n);
int64_t xc_view_buffer_size(const xc_node *n, int64_t b);

/* Unions: the child holding element i and the index within it, or false
 * when the type id is unknown. */
bool xc_union_child(const xc_node *n, int64_t i, const xc_node **child, int64_t *child_index);

/* Run-end encoded: the index in the values child of element i, or -1. */
int64_t xc_run_index(const xc_node *n, int64_t i);

/* Dictionary-encoded: the dictionary index of element i (valid elements
 * only), or -1 when it is out of the dictionary's range. */
int64_t xc_dict_index(const xc_node *n, int64_t i);

#endif
