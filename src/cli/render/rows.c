/* rows.c — CSV and JSON Lines rendering of rows. */
#include "cli/render/rows.h"

#include <stdlib.h>
#include <string.h>

#include "cli/render/keys.h"
#include "cli/render/values.h"

/* Follows dictionaries, unions and run-end encoding down to the node and
 * index that hold the value of element i.  Returns false when a reference
 * is out of range. */
static bool resolve(const xc_node **n, int64_t *i) {
  for (;;) {
    const xc_node *cur = *n;
    if (cur->dictionary != NULL) {
      if (!xc_is_valid(cur, *i)) return true; /* a null index: the null is here */
      int64_t index = xc_dict_index(cur, *i);
      if (index < 0) return false;
      *n = cur->dictionary;
      *i = index;
    } else if (cur->type.kind == IPC_KIND_UNION) {
      if (!xc_union_child(cur, *i, n, i)) return false;
    } else if (cur->type.kind == IPC_KIND_RUN_END) {
      int64_t run = xc_run_index(cur, *i);
      if (run < 0) return false;
      *n = &cur->children[1];
      *i = run;
    } else {
      return true;
    }
  }
}

static bool render_json(xs *s, const xc_node *n, int64_t i);

static bool render_list_range(xs *s, const xc_node *items, int64_t start, int64_t count) {
  bool ok = true;
  if (start < 0 || count < 0 ||
      start > items->array->length - count) { /* the reader rejects these */
    xs_puts(s, "null");
    return false;
  }
  xs_putc(s, '[');
  for (int64_t k = 0; k < count; k++) {
    if (k > 0) xs_putc(s, ',');
    ok &= render_json(s, items, start + k);
  }
  xs_putc(s, ']');
  return ok;
}

static bool render_struct(xs *s, const xc_node *n, int64_t i) {
  bool ok = true;
  int64_t child_index = n->array->offset + i; /* children share the parent's positions */
  xs_putc(s, '{');
  for (int64_t c = 0; c < n->n_children; c++) {
    const char *name = n->json_keys                  ? n->json_keys[c]
                       : n->children[c].schema->name ? n->children[c].schema->name
                                                     : "";
    if (c > 0) xs_putc(s, ',');
    xv_json_string(s, (const uint8_t *)name, (int64_t)strlen(name));
    xs_putc(s, ':');
    ok &= render_json(s, &n->children[c], child_index);
  }
  xs_putc(s, '}');
  return ok;
}

/* A map entry {"key": k, "value": v}, whatever the entry fields are named. */
static bool render_map(xs *s, const xc_node *n, int64_t i) {
  const xc_node *entries = &n->children[0];
  int64_t start = xc_offset(n, i), end = xc_offset(n, i + 1);
  bool ok = true;
  if (start < 0 || end < start || end > entries->array->length) {
    xs_puts(s, "null");
    return false;
  }
  xs_putc(s, '[');
  for (int64_t k = start; k < end; k++) {
    int64_t e = entries->array->offset + k;
    if (k > start) xs_putc(s, ',');
    xs_puts(s, "{\"key\":");
    ok &= render_json(s, &entries->children[0], e);
    xs_puts(s, ",\"value\":");
    ok &= render_json(s, &entries->children[1], e);
    xs_putc(s, '}');
  }
  xs_putc(s, ']');
  return ok;
}

static bool render_nested(xs *s, const xc_node *n, int64_t i) {
  switch (n->type.kind) {
    case IPC_KIND_STRUCT: return render_struct(s, n, i);
    case IPC_KIND_MAP: return render_map(s, n, i);
    case IPC_KIND_LIST: {
      int64_t start = xc_offset(n, i);
      return render_list_range(s, &n->children[0], start, xc_offset(n, i + 1) - start);
    }
    case IPC_KIND_LIST_VIEW: {
      int64_t size = xc_read_int(n, 2, i, n->type.large ? 64 : 32);
      return render_list_range(s, &n->children[0], xc_offset(n, i), size);
    }
    case IPC_KIND_FIXED_LIST: {
      int64_t width = n->type.width;
      return render_list_range(s, &n->children[0], (n->array->offset + i) * width, width);
    }
    default: return false;
  }
}

static bool is_nested(const xc_node *n) {
  switch (n->type.kind) {
    case IPC_KIND_STRUCT:
    case IPC_KIND_MAP:
    case IPC_KIND_LIST:
    case IPC_KIND_LIST_VIEW:
    case IPC_KIND_FIXED_LIST: return true;
    default: return false;
  }
}

