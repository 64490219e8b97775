/* schema_view.h — the type of an ArrowSchema node, parsed once.
 *
 * The C Data Interface names a type with a format string ("i", "tsu:UTC",
 * "+ud:5,7", "d:38,2,256", ...), and the children a type needs are a rule
 * of their own (a list has one, a map's is a struct of key and value).
 * The writer (a caller's ArrowSchema to Schema.fbs), the CLI (reading and
 * rendering values) and the JNI binding (column checksums) all take those
 * facts from an ipc_schema_view, as nanoarrow's users take them from its
 * ArrowSchemaView: no one reads the string again.
 *
 * Internal, not in include/xchg/: an engine that hands xchg's ArrowSchemas
 * on already has nanoarrow or Arrow to read them, and a public view would
 * freeze this struct's layout before 1.0.  The JNI binding links the
 * static library of the same tree, so it may include this header. */
#ifndef XCHG_IPC_SCHEMA_VIEW_H
#define XCHG_IPC_SCHEMA_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xchg/arrow_c.h"
#include "xchg/error.h"

/* How the values are laid out; the fields of ipc_schema_view that each
 * kind sets are beside it (the rest stay 0). */
typedef enum ipc_kind {
  IPC_KIND_NULL,
  IPC_KIND_BOOL,         /* bit_width 1 */
  IPC_KIND_INT,          /* bit_width 8, 16, 32, 64; is_signed */
  IPC_KIND_FLOAT,        /* bit_width 16, 32, 64 */
  IPC_KIND_DECIMAL,      /* precision, scale, bit_width 32, 64, 128, 256 */
  IPC_KIND_FIXED_BINARY, /* width bytes */
  IPC_KIND_BINARY,       /* utf8, large (64-bit offsets); bit_width of the offsets */
  IPC_KIND_BINARY_VIEW,  /* utf8 */
  IPC_KIND_DATE,         /* unit IPC_UNIT_DAY (bit_width 32) or IPC_UNIT_MILLI (64) */
  IPC_KIND_TIME,         /* unit, bit_width 32 (s, ms) or 64 (us, ns) */
  IPC_KIND_TIMESTAMP,    /* unit, tz ("" when none), bit_width 64 */
  IPC_KIND_DURATION,     /* unit, bit_width 64 */
  IPC_KIND_INTERVAL,     /* interval */
  IPC_KIND_LIST,         /* large */
  IPC_KIND_LIST_VIEW,    /* large */
  IPC_KIND_FIXED_LIST,   /* width elements */
  IPC_KIND_STRUCT,
  IPC_KIND_MAP,   /* (keys sorted: a flag of the schema, not of the format) */
  IPC_KIND_UNION, /* dense, type_ids */
  IPC_KIND_RUN_END
} ipc_kind;

typedef enum ipc_unit {
  IPC_UNIT_SECOND,
  IPC_UNIT_MILLI,
  IPC_UNIT_MICRO,
  IPC_UNIT_NANO,
  IPC_UNIT_DAY
} ipc_unit;

typedef enum ipc_interval {
  IPC_INTERVAL_YEAR_MONTH,
  IPC_INTERVAL_DAY_TIME,
  IPC_INTERVAL_MONTH_DAY_NANO
} ipc_interval;

/* Union type ids are 0..127, each at most once. */
#define IPC_MAX_UNION_CHILDREN 128

typedef struct ipc_schema_view {
  ipc_kind kind;
  int bit_width;
  bool is_signed;
  bool utf8;
  bool large;
  bool dense;
  ipc_unit unit;
  ipc_interval interval;
  int32_t precision;
  int32_t scale;
  int64_t width;
  const char *tz; /* points into the format string */
  int n_type_ids;
  int8_t type_ids[IPC_MAX_UNION_CHILDREN];
} ipc_schema_view;

/* Parses one format string (what the node itself is, not its children).
 * Every format of the C Data Interface is known; anything else, or a
 * known one with a malformed or out-of-range parameter (decimal precision
 * outside 1..76, a repeated union type id, trailing characters), is an
 * XCHG_EINVAL error quoting it.  NULL is an error too. */
xchg_status ipc_schema_view_parse(const char *format, ipc_schema_view *out, xchg_error *err);

/* Parses schema->format and checks the children that type needs: one for
 * lists (of every kind) and maps, a map's being a struct of two fields
 * without a dictionary; two for run-end encoding, the run ends first as
 * int16, int32 or int64; one per type id for unions; any number for a
 * struct; none for the rest.  XCHG_EINVAL saying what is wrong (the caller
 * names the field). */
xchg_status ipc_schema_view_init(ipc_schema_view *out, const struct ArrowSchema *schema,
                                 xchg_error *err);

/* Short unit names: "s", "ms", "us", "ns", "day". */
const char *ipc_unit_name(ipc_unit unit);

/* A readable name of the type, as Arrow C++ prints it: "int64", "utf8",
 * "timestamp[us, tz=UTC]", "decimal128(38, 2)", "fixed_size_list[3]",
 * "dense_union" (children are not named).  Into out (size bytes, always
 * terminated); returns out. */
const char *ipc_schema_view_name(const ipc_schema_view *v, char *out, size_t size);

#endif
