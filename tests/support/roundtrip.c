/* tests/support/roundtrip.c — see roundtrip.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/c_fixture.h"
#include "support/roundtrip.h"
#include "support/testutil.h"

/* ---- gold files ------------------------------------------------------------ */

static int add_path(char ***paths, size_t *count, size_t *cap, const char *p) {
  if (*count == *cap) {
    size_t n = *cap ? 2 * *cap : 64;
    char **items = realloc(*paths, n * sizeof *items);
    if (!items) return -1;
    *paths = items;
    *cap = n;
  }
  return ((*paths)[(*count)++] = strdup(p)) ? 0 : -1;
}

static int walk(const char *dir, char ***paths, size_t *count, size_t *cap) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct dirent *e;
  int rc = 0;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (stat(path, &st) != 0) continue;
    size_t n = strlen(e->d_name);
    if (S_ISDIR(st.st_mode))
      rc = walk(path, paths, count, cap);
    else if (strncmp(e->d_name, "generated_", 10) == 0 && n > 8 &&
             !strcmp(e->d_name + n - 8, ".json.gz"))
      rc = add_path(paths, count, cap, path);
  }
  closedir(d);
  return rc;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int rt_find_gold(const char *dir, char ***paths, size_t *count) {
  size_t cap = 0;
  *paths = NULL;
  *count = 0;
  if (walk(dir, paths, count, &cap) != 0) return -1;
  qsort(*paths, *count, sizeof **paths, by_name);
  return 0;
}

int rt_find_all_gold(char ***paths, size_t *count) {
  char dir[4096];
  tu_testdata_path(dir, sizeof dir, "arrow-gold");
  if (TU_CHECK(rt_find_gold(dir, paths, count) == 0 && *count > 0, "no gold files under %s", dir))
    return 0;
  rt_free_paths(*paths, *count);
  return -1;
}

void rt_free_paths(char **paths, size_t count) {
  for (size_t i = 0; i < count; i++) free(paths[i]);
  free(paths);
}

/* ---- reading ------------------------------------------------------------------ */

static void on_message(void *ctx, const xchg_message_info *info) {
  rt_data *d = ctx;
  if (info->kind == XCHG_MESSAGE_DICTIONARY) {
    d->dictionary_batches++;
    d->delta_batches += info->is_delta != 0;
  }
  if (info->kind != XCHG_MESSAGE_RECORD_BATCH) return;
  d->record_batches++;
  /* Only batches with buffers can show their codec. */
  if (d->check_codec && info->body_bytes > 0 && info->compression != d->expect_codec)
    d->codec_mismatch = 1;
  d->last_metadata[0] = '\0';
  if (info->custom_metadata) {
    int32_t n, klen, vlen;
    memcpy(&n, info->custom_metadata, 4);
    if (n > 0) {
      const char *p = info->custom_metadata + 4;
      memcpy(&klen, p, 4);
      memcpy(&vlen, p + 4 + klen, 4);
      snprintf(d->last_metadata, sizeof d->last_metadata, "%.*s=%.*s", klen, p + 4, vlen,
               p + 8 + klen);
    }
  }
}

static int read_all(xchg_ipc_reader *r, rt_data *d, char *msg, size_t msgsz) {
  xchg_error err;
  d->format = xchg_ipc_reader_format(r);
  xchg_ipc_reader_on_message(r, on_message, d);
  if (xchg_ipc_reader_schema(r, &d->schema, &err) != XCHG_OK) {
    snprintf(msg, msgsz, "schema: %s", err.message);
    return -1;
  }
  int64_t cap = 0;
  for (;;) {
    struct ArrowArray batch;
    xchg_status st = xchg_ipc_reader_next(r, &batch, &err);
    if (st != XCHG_OK) {
      snprintf(msg, msgsz, "batch %lld: %s", (long long)d->n, err.message);
      return -1;
    }
    if (!batch.release) return 0;
    if (d->n == cap) {
      cap = cap ? 2 * cap : 8;
      struct ArrowArray *b = realloc(d->batches, (size_t)cap * sizeof *b);
      if (!b) {
        batch.release(&batch);
        snprintf(msg, msgsz, "out of memory");
        return -1;
      }
      d->batches = b;
    }
    d->batches[d->n++] = batch;
  }
}

