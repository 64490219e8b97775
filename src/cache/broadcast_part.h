/* broadcast_part.h — the IPC reader of one part of a broadcast: what both
 * the cache and the host store decode.  A plain function below both, so
 * that the host store needs nothing of the cache (see host_request). */
#ifndef XCHG_BROADCAST_PART_H
#define XCHG_BROADCAST_PART_H

#include "xchg/cache.h"

/* The IPC reader of part i of b: its encoded bytes (under cancel, when
 * given), through its stream codec, read with `read` (its on_message
 * ignored).  With raw, *raw is the source of the encoded bytes (owned by
 * the reader), for how much of them was read.  Errors are prefixed with
 * the part. */
xchg_status broadcast_open_part(const xchg_broadcast *b, int64_t i,
                                const xchg_ipc_read_options *read, xchg_cancel_fn cancel,
                                void *cancel_ctx, xchg_ipc_reader **out, xchg_source **raw,
                                xchg_error *err);

/* After r, part i's reader, reported the end of its IPC stream: whether
 * bytes follow the end-of-stream marker (a second stream concatenated
 * into the part, say, whose batches would be lost unseen: the reader
 * stops at the marker).  They are XCHG_EFORMAT saying where they begin; a
 * part is one stream.  Nothing is checked after an IPC file, whose end
 * the reader checks itself.  Errors are not prefixed with the part. */
xchg_status broadcast_part_check_end(xchg_ipc_reader *r, xchg_error *err);

#endif