/* Any value as JSON; null as null. */
static bool render_json(xs *s, const xc_node *n, int64_t i) {
  if (!resolve(&n, &i)) {
    xs_puts(s, "null");
    return false;
  }
  if (!xc_is_valid(n, i)) {
    xs_puts(s, "null");
    return true;
  }
  if (is_nested(n)) return render_nested(s, n, i);
  xv_scalar(s, n, i, true);
  return true;
}

/* RFC 4180: a field with a comma, quote or line break is quoted, and its
 * quotes doubled; the empty string is quoted to tell it from a null, and a
 * NUL byte is quoted too, to keep the field visibly whole. */
static bool csv_needs_quotes(const char *text, size_t len) {
  if (len == 0) return true;
  for (size_t k = 0; k < len; k++) {
    char c = text[k];
    if (c == ',' || c == '"' || c == '\r' || c == '\n' || c == '\0') return true;
  }
  return false;
}

static void put_csv_field(xs *out, const char *text, size_t len) {
  if (!csv_needs_quotes(text, len)) {
    xs_append(out, text, len);
    return;
  }
  xs_putc(out, '"');
  for (size_t k = 0; k < len; k++) {
    if (text[k] == '"') xs_putc(out, '"');
    xs_putc(out, text[k]);
  }
  xs_putc(out, '"');
}

/* Only text, binary and nested values can hold a comma, quote or line
 * break; the rest is written straight into the row. */
static bool may_need_quotes(const xc_node *n) {
  return is_nested(n) || n->type.kind == IPC_KIND_BINARY || n->type.kind == IPC_KIND_BINARY_VIEW ||
         n->type.kind == IPC_KIND_FIXED_BINARY;
}

static bool write_csv_cell(xs *out, xs *cell, const xc_node *n, int64_t i) {
  bool ok = resolve(&n, &i);
  if (!ok || !xc_is_valid(n, i)) return ok; /* a null: empty, unquoted */
  if (!may_need_quotes(n)) {
    xv_scalar(out, n, i, false);
    return true;
  }
  if (n->type.utf8) { /* the text as it is: no copy to look at it */
    int64_t size;
    const uint8_t *bytes = xc_binary(n, i, &size);
    put_csv_field(out, (const char *)bytes, (size_t)size);
    return true;
  }
  xs_clear(cell);
  if (is_nested(n))
    ok = render_nested(cell, n, i);
  else
    xv_scalar(cell, n, i, false);
  const char *text = xs_cstr(cell); /* "" when the cell could not grow */
  put_csv_field(out, text, xs_failed(cell) ? 0 : cell->len);
  return ok;
}

void xc_rows_header(xs *out, xc_row_format format, const xc_node *const *columns, int n_columns) {
  if (format != XC_ROWS_CSV) return;
  for (int c = 0; c < n_columns; c++) {
    const char *name = columns[c]->schema->name ? columns[c]->schema->name : "";
    if (c > 0) xs_putc(out, ',');
    put_csv_field(out, name, strlen(name));
  }
  xs_putc(out, '\n');
}

static bool write_csv_row(xs *out, xs *scratch, const xc_node *const *columns, int n_columns,
                          int64_t i) {
  bool ok = true;
  size_t start = out->len;
  for (int c = 0; c < n_columns; c++) {
    if (c > 0) xs_putc(out, ',');
    ok &= write_csv_cell(out, scratch, columns[c], i);
  }
  /* A row of one null would be an empty line, which CSV readers skip
   * (Python's csv, polars): it is "", as Python's csv module writes a row
   * of one empty field, so the row is kept, though it reads back as an
   * empty string (one field has no other way to be there and empty).
   * A row of no columns stays an empty line, like the header: "" would be
   * a field, a column that is not there. */
  if (n_columns > 0 && out->len == start) xs_puts(out, "\"\"");
  xs_putc(out, '\n');
  return ok;
}

/* The text before each column's value in a JSON row ('{' or ',', the
 * quoted key, ':'), made once for all the rows: key c is
 * keys->data[ends[c - 1] .. ends[c]).  Columns that share a name get
 * distinct keys (keys.h). */
static bool make_json_keys(xs *keys, size_t *ends, const xc_node *const *columns, int n_columns) {
  xs_clear(keys);
  const char **names = malloc((size_t)(n_columns > 0 ? n_columns : 1) * sizeof *names);
  char **unique = NULL;
  xchg_error err;
  if (names == NULL) return false;
  for (int c = 0; c < n_columns; c++) names[c] = columns[c]->schema->name;
  bool ok = xc_unique_keys(names, n_columns, &unique, &err) == XCHG_OK;
  for (int c = 0; ok && c < n_columns; c++) {
    const char *name = unique ? unique[c] : names[c] ? names[c] : "";
    xs_putc(keys, c > 0 ? ',' : '{');
    xv_json_string(keys, (const uint8_t *)name, (int64_t)strlen(name));
    xs_putc(keys, ':');
    ends[c] = keys->len;
  }
  xc_keys_free(unique, n_columns);
  free(names);
  return ok && !xs_failed(keys);
}

