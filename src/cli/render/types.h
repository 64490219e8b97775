/* types.h — Arrow types rendered readably, and ArrowSchema metadata.
 *
 * The CLI reads an ArrowSchema's format string once, into the library's
 * parsed view (ipc/schema_view.h), so that the writers switch on a small
 * enum instead of re-reading strings; here it renders types readably
 * ("timestamp[us, tz=UTC]") for `xchg inspect`. */
#ifndef XCHG_CLI_RENDER_TYPES_H
#define XCHG_CLI_RENDER_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/render/strbuf.h"
#include "ipc/schema_view.h"
#include "xchg/arrow_c.h"
#include "xchg/error.h"

/* Appends a readable rendering of the type of schema (including nested
 * children and dictionary encoding), e.g. "list<item: int32>". */
void xc_type_name(xs *out, const struct ArrowSchema *schema);

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