int rt_read_file(const char *path, rt_data *out, char *msg, size_t msgsz) {
  xchg_ipc_reader *r;
  xchg_error err;
  if (xchg_ipc_reader_open_file(path, NULL, &r, &err) != XCHG_OK) {
    snprintf(msg, msgsz, "open %s: %s", path, err.message);
    return -1;
  }
  int rc = read_all(r, out, msg, msgsz);
  xchg_ipc_reader_free(r);
  return rc;
}

static void unref_buf(void *ctx, const void *data, size_t size) {
  (void)data;
  (void)size;
  xchg_buf_unref(ctx);
}

int rt_read_buf(xchg_buf *buf, rt_data *out, char *msg, size_t msgsz) {
  xchg_ipc_reader *r;
  xchg_error err;
  xchg_buf_ref(buf);
  if (xchg_ipc_reader_open_memory(xchg_buf_data(buf), xchg_buf_size(buf), unref_buf, buf, NULL, &r,
                                  &err) != XCHG_OK) {
    snprintf(msg, msgsz, "open: %s", err.message);
    return -1;
  }
  int rc = read_all(r, out, msg, msgsz);
  xchg_ipc_reader_free(r);
  return rc;
}

void rt_data_free(rt_data *d) {
  for (int64_t i = 0; i < d->n; i++)
    if (d->batches[i].release) d->batches[i].release(&d->batches[i]);
  free(d->batches);
  if (d->schema.release) d->schema.release(&d->schema);
  memset(d, 0, sizeof *d);
}

void rt_gold_stream_path(const char *json_path, char *out, size_t outsz) {
  snprintf(out, outsz, "%.*s.stream", (int)(strlen(json_path) - strlen(".json.gz")), json_path);
}

int rt_load_gold(const char *json_path, arrow_json **doc, rt_data *src, char *msg, size_t msgsz) {
  char ipc[4096];
  memset(src, 0, sizeof *src);
  if (arrow_json_load(json_path, doc, msg, msgsz) != 0) return -1;
  rt_gold_stream_path(json_path, ipc, sizeof ipc);
  if (rt_read_file(ipc, src, msg, msgsz) != 0) {
    rt_data_free(src);
    arrow_json_free(*doc);
    *doc = NULL;
    return -1;
  }
  if (arrow_json_compare_schema(*doc, &src->schema, msg, msgsz) != 0)
    arrow_json_accept_canonical_map_names(*doc, 1);
  return 0;
}

int rt_gold_check_begin(const char *json_path, rt_gold_check *g) {
  char msg[2048];
  const char *slash = strrchr(json_path, '/');
  g->name = slash ? slash + 1 : json_path;
  if (rt_load_gold(json_path, &g->doc, &g->src, msg, sizeof msg) != 0) {
    TU_CHECK(0, "%s: %s", json_path, msg);
    return -1;
  }
  g->failed_before = tu_failed_count();
  return 0;
}

void rt_gold_check_end(rt_gold_check *g) {
  TU_CHECK(tu_failed_count() == g->failed_before, "%s: %d failed check(s)", g->name,
           tu_failed_count() - g->failed_before);
  rt_data_free(&g->src);
  arrow_json_free(g->doc);
}

/* ---- writing ------------------------------------------------------------------ */

