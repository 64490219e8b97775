/** \file
 * xchg/io.h — byte sources: where encoded bytes come from.
 *
 * An xchg_source yields a sequence of bytes: an in-memory buffer, a file
 * (read or memory-mapped), a file descriptor read incrementally, or a user
 * callback.  Readers pull from a source and never need to know which kind it
 * is, except for one thing: a source whose bytes are all in memory (a buffer
 * or an mmap) can hand out zero-copy slices of itself, which is how xchg
 * avoids copying uncompressed data.
 *
 * Every constructor returns an xchg_status: XCHG_OK with the new source in
 * *out, or an error (*out NULL) whose message names the constructor and what
 * was wrong: a NULL argument, a value out of range, or running out of
 * memory (XCHG_ENOMEM).  On failure a constructor takes nothing over that it
 * was given (a buffer's reference, an fd, a release or close callback: none
 * of them is dropped, closed or run), except the wrappers that take a
 * source or a stream over (xchg_source_with_cancel, xchg_source_from_istream),
 * which close it at once, as xchg_ipc_reader_open does.
 *
 * Threads: a source is used by one thread at a time (the reader that owns
 * it); different sources are independent.  A callback source's read
 * callback runs on the thread that reads.
 */
#ifndef XCHG_IO_H
#define XCHG_IO_H

#include "xchg/export.h"

#include <stddef.h>
#include <stdint.h>

#include "xchg/buf.h"
#include "xchg/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A sequence of bytes to read: memory, a file, a descriptor, a callback. */
typedef struct xchg_source xchg_source;

/** A source over the bytes of buf; takes a reference on buf (none on
 * failure).  XCHG_EINVAL when buf or out is NULL, XCHG_ENOMEM when out of
 * memory. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_from_buf(xchg_buf *buf, xchg_source **out,
                                                         xchg_error *err);

/** A source over memory the caller owns: release (may be NULL) runs when the
 * last array or slice that points into the memory is gone.  XCHG_EINVAL
 * when out is NULL or data is NULL with a non-zero size, XCHG_ENOMEM when
 * out of memory; release does not run on failure (the memory stays the
 * caller's). */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_from_memory(const void *data, size_t size,
                                                            xchg_release_fn release,
                                                            void *release_ctx, xchg_source **out,
                                                            xchg_error *err);

/** How xchg_source_open_file reads a file. */
typedef enum xchg_file_mode {
  /** map the file: zero-copy, random access.  As with any mapping, a file
   * another process truncates while it is mapped raises SIGBUS where its
   * lost bytes are read: XCHG_FILE_READ for files others may rewrite. */
  XCHG_FILE_MMAP = 0,
  XCHG_FILE_READ = 1 /**< read(2) it: bounded memory, random access by pread */
} xchg_file_mode;

/** Opens path for reading.  Errors begin with the path ("data.arrow:
 * cannot open: No such file or directory"). */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_open_file(const char *path, xchg_file_mode mode,
                                                          xchg_source **out, xchg_error *err);

/** Reads fd incrementally (a pipe, a socket, stdin, a file).  When own_fd is
 * non-zero the fd is closed with the source.  Random access works only when
 * the fd is seekable.  XCHG_EINVAL when fd is negative or out is NULL,
 * XCHG_ENOMEM when out of memory; on failure the fd stays open, even with
 * own_fd (closing it is the caller's). */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_from_fd(int fd, int own_fd, xchg_source **out,
                                                        xchg_error *err);

/** Fills dst with up to n bytes of the caller's data: sets *got (0 = the
 * end of the data) and returns XCHG_OK, or an error.  Fewer than n bytes
 * is fine: the rest is asked for by the next call.  The bytes of a call
 * that returns an error are not used, so a callback that fails after some
 * bytes returns them first and the error from its next call. */
typedef xchg_status (*xchg_read_fn)(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err);

/** Runs when a source over the caller's data is closed: the data's owner
 * lets it go (ctx is the caller's). */
typedef void (*xchg_close_fn)(void *ctx);

/** A source that calls read_fn(ctx, ...) for its bytes.  close_fn (may be
 * NULL) runs when the source is closed.  XCHG_EINVAL when read_fn or out is
 * NULL, XCHG_ENOMEM when out of memory; close_fn does not run on failure. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_from_callback(xchg_read_fn read_fn,
                                                              xchg_close_fn close_fn, void *ctx,
                                                              xchg_source **out, xchg_error *err);

/** Reads up to n bytes into dst; *got < n only at the end of the data.  On
 * an error, *got is how many bytes were read into dst before it. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_read(xchg_source *src, void *dst, size_t n,
                                                     size_t *got, xchg_error *err);

/** Reads the next n bytes as a buffer: a zero-copy slice when the source is
 * in memory, otherwise a fresh 64-byte-aligned buffer.  Fewer than n bytes
 * available is an XCHG_EIO error naming the offset. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_read_buf(xchg_source *src, size_t n, xchg_buf **out,
                                                         xchg_error *err);

/** Skips n bytes (seeking where possible); n < 0 is XCHG_EINVAL. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_skip(xchg_source *src, int64_t n, xchg_error *err);

/** Byte offset of the next read from the start of the source. */
XCHG_API int64_t xchg_source_position(const xchg_source *src);

