/* tests/support/encoded.h — test data wrapped in a stream codec by the
 * library's encoder (xchg_stream_encode): codec streams and Comet shuffle
 * blocks, built one way by every test that needs them. */
#ifndef XCHG_TESTS_ENCODED_H
#define XCHG_TESTS_ENCODED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/testutil.h"
#include "xchg/stream.h"
#include "xchg/testing.h"

/* Appends data[0..n) encoded by codec with opts (NULL: the defaults of
 * xchg_stream_encode_options_init) to out.  A failure is a failed check
 * with the encoder's message: false, out unchanged. */
bool tu_append_encoded(tu_bytes *out, xchg_stream_codec codec,
                       const xchg_stream_encode_options *opts, const void *data, size_t n);

/* Writes the file `from` encoded by codec (the defaults) to the file
 * `to`.  A failure is a failed check naming `to`: false. */
bool tu_encode_file(const char *from, xchg_stream_codec codec, const char *to);

/* Appends the IPC stream ipc[0..n) as one Comet block whose inner codec
 * is inner and whose header states `fields` fields (0: none, as
 * xchg_stream_encode writes by default; Comet writes the schema's). */
bool tu_append_comet_block(tu_bytes *out, const void *ipc, size_t n, xchg_stream_codec inner,
                           int64_t fields);

#endif