int rt_write(const struct ArrowSchema *schema, const struct ArrowArray *batches, int64_t n,
             const xchg_ipc_write_options *opts, xchg_buf **out, char *msg, size_t msgsz) {
  xchg_ipc_writer *w;
  xchg_error err;
  *out = NULL;
  if (xchg_ipc_writer_open_memory(schema, opts, &w, &err) != XCHG_OK) {
    snprintf(msg, msgsz, "writer open: %s", err.message);
    return -1;
  }
  xchg_status st = XCHG_OK;
  for (int64_t i = 0; i < n && st == XCHG_OK; i++) st = xchg_ipc_writer_write(w, &batches[i], &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  if (st == XCHG_OK) *out = xchg_ipc_writer_take_memory(w);
  xchg_ipc_writer_free(w);
  if (st != XCHG_OK || !*out) {
    snprintf(msg, msgsz, "write: %s", st != XCHG_OK ? err.message : "no memory");
    return -1;
  }
  return 0;
}

/* ---- column sums ---------------------------------------------------------------- */

/* ---- the hand-built sample ------------------------------------------------------- */

static struct ArrowSchema schema_pool[64];
static struct ArrowArray array_pool[64];
static struct ArrowSchema *schema_kids[64][4];
static struct ArrowArray *array_kids[64][4];
static int n_schemas, n_arrays;

static struct ArrowSchema *sch(const char *format, const char *name, int64_t flags, int n,
                               struct ArrowSchema *k0, struct ArrowSchema *k1) {
  int i = n_schemas++;
  struct ArrowSchema *s = &schema_pool[i];
  schema_kids[i][0] = k0;
  schema_kids[i][1] = k1;
  tu_fixture_schema(s, format, name, n, schema_kids[i]);
  s->flags = flags;
  return s;
}

static struct ArrowArray *arr(int64_t length, int64_t nulls, int nb, const void *b0, const void *b1,
                              const void *b2, const void *b3, int n, struct ArrowArray *k0,
                              struct ArrowArray *k1) {
  static const void *buffer_pool[64][4];
  int i = n_arrays++;
  struct ArrowArray *a = &array_pool[i];
  buffer_pool[i][0] = b0;
  buffer_pool[i][1] = b1;
  buffer_pool[i][2] = b2;
  buffer_pool[i][3] = b3;
  array_kids[i][0] = k0;
  array_kids[i][1] = k1;
  tu_fixture_array(a, length, nb, buffer_pool[i], n, array_kids[i]);
  a->null_count = nulls;
  return a;
}

void rt_sample(struct ArrowSchema **schema_out, struct ArrowArray **batch_out) {
  static struct ArrowSchema *root_schema;
  static struct ArrowArray *root_array;
  if (root_schema) {
    *schema_out = root_schema;
    *batch_out = root_array;
    return;
  }
  static struct ArrowSchema *cols_s[16];
  static struct ArrowArray *cols_a[16];
  int c = 0;
  const int64_t N = ARROW_FLAG_NULLABLE;

  /* utf8 view: inline, null, two data buffers, empty */
  static uint8_t views[6 * 16];
  static const char data0[] = "a string longer than twelve";
  static const char data1[] = "xxanother long string value!";
  static const int64_t view_sizes[2] = {sizeof data0 - 1, sizeof data1 - 1};
  static const uint8_t valid_view[1] = {0x3d}; /* row 1 null */
  tu_fixture_view(views + 0, "short", 0, 0);
  tu_fixture_view(views + 32, data0, 0, 0);
  tu_fixture_view(views + 48, "", 0, 0);
  tu_fixture_view(views + 64, data1 + 2, 1, 2);
  tu_fixture_view(views + 80, "tiny", 0, 0);
  cols_s[c] = sch("vu", "utf8_view", N, 0, NULL, NULL);
  static const void *view_buffers[5];
  view_buffers[0] = valid_view;
  view_buffers[1] = views;
  view_buffers[2] = data0;
  view_buffers[3] = data1;
  view_buffers[4] = view_sizes;
  cols_a[c] = arr(6, 1, 5, NULL, NULL, NULL, NULL, 0, NULL, NULL);
  cols_a[c]->buffers = view_buffers;
  c++;

  /* binary view, all inline, no data buffers */
  static uint8_t bviews[6 * 16];
  const char *inl[6] = {"ab", "", "c", "dddd", "e", "ffffffffffff"};
  for (int i = 0; i < 6; i++) tu_fixture_view(bviews + 16 * i, inl[i], 0, 0);
  static const int64_t no_sizes[1] = {0};
  cols_s[c] = sch("vz", "binary_view", N, 0, NULL, NULL);
  cols_a[c++] = arr(6, 0, 3, NULL, bviews, no_sizes, NULL, 0, NULL, NULL);

  /* list view of int32 */
  static const int32_t lv_values[7] = {10, 20, 30, 40, 50, 60, 70};
  static const int32_t lv_offsets[6] = {4, 0, 2, 0, 1, 6}, lv_sizes[6] = {2, 2, 0, 0, 3, 1};
  static const uint8_t lv_valid[1] = {0x37}; /* row 3 null */
  struct ArrowSchema *lv_item = sch("i", "item", N, 0, NULL, NULL);
  cols_s[c] = sch("+vl", "list_view", N, 1, lv_item, NULL);
  cols_a[c++] = arr(6, 1, 3, lv_valid, lv_offsets, lv_sizes, NULL, 1,
                    arr(7, 0, 2, NULL, lv_values, NULL, NULL, 0, NULL, NULL), NULL);

  /* run-end encoded utf8: runs end at 2, 3, 6 */
  static const int32_t run_ends[3] = {2, 3, 6};
  static const int32_t ree_offsets[4] = {0, 1, 1, 3};
  static const uint8_t ree_valid[1] = {0x5};
  struct ArrowSchema *ends_s = sch("i", "run_ends", 0, 0, NULL, NULL);
  struct ArrowSchema *vals_s = sch("u", "values", N, 0, NULL, NULL);
  cols_s[c] = sch("+r", "ree", 0, 2, ends_s, vals_s);
  cols_a[c++] = arr(6, 0, 0, NULL, NULL, NULL, NULL, 2,
                    arr(3, 0, 2, NULL, run_ends, NULL, NULL, 0, NULL, NULL),
                    arr(3, 1, 3, ree_valid, ree_offsets, "xzz", NULL, 0, NULL, NULL));

  /* decimal32 and decimal64 */
  static const int32_t dec32[6] = {12345, -1, 0, 7, 123, 99};
  static const int64_t dec64[6] = {-123456789012345LL, 1, 2, 3, 4, 5};
  static const uint8_t dec_valid[1] = {0x2f}; /* row 4 null */
  cols_s[c] = sch("d:9,2,32", "dec32", N, 0, NULL, NULL);
  cols_a[c++] = arr(6, 1, 2, dec_valid, dec32, NULL, NULL, 0, NULL, NULL);
  cols_s[c] = sch("d:18,3,64", "dec64", N, 0, NULL, NULL);
  cols_a[c++] = arr(6, 0, 2, NULL, dec64, NULL, NULL, 0, NULL, NULL);

  /* month-day-nano interval */
  static uint8_t mdn[6 * 16];
  for (int i = 0; i < 6; i++) {
    int32_t m = i - 2, d = 30 * i;
    int64_t ns = 1000000007LL * (i + 1);
    memcpy(mdn + 16 * i, &m, 4);
    memcpy(mdn + 16 * i + 4, &d, 4);
    memcpy(mdn + 16 * i + 8, &ns, 8);
  }
  cols_s[c] = sch("tin", "interval_mdn", N, 0, NULL, NULL);
  cols_a[c++] = arr(6, 0, 2, NULL, mdn, NULL, NULL, 0, NULL, NULL);

  /* dense union of int64 (type 3) and utf8 (type 7) */
  static const int8_t du_types[6] = {3, 7, 7, 3, 7, 7};
  static const int32_t du_offsets[6] = {0, 0, 1, 1, 2, 3};
  static const int64_t du_longs[2] = {100, -200};
  static const int32_t du_str_offsets[5] = {0, 1, 2, 3, 4};
  cols_s[c] = sch("+ud:3,7", "dense_union", 0, 2, sch("l", "l", N, 0, NULL, NULL),
                  sch("u", "s", N, 0, NULL, NULL));
  cols_a[c++] = arr(6, 0, 2, du_types, du_offsets, NULL, NULL, 2,
                    arr(2, 0, 2, NULL, du_longs, NULL, NULL, 0, NULL, NULL),
                    arr(4, 0, 3, NULL, du_str_offsets, "pqrs", NULL, 0, NULL, NULL));

  /* sparse union of int32 (0) and bool (1) */
  static const int8_t su_types[6] = {0, 1, 0, 1, 1, 0};
  static const int32_t su_ints[6] = {1, 2, 3, 4, 5, 6};
  static const uint8_t su_bools[1] = {0x1a};
  cols_s[c] = sch("+us:0,1", "sparse_union", 0, 2, sch("i", "i", N, 0, NULL, NULL),
                  sch("b", "b", N, 0, NULL, NULL));
  cols_a[c++] = arr(6, 0, 1, su_types, NULL, NULL, NULL, 2,
                    arr(6, 0, 2, NULL, su_ints, NULL, NULL, 0, NULL, NULL),
                    arr(6, 0, 2, NULL, su_bools, NULL, NULL, 0, NULL, NULL));

  /* dictionary: int16 indices into utf8 */
  static const int16_t dict_idx[6] = {2, 0, 1, 1, 1, 0};
  static const uint8_t dict_valid[1] = {0x3b}; /* row 2 null */
  static const int32_t dict_offsets[4] = {0, 3, 8, 12};
  struct ArrowSchema *ds = sch("s", "dict", N, 0, NULL, NULL);
  ds->dictionary = sch("u", NULL, N, 0, NULL, NULL);
  cols_s[c] = ds;
  cols_a[c] = arr(6, 1, 2, dict_valid, dict_idx, NULL, NULL, 0, NULL, NULL);
  cols_a[c++]->dictionary = arr(3, 0, 3, NULL, dict_offsets, "redgreenblue", NULL, 0, NULL, NULL);

  /* fixed-size list of 2 int16, row 2 null */
  static const int16_t fsl_values[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  static const uint8_t fsl_valid[1] = {0x3b};
  cols_s[c] = sch("+w:2", "fsl", N, 1, sch("s", "item", N, 0, NULL, NULL), NULL);
  cols_a[c++] = arr(6, 1, 1, fsl_valid, NULL, NULL, NULL, 1,
                    arr(12, 0, 2, NULL, fsl_values, NULL, NULL, 0, NULL, NULL), NULL);

  /* half floats and a timestamp with a time zone */
  static const uint16_t halves[6] = {0x3c00, 0xc000, 0x7bff, 0, 0x3555, 0x8001};
  cols_s[c] = sch("e", "half", N, 0, NULL, NULL);
  cols_a[c++] = arr(6, 0, 2, NULL, halves, NULL, NULL, 0, NULL, NULL);
  static const int64_t ts[6] = {0, 1, -1, 1700000000000000LL, 5, 6};
  cols_s[c] = sch("tsu:Europe/Paris", "ts", N, 0, NULL, NULL);
  cols_a[c++] = arr(6, 0, 2, NULL, ts, NULL, NULL, 0, NULL, NULL);

  root_schema = sch("+s", "", 0, 0, NULL, NULL);
  root_schema->n_children = c;
  root_schema->children = cols_s;
  root_array = arr(6, 0, 1, NULL, NULL, NULL, NULL, 0, NULL, NULL);
  root_array->n_children = c;
  root_array->children = cols_a;
  *schema_out = root_schema;
  *batch_out = root_array;
}
