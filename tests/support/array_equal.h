/* tests/support/array_equal.h — logical equality of two C Data Interface
 * arrays, as a test oracle independent of how either was laid out.
 *
 * Values are compared row by row through their schema: offsets (at every
 * level), slicing, dictionary encoding (rows compare by decoded value),
 * run-end encoding (by logical row), views (by bytes) and unions (by type
 * id and child value) are resolved, so two arrays with different buffers
 * but the same content compare equal, and a single differing value, null
 * or length does not.  Values under nulls are not compared. */
#ifndef XCHG_TESTS_ARRAY_EQUAL_H
#define XCHG_TESTS_ARRAY_EQUAL_H

#include <stddef.h>
#include <stdint.h>

#include "xchg/arrow_c.h"

/* 0 when rows [a_row, a_row+n) of a equal rows [b_row, b_row+n) of b (rows
 * counted from each array's offset), both of type schema; otherwise -1 and
 * a message naming the first difference (field path and row). */
int array_range_equal(const struct ArrowSchema *schema, const struct ArrowArray *a, int64_t a_row,
                      const struct ArrowArray *b, int64_t b_row, int64_t n, char *msg,
                      size_t msgsz);

/* The same for whole arrays, lengths included. */
int array_equal(const struct ArrowSchema *schema, const struct ArrowArray *a,
                const struct ArrowArray *b, char *msg, size_t msgsz);

/* Nulls among rows [row, row+n) of a, counted from its validity bitmap. */
int64_t array_count_nulls(const struct ArrowArray *a, int64_t row, int64_t n);

#endif
