/* tests/support/array_valid.h — the structural rules of the Arrow columnar
 * format, checked on a C Data Interface array, as an oracle independent of
 * the reader's own validation (src/ipc/decode_validate.c).
 *
 * Checked at every level (children and dictionaries included): length and
 * null_count in range; null_count equal to the nulls of the validity
 * bitmap, which must be there when there are nulls; offsets from 0 or more,
 * never decreasing, and (for lists and maps) within the child; list views
 * and dense union offsets within their child; union type ids among the
 * declared ones; views inside their data buffers (whose sizes the C Data
 * Interface gives in the last buffer); run ends increasing, covering the
 * array; dictionary indices inside the dictionary; struct and fixed-size
 * list children long enough.  Values are not read beyond that: compare the
 * array with itself with array_equal to touch every value (under
 * AddressSanitizer, a read outside a buffer aborts). */
#ifndef XCHG_TESTS_ARRAY_VALID_H
#define XCHG_TESTS_ARRAY_VALID_H

#include <stddef.h>

#include "xchg/arrow_c.h"

/* 0 when the array of type schema keeps every rule; else -1 and a message
 * naming the field path, the rule and the row. */
int array_valid(const struct ArrowSchema *schema, const struct ArrowArray *array, char *msg,
                size_t msgsz);

#endif
