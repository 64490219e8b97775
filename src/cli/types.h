/* types.h — Arrow C Data Interface format strings, parsed once.
 *
 * An ArrowSchema names its type with a format string ("i", "tsu:UTC",
 * "+ud:5,7", "d:38,2,256"...).  The CLI parses it into an xc_type so that
 * the writers switch on a small enum instead of re-reading strings, and
 * renders types readably ("timestamp[us, tz=UTC]") for `xchg inspect`. */
#ifndef XCHG_CLI_TYPES_H
#define XCHG_CLI_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/strbuf.h"
#include "xchg/arrow_c.h"
#include "xchg/error.h"

typedef enum xc_kind {
  XC_NULL,
  XC_BOOL,
  XC_INT,           /* bit_width, is_signed */
  XC_FLOAT,         /* bit_width 16, 32, 64 */
  XC_DECIMAL,       /* precision, scale, bit_width 32, 64, 128, 256 */
  XC_FIXED_BINARY,  /* width bytes */
  XC_BINARY,        /* utf8, large */
  XC_BINARY_VIEW,   /* utf8 */
  XC_DATE,          /* unit XC_DAY or XC_MILLI */
  XC_TIME,          /* unit, bit_width */
  XC_TIMESTAMP,     /* unit, tz ("" when none) */
  XC_DURATION,      /* unit */
  XC_INTERVAL,      /* interval */
  XC_LIST,          /* large */
  XC_LIST_VIEW,     /* large */
  XC_FIXED_LIST,    /* width elements */
  XC_STRUCT,
  XC_MAP,           /* keys_sorted (from the schema flags) */
  XC_UNION,         /* dense, type_ids */
  XC_RUN_END
} xc_kind;

typedef enum xc_unit { XC_SECOND, XC_MILLI, XC_MICRO, XC_NANO, XC_DAY } xc_unit;

typedef enum xc_interval { XC_YEAR_MONTH, XC_DAY_TIME, XC_MONTH_DAY_NANO } xc_interval;

#define XC_MAX_UNION_CHILDREN 128

typedef struct xc_type {
  xc_kind kind;
  int bit_width;
  bool is_signed;
  bool utf8;
  bool large;
  bool dense;
  xc_unit unit;
  xc_interval interval;
  int32_t precision;
  int32_t scale;
  int64_t width;
  const char *tz; /* points into the format string */
  int n_type_ids;
  int8_t type_ids[XC_MAX_UNION_CHILDREN];
} xc_type;

/* Parses an ArrowSchema format string; an unknown or malformed one is an
 * XCHG_EFORMAT error naming it. */
xchg_status xc_parse_format(const char *format, xc_type *out, xchg_error *err);

/* Appends a readable rendering of the type of schema (including nested
 * children and dictionary encoding), e.g. "list<item: int32>". */
void xc_type_name(xs *out, const struct ArrowSchema *schema);

/* Short unit names: "s", "ms", "us", "ns". */
const char *xc_unit_short(xc_unit unit);

/* Iterates the key/value pairs of ArrowSchema.metadata (an int32 count, then
 * int32-length-prefixed keys and values).  NULL metadata has no pairs. */
typedef struct xc_meta_iter {
  const char *next;
  int32_t remaining;
} xc_meta_iter;

void xc_meta_begin(xc_meta_iter *it, const char *metadata);
bool xc_meta_next(xc_meta_iter *it, const char **key, int32_t *key_len, const char **value,
                  int32_t *value_len);

/* The value of key in metadata, or NULL (then *len is untouched). */
const char *xc_meta_find(const char *metadata, const char *key, int32_t *len);

#endif
