/* row_reader.c — u32-length-prefixed rows out of a decompressed stream,
 * zero copy within a window, assembled in a scratch buffer across windows. */
#include <stdlib.h>
#include <string.h>

#include "base/args.h"
#include "xchg/rows.h"

#define LENGTH_SIZE 4
#define DEFAULT_MAX_ROW ((size_t)256 << 20)

struct xchg_row_reader {
  const uint8_t *pos, *end; /* the rest of the current window */
  xchg_istream *stream;
  uint8_t *scratch;
  size_t scratch_cap;
  size_t max_row;
  int64_t rows, copied;
  int done;
};

static inline uint32_t load_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void xchg_row_reader_options_init(xchg_row_reader_options *opts) {
  if (!opts) return; /* nothing to fill */
  memset(opts, 0, sizeof *opts);
  opts->max_row_size = DEFAULT_MAX_ROW;
}

xchg_status xchg_row_reader_open(xchg_istream *s, const xchg_row_reader_options *opts,
                                 xchg_row_reader **out, xchg_error *err) {
  if (out) *out = NULL;
  if (!s || !out) {
    xchg_istream_free(s); /* taken over, as on any failure */
    return base_null_argument("xchg_row_reader_open", !s ? "the stream" : "out", err);
  }
  xchg_row_reader *r = calloc(1, sizeof *r);
  if (r == NULL) {
    xchg_istream_free(s);
    return xchg_errorf(err, XCHG_ENOMEM, "row reader: no memory");
  }
  r->stream = s;
  r->max_row = opts && opts->max_row_size ? opts->max_row_size : DEFAULT_MAX_ROW;
  *out = r;
  return XCHG_OK;
}

/* Moves to the next window; *got_one = 0 at the end of the stream. */
static xchg_status next_window(xchg_row_reader *r, int *got_one, xchg_error *err) {
  const void *p = NULL;
  size_t n = 0;
  xchg_status st = xchg_istream_next(r->stream, &p, &n, err);
  if (st != XCHG_OK) return st;
  r->pos = p;
  r->end = n ? r->pos + n : r->pos; /* p is NULL at the end: NULL + 0 is undefined */
  *got_one = n > 0;
  if (n == 0) r->done = 1;
  return XCHG_OK;
}

/* Copies n bytes that may span windows into dst. */
static xchg_status gather(xchg_row_reader *r, uint8_t *dst, size_t n, const char *what,
                          xchg_error *err) {
  size_t done = 0;
  while (done < n) {
    size_t have = (size_t)(r->end - r->pos);
    if (have == 0) {
      int more = 0;
      xchg_status st = r->done ? XCHG_OK : next_window(r, &more, err);
      if (st != XCHG_OK) return st;
      if (!more)
        return xchg_errorf(err, XCHG_EIO,
                           "row %lld: the stream ends inside its %s at decompressed byte %llu "
                           "(%zu of %zu bytes present)",
                           (long long)r->rows, what,
                           (unsigned long long)xchg_istream_position(r->stream), done, n);
      continue;
    }
    size_t k = have < n - done ? have : n - done;
    memcpy(dst + done, r->pos, k);
    r->pos += k;
    done += k;
  }
  return XCHG_OK;
}