/** Total size in bytes, or -1 when unknown (a pipe). */
XCHG_API int64_t xchg_source_size(const xchg_source *src);

/** Says that the consumer has read all it needs (the IPC reader calls it at
 * the end-of-stream marker).  Sources that frame their data (codec streams,
 * xchg/stream.h) read and verify the rest of the current frame: its end
 * mark, checksum or end block, which nothing else would read, so that an
 * input cut there is an error (XCHG_EIO; XCHG_EFORMAT when corrupt), not a
 * whole input.  The next frame is not started and the position does not
 * move: bytes after it, including decoded data that the current frame still
 * holds (whose trailer is then not reached), stay readable.  Other sources
 * do nothing and return XCHG_OK. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_finish(xchg_source *src, xchg_error *err);

/** Moves to an absolute offset; XCHG_ENOTSUP when the source cannot seek,
 * XCHG_EINVAL when offset < 0. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_seek(xchg_source *src, int64_t offset,
                                                     xchg_error *err);

/** The whole content as a buffer when the source is in memory (new
 * reference), else NULL. */
XCHG_API xchg_buf *xchg_source_memory(const xchg_source *src);

/** Closes the source and frees it (NULL is a no-op). */
XCHG_API void xchg_source_free(xchg_source *src);

/* ---- Chunk lists and cancellation (src/io/chunks.c, src/io/cancel.c) ---- */

/** One piece of a source made of several memory chunks. */
typedef struct xchg_chunk {
  const void *data; /**< the chunk's first byte (may be NULL when size is 0) */
  size_t size;      /**< its length in bytes */
} xchg_chunk;

/** A source over the concatenation of count chunks (e.g. a JVM's 1 MiB heap
 * chunks), read without joining them; the chunk list is copied, the bytes
 * are not.  release (may be NULL) runs when the source is closed.
 * XCHG_EINVAL when out is NULL, count is negative, chunks is NULL with a
 * non-zero count, a chunk of non-zero size has NULL data, or the sizes sum
 * past INT64_MAX (the message gives the index of the chunk at fault);
 * XCHG_ENOMEM when out of memory.  release does not run on failure. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_from_chunks(const xchg_chunk *chunks, int64_t count,
                                                            xchg_close_fn release,
                                                            void *release_ctx, xchg_source **out,
                                                            xchg_error *err);

/** A task's cancellation check: non-zero once the task is cancelled.  May be
 * NULL wherever one is taken. */
typedef int (*xchg_cancel_fn)(void *ctx);

/** Wraps inner, which it takes over (closed with the wrapper, or at once if
 * wrapping fails), so that is_cancelled(ctx) is asked before every read of
 * at most 64 KiB from inner; once it returns non-zero, reads fail with
 * XCHG_ECANCELLED.  XCHG_EINVAL when inner, is_cancelled or out is NULL,
 * XCHG_ENOMEM when out of memory. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_with_cancel(xchg_source *inner,
                                                            xchg_cancel_fn is_cancelled, void *ctx,
                                                            xchg_source **out, xchg_error *err);

/** The same with a flag: reads fail once *flag is non-zero (read atomically,
 * so another thread may set it).  XCHG_EINVAL when flag is NULL too. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_with_cancel_flag(xchg_source *inner,
                                                                 const int *flag, xchg_source **out,
                                                                 xchg_error *err);

/* ---- Positional reads (src/io/read_at.c) ---- */

/** Copies the n bytes at `offset` of the caller's data into dst (the range
 * is inside the size given to xchg_source_from_read_at). */
typedef xchg_status (*xchg_read_at_fn)(void *ctx, int64_t offset, void *dst, size_t n,
                                       xchg_error *err);

/** A seekable source of `size` bytes that fetches what is read, and only
 * that, through read_at: memory the caller cannot hand out as a pointer (a
 * JVM heap array, copied by GetByteArrayRegion) or can only copy from.
 * Seeking and skipping cost nothing, so a projected IPC read fetches the
 * selected buffers alone, each copied once into its final, 64-byte-aligned
 * buffer (xchg_source_read_buf).  read_at runs on the thread that reads.
 * close_fn (may be NULL) runs when the source is closed.  XCHG_EINVAL when
 * read_at or out is NULL or size is negative, XCHG_ENOMEM when out of
 * memory; close_fn does not run on failure. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_from_read_at(int64_t size, xchg_read_at_fn read_at,
                                                             xchg_close_fn close_fn, void *ctx,
                                                             xchg_source **out, xchg_error *err);

#ifdef __cplusplus
}
#endif
#endif
