/* cmd_inspect_rows.c — `xchg inspect --rows`: a stream of length-prefixed rows
 * (a u32 little-endian length, then that many bytes), as Gluten's sort
 * shuffle writes them, read with xchg_row_reader. */
#include <stdbool.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "cli/render/size.h"
#include "cli/render/strbuf.h"
#include "cli/render/values.h"
#include "xchg/rows.h"

#define SIZE_CLASSES 33 /* 0 B, then [2^k, 2^(k+1)) for k = 0..31 */
#define HEX_BYTES 32    /* of each row shown */

typedef struct row_sizes {
  uint64_t rows, bytes;
  uint32_t min, max;
  uint64_t per_class[SIZE_CLASSES];
} row_sizes;

static int size_class(uint32_t len) {
  int k = 0;
  while (len > 0) {
    len >>= 1;
    k++;
  }
  return k;
}

static void count_row(row_sizes *z, uint32_t len) {
  if (z->rows == 0 || len < z->min) z->min = len;
  if (len > z->max) z->max = len;
  z->rows++;
  z->bytes += len;
  z->per_class[size_class(len)]++;
}

static void show_row(xs *out, uint64_t index, const uint8_t *row, uint32_t len) {
  xs_printf(out, "  #%llu  %u B  ", (unsigned long long)index, len);
  xv_hex(out, row, len < HEX_BYTES ? len : HEX_BYTES);
  xs_puts(out, len > HEX_BYTES ? " ...\n" : "\n");
}

static void print_sizes(xs *out, const row_sizes *z) {
  xs_printf(out, "rows: %llu\n", (unsigned long long)z->rows);
  if (z->rows == 0) return;
  xs_puts(out, "row bytes: ");
  xc_human_size(out, (int64_t)z->bytes);
  xs_printf(out, " in all; min %u, max %u, mean %.1f\n", z->min, z->max,
            (double)z->bytes / (double)z->rows);
  xs_puts(out, "row sizes:\n");
  for (int k = 0; k < SIZE_CLASSES; k++) {
    if (z->per_class[k] == 0) continue;
    if (k <= 1) /* the classes of one size: 0 B and 1 B */
      xs_printf(out, "  %d B", k);
    else
      xs_printf(out, "  %llu-%llu B", 1ull << (k - 1), (1ull << k) - 1);
    xs_printf(out, ": %llu\n", (unsigned long long)z->per_class[k]);
  }
}

static xchg_status read_rows(xchg_row_reader *r, xs *out, int64_t head, row_sizes *z,
                             xchg_error *err) {
  for (;;) {
    const uint8_t *row;
    size_t len;
    xchg_status st = xchg_row_reader_next(r, &row, &len, err);
    if (st != XCHG_OK || row == NULL) return st;
    if (z->rows == 0 && head > 0) xs_puts(out, "first rows (hex):\n");
    if (z->rows < (uint64_t)head) show_row(out, z->rows, row, len);
    count_row(z, len);
  }
}

/* Whether the stream's first (decoded) bytes are Arrow IPC's, looked at
 * and given back: read as rows, they fail at row 0 with a length no row
 * has (the continuation marker's 4294967295), which says nothing of the
 * fix. */
static xchg_status begins_ipc(xchg_istream *s, bool *yes, xchg_error *err) {
  const void *p;
  size_t n;
  xchg_status st = xchg_istream_next(s, &p, &n, err);
  if (st != XCHG_OK) return st;
  *yes = xc_begins_ipc(p, n);
  xchg_istream_unread(s, n);
  return XCHG_OK;
}

int xc_inspect_rows(const char *path, xchg_stream_codec codec, int64_t head) {
  xchg_error err = {{0}};
  xchg_istream *s;
  xchg_row_reader *r;
  bool ipc = false;
  if (xc_open_istream(path, codec, &s, &err) != XCHG_OK) return xc_runtime_error(path, err.message);
  if (begins_ipc(s, &ipc, &err) != XCHG_OK) {
    xchg_istream_free(s);
    return xc_runtime_error(path, err.message);
  }
  if (xchg_row_reader_open(s, NULL, &r, &err) != XCHG_OK) /* it closed s */
    return xc_runtime_error(path, err.message);
  xs out; /* held until the whole input is read: a failure prints nothing but the error */
  xs_init(&out, NULL);
  xs_printf(&out, "file: %s\n", xc_input_label(path));
  xchg_stream_codec used = xchg_istream_codec(s);
  if (used != XCHG_STREAM_NONE) xs_printf(&out, "codec: %s\n", xchg_stream_codec_name(used));
  xs_puts(&out, "format: length-prefixed rows (u32 little-endian length, then the row)\n");
  row_sizes z = {0};
  xchg_status st = read_rows(r, &out, head, &z, &err);
  if (st != XCHG_OK && ipc)
    st = xc_error_hint(&err, st, "its first bytes are Arrow IPC: leave --rows out to inspect it");
  if (st == XCHG_OK) print_sizes(&out, &z);
  if (st == XCHG_OK && used != XCHG_STREAM_NONE) xc_print_codec_bytes(&out, s);
  int rc = xc_print_report(&out, st, path, &err);
  xchg_row_reader_free(r);
  return rc;
}
