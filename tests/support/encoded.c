/* tests/support/encoded.c — see encoded.h. */
#include "support/encoded.h"

#include <stdlib.h>

bool tu_append_encoded(tu_bytes *out, xchg_stream_codec codec,
                       const xchg_stream_encode_options *opts, const void *data, size_t n) {
  xchg_stream_encode_options defaults;
  xchg_stream_encode_options_init(&defaults);
  xchg_buf *encoded = NULL;
  xchg_error err;
  if (!TU_OK(xchg_stream_encode(codec, opts != NULL ? opts : &defaults, data, n, &encoded, &err),
             err))
    return false;
  tu_bytes_append(out, xchg_buf_data(encoded), xchg_buf_size(encoded));
  xchg_buf_unref(encoded);
  return true;
}

bool tu_encode_file(const char *from, xchg_stream_codec codec, const char *to) {
  tu_bytes plain = tu_read_bytes(from), coded = {0};
  bool ok = tu_append_encoded(&coded, codec, NULL, plain.data, plain.size) &&
            tu_write_file(to, coded.data, coded.size) == 0;
  TU_CHECK(ok, "cannot write %s", to);
  free(plain.data);
  free(coded.data);
  return ok;
}

bool tu_append_comet_block(tu_bytes *out, const void *ipc, size_t n, xchg_stream_codec inner,
                           int64_t fields) {
  xchg_stream_encode_options o;
  xchg_stream_encode_options_init(&o);
  o.comet_inner = inner;
  o.comet_field_count = fields;
  return tu_append_encoded(out, XCHG_STREAM_COMET, &o, ipc, n);
}