static bool write_json_row(xs *out, const xs *keys, const size_t *ends,
                           const xc_node *const *columns, int n_columns, int64_t i) {
  bool ok = true;
  if (n_columns == 0) xs_putc(out, '{');
  for (int c = 0; c < n_columns; c++) {
    size_t begin = c > 0 ? ends[c - 1] : 0;
    xs_append(out, keys->data + begin, ends[c] - begin);
    ok &= render_json(out, columns[c], i);
  }
  xs_puts(out, "}\n");
  return ok;
}

/* The rows one after another into out; what xc_rows_write does on one
 * thread and on each piece. */
static int64_t write_rows(xs *out, xs *scratch, xc_row_format format, const xc_node *const *columns,
                          int n_columns, int64_t first, int64_t count) {
  int64_t bad = -1;
  size_t *ends = NULL;
  if (format == XC_ROWS_JSON) {
    ends = malloc((size_t)(n_columns > 0 ? n_columns : 1) * sizeof *ends);
    if (ends == NULL || !make_json_keys(scratch, ends, columns, n_columns)) {
      free(ends);
      out->failed = true;
      return -1;
    }
  }
  for (int64_t r = 0; r < count && bad < 0 && !xs_failed(out);
       r++) { /* a failed write stops at once */
    bool ok = format == XC_ROWS_JSON
                  ? write_json_row(out, scratch, ends, columns, n_columns, first + r)
                  : write_csv_row(out, scratch, columns, n_columns, first + r);
    if (!ok) bad = r;
    xs_maybe_flush(out);
  }
  free(ends);
  if (xs_failed(scratch)) out->failed = true;
  return bad;
}

/* ---- pieces formatted on a pool --------------------------------------------- */

/* Fewer rows than this are not worth handing to other threads. */
#define PIECE_MIN_ROWS 1024

struct xc_rows_piece {
  xs text, scratch;
  int64_t first, count, bad;
};

typedef struct pieces_job {
  xc_rows_piece *pieces;
  xc_row_format format;
  const xc_node *const *columns;
  int n_columns;
} pieces_job;

static void format_piece(void *ctx, int64_t k) {
  pieces_job *job = ctx;
  xc_rows_piece *p = &job->pieces[k];
  xs_clear(&p->text);
  p->bad = write_rows(&p->text, &p->scratch, job->format, job->columns, job->n_columns, p->first,
                      p->count);
}

void xc_rows_writer_init(xc_rows_writer *w, xchg_pool *pool) {
  memset(w, 0, sizeof *w);
  xs_init(&w->scratch, NULL);
  int threads = xchg_pool_threads(pool);
  if (threads < 2) return;
  /* Two pieces a thread, so that a slow one does not hold the rest up. */
  w->pieces = calloc((size_t)threads * 2, sizeof *w->pieces);
  if (w->pieces == NULL) return; /* every row on the calling thread */
  w->pool = pool;
  w->n_pieces = threads * 2;
  for (int k = 0; k < w->n_pieces; k++) {
    xs_init(&w->pieces[k].text, NULL);
    xs_init(&w->pieces[k].scratch, NULL);
  }
}

void xc_rows_writer_free(xc_rows_writer *w) {
  for (int k = 0; k < w->n_pieces; k++) {
    xs_free(&w->pieces[k].text);
    xs_free(&w->pieces[k].scratch);
  }
  free(w->pieces);
  xs_free(&w->scratch);
  memset(w, 0, sizeof *w);
}

int64_t xc_rows_write(xc_rows_writer *w, xs *out, xc_row_format format,
                      const xc_node *const *columns, int n_columns, int64_t first, int64_t count) {
  if (w->pool == NULL || count < PIECE_MIN_ROWS)
    return write_rows(out, &w->scratch, format, columns, n_columns, first, count);
  int n = w->n_pieces;
  for (int k = 0; k < n; k++) {
    w->pieces[k].first = first + count * k / n;
    w->pieces[k].count = first + count * (k + 1) / n - w->pieces[k].first;
  }
  pieces_job job = {w->pieces, format, columns, n_columns};
  xchg_pool_run(w->pool, n, format_piece, &job);
  /* In order, up to the first bad row: the output is that of one thread. */
  for (int k = 0; k < n && !xs_failed(out); k++) {
    xc_rows_piece *p = &w->pieces[k];
    if (xs_failed(&p->text)) {
      out->failed = true;
      break;
    }
    xs_append(out, p->text.data, p->text.len);
    xs_maybe_flush(out);
    if (p->bad >= 0) return p->first - first + p->bad;
  }
  return -1;
}
