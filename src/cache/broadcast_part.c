/* broadcast_part.c — opening the IPC reader of a broadcast's part, for the
 * cache's decodes and for the host store's writes alike. */
#include "cache/broadcast_part.h"

#include "ipc/reader_internal.h"

/* Opens the IPC reader of part i: its encoded bytes, under the decoder's
 * cancel check, through its stream codec.  Parts are validated as the
 * read options say (the cache's), a mapped segment's too: a consumer could
 * fault on its offsets or indices, which no checksum covers.  With raw,
 * *raw is the source of the encoded bytes (owned by the reader). */
xchg_status broadcast_open_part(const xchg_broadcast *b, int64_t i,
                                const xchg_ipc_read_options *read, xchg_cancel_fn cancel,
                                void *cancel_ctx, xchg_ipc_reader **out, xchg_source **raw,
                                xchg_error *err) {
  xchg_source *src = NULL;
  xchg_status st = b->open_part ? b->open_part(b->open_ctx, i, &src, err)
                                : xchg_source_from_chunks(b->parts[i].chunks, b->parts[i].n_chunks,
                                                          NULL, NULL, &src, err);
  if (raw) *raw = src;
  if (st == XCHG_OK && cancel) st = xchg_source_with_cancel(src, cancel, cancel_ctx, &src, err);
  if (st == XCHG_OK && b->parts[i].codec != XCHG_STREAM_NONE) {
    xchg_istream *is;
    st = xchg_istream_open(src, b->parts[i].codec, NULL, &is, err);
    if (st == XCHG_OK) st = xchg_source_from_istream(is, &src, err);
  }
  if (st == XCHG_OK) {
    xchg_ipc_read_options opts = *read;
    opts.on_message = NULL;
    opts.on_message_ctx = NULL;
    if ((st = xchg_ipc_reader_open(src, &opts, out, err)) == XCHG_OK) return XCHG_OK;
  }
  xchg_error_prefix(err, "part %lld: ", (long long)i);
  return st;
}

xchg_status broadcast_part_check_end(xchg_ipc_reader *r, xchg_error *err) {
  if (xchg_ipc_reader_format(r) != XCHG_IPC_STREAM) return XCHG_OK;
  int64_t end = xchg_ipc_reader_stream_end(r); /* before a byte after it is read */
  int more = 0;
  xchg_status st = ipc_reader_more_after_end(r, &more, err);
  if (st != XCHG_OK) {
    xchg_error_prefix(err, "after its IPC stream's end at byte %lld: ", (long long)end);
    return st;
  }
  if (!more) return XCHG_OK;
  return xchg_errorf(err, XCHG_EFORMAT,
                     "bytes follow its IPC stream's end-of-stream marker, from byte %lld (a "
                     "second stream?): a part is one IPC stream, each stream a part of its own",
                     (long long)end);
}