/* A row that does not lie wholly in the current window. */
static xchg_status next_row_slow(xchg_row_reader *r, const uint8_t **row, size_t *len,
                                 xchg_error *err) {
  *row = NULL;
  *len = 0;
  if (r->pos == r->end) {
    int more = 0;
    xchg_status st = r->done ? XCHG_OK : next_window(r, &more, err);
    if (st != XCHG_OK || !more) return st;
  }
  uint8_t header[LENGTH_SIZE];
  xchg_status st = gather(r, header, LENGTH_SIZE, "length", err);
  if (st != XCHG_OK) return st;
  uint32_t n = load_le32(header);
  if (n > r->max_row) /* the row began LENGTH_SIZE bytes back from where the window is read */
    return xchg_errorf(
        err, XCHG_ELIMIT,
        "row %lld at decompressed byte %lld: length %u exceeds the %zu-byte row limit "
        "(max_row_size)",
        (long long)r->rows,
        (long long)(xchg_istream_position(r->stream) - (int64_t)(r->end - r->pos) - LENGTH_SIZE), n,
        r->max_row);
  if ((size_t)(r->end - r->pos) >= n) { /* the payload alone fits the window */
    *row = r->pos;
    r->pos += n;
  } else {
    if (n > r->scratch_cap) {
      uint8_t *p = realloc(r->scratch, n);
      if (p == NULL)
        return xchg_errorf(err, XCHG_ENOMEM, "row %lld: no memory for %u bytes", (long long)r->rows,
                           n);
      r->scratch = p;
      r->scratch_cap = n;
    }
    st = gather(r, r->scratch, n, "payload", err);
    if (st != XCHG_OK) return st;
    *row = r->scratch;
    r->copied++;
  }
  *len = n;
  r->rows++;
  return XCHG_OK;
}

/* The common case: the length and the payload are in the window.  Returns
 * 0 when they are not. */
static inline int take_in_window(xchg_row_reader *r, const uint8_t **row, size_t *len) {
  size_t have = (size_t)(r->end - r->pos);
  if (have < LENGTH_SIZE) return 0;
  uint32_t n = load_le32(r->pos);
  if (have - LENGTH_SIZE < n || n > r->max_row) return 0;
  *row = r->pos + LENGTH_SIZE;
  *len = n;
  r->pos += LENGTH_SIZE + (size_t)n;
  r->rows++;
  return 1;
}

xchg_status xchg_row_reader_next(xchg_row_reader *r, const uint8_t **row, size_t *len,
                                 xchg_error *err) {
  if (!r || !row || !len)
    return base_null_argument("xchg_row_reader_next",
                              !r     ? "the reader"
                              : !row ? "row"
                                     : "len",
                              err);
  if (take_in_window(r, row, len)) return XCHG_OK;
  return next_row_slow(r, row, len, err);
}

xchg_status xchg_row_reader_next_batch(xchg_row_reader *r, int64_t max, const uint8_t **rows,
                                       size_t *lens, int64_t *count, xchg_error *err) {
  if (!r || !rows || !lens || !count)
    return base_null_argument("xchg_row_reader_next_batch",
                              !r      ? "the reader"
                              : !rows ? "rows"
                              : !lens ? "lens"
                                      : "count",
                              err);
  *count = 0;
  /* max 0 would return *count 0, which means the end of the stream. */
  if (max < 1)
    return xchg_errorf(err, XCHG_EINVAL, "row reader: batch of %lld rows (at least 1)",
                       (long long)max);
  int64_t k = 0;
  while (k < max) {
    if (take_in_window(r, &rows[k], &lens[k])) {
      k++;
      continue;
    }
    /* The next row needs a new window, which would invalidate the rows
     * already in the batch: end the batch, unless it is empty. */
    if (k > 0) break;
    xchg_status st = next_row_slow(r, &rows[0], &lens[0], err);
    if (st != XCHG_OK) return st;
    if (rows[0] == NULL) break; /* the end */
    k = 1;
  }
  *count = k;
  return XCHG_OK;
}

int64_t xchg_row_reader_rows(const xchg_row_reader *r) { return r ? r->rows : 0; }
int64_t xchg_row_reader_copied_rows(const xchg_row_reader *r) { return r ? r->copied : 0; }
const xchg_istream *xchg_row_reader_stream(const xchg_row_reader *r) {
  return r ? r->stream : NULL;
}

void xchg_row_reader_free(xchg_row_reader *r) {
  if (r == NULL) return;
  xchg_istream_free(r->stream);
  free(r->scratch);
  free(r);
}
