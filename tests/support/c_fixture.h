/* tests/support/c_fixture.h — hand-built Arrow C Data Interface structs
 * for tests that write arrays the gold files lack: an ArrowSchema or
 * ArrowArray filled in over memory the test owns (static arrays, locals
 * that outlive the use), and the 16-byte views of binary and utf8 views.
 *
 * The structs borrow everything they point to: their release callback only
 * marks them released (release = NULL), as the C Data Interface asks of a
 * release, and frees nothing. */
#ifndef XCHG_TESTS_C_FIXTURE_H
#define XCHG_TESTS_C_FIXTURE_H

#include <stdint.h>

#include "xchg/arrow_c.h"

/* A nullable field (flags ARROW_FLAG_NULLABLE; change s->flags after) with
 * no dictionary and no metadata. */
void tu_fixture_schema(struct ArrowSchema *s, const char *format, const char *name,
                       int64_t n_children, struct ArrowSchema **children);

/* An array at offset 0 with null_count 0 (set a->null_count after when it
 * has nulls) and no dictionary. */
void tu_fixture_array(struct ArrowArray *a, int64_t length, int64_t n_buffers, const void **buffers,
                      int64_t n_children, struct ArrowArray **children);

/* The 16-byte view of text in a binary or utf8 view array: inline when
 * short (12 bytes or fewer), else its length, its first 4 bytes and where
 * it is (data buffer index, byte offset in it). */
void tu_fixture_view(uint8_t view[16], const char *text, int32_t buffer, int32_t offset);

#endif
