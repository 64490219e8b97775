/* tests/test_gold.c — xchg's IPC reader against Apache Arrow's gold files.
 *
 * Arrow's integration suite ships, for every generated_NAME case, the data
 * as JSON (generated_NAME.json.gz) and as Arrow IPC written by an Arrow
 * implementation (generated_NAME.stream, generated_NAME.arrow_file).  For
 * each IPC file this test decodes it with xchg in every way a user can —
 * a memory map, a plain file descriptor (with trusted-input validation), a
 * memory map decoded on a thread pool, a pipe fed in odd-sized chunks (the
 * incremental path, streams only), caller-owned memory whose batches must
 * outlive the reader — and compares the schema and every batch, value by
 * value, with the JSON (tests/support/arrow_json.c).  The file format is
 * also read by random access, last batch first.  Every xchg_buf must be
 * gone once everything is released.
 *
 * Usage: test_gold [DIR]   (default: $XCHG_TESTDATA/arrow-gold)
 * Prints one line per IPC file and "N passed, M failed"; exits 1 on any
 * failure.
 *
 * Self-checks prove that the comparator can fail: for every file, a schema
 * with a renamed field, every decoded array with one bit flipped in turn
 * (a validity bit or union type id, an offset, a value; in copies) and a
 * batch compared with the JSON of the batch before it must all be reported
 * as mismatches.  Types the gold files lack (float16, decimal32/64,
 * month_day_nano, views, list views, run-end encoding) are checked on arrays
 * built by hand from the format specification. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/arrow_json.h"
#include "support/roundtrip.h"
#include "support/testutil.h"
#include "xchg/xchg.h"

#define MSG_SIZE 2048

/* ------------------------------------------------------------------------ */
/* Reading one IPC file and comparing it with its JSON                       */

/* The message into msg (MSG_SIZE bytes), then -1. */

static void release_schema(struct ArrowSchema *s) {
  if (s->release) s->release(s);
}

static void release_array(struct ArrowArray *a) {
  if (a->release) a->release(a);
}

/* Reads every batch with xchg_ipc_reader_next, comparing each as it comes.
 * When keep is non-NULL the batches are handed back there instead of being
 * released (the caller compares them after closing the reader). */
static int check_sequential(const arrow_json *doc, xchg_ipc_reader *r,
                            const struct ArrowSchema *schema, struct ArrowArray *keep, char *msg) {
  int64_t expected = arrow_json_num_batches(doc), n = 0;
  for (;;) {
    struct ArrowArray batch;
    xchg_error err;
    memset(&batch, 0, sizeof(batch));
    xchg_status st = xchg_ipc_reader_next(r, &batch, &err);
    if (st != XCHG_OK)
      return tu_errorf(msg, MSG_SIZE, "next (batch %" PRId64 "): %s: %s", n, xchg_status_name(st),
                       err.message);
    if (!batch.release) break;
    if (n >= expected) {
      release_array(&batch);
      return tu_errorf(msg, MSG_SIZE,
                       "the reader gives more than the %" PRId64 " batches of the JSON", expected);
    }
    if (keep) {
      keep[n++] = batch;
      continue;
    }
    int rc = arrow_json_compare_batch(doc, n, schema, &batch, msg, MSG_SIZE);
    release_array(&batch);
    if (rc != 0) return -1;
    n++;
  }
  if (n != expected)
    return tu_errorf(msg, MSG_SIZE, "the reader gives %" PRId64 " batches, the JSON has %" PRId64,
                     n, expected);
  /* The end stays the end. */
  struct ArrowArray again;
  xchg_error err;
  memset(&again, 0, sizeof(again));
  if (xchg_ipc_reader_next(r, &again, &err) != XCHG_OK || again.release) {
    release_array(&again);
    return tu_errorf(msg, MSG_SIZE, "next after the end does not report the end again");
  }
  return 0;
}

/* File format: random access, last batch first. */
static int check_random_access(const arrow_json *doc, xchg_ipc_reader *r,
                               const struct ArrowSchema *schema, char *msg) {
  int64_t expected = arrow_json_num_batches(doc);
  if (xchg_ipc_reader_num_batches(r) != expected)
    return tu_errorf(msg, MSG_SIZE, "num_batches is %" PRId64 ", the JSON has %" PRId64,
                     xchg_ipc_reader_num_batches(r), expected);
  for (int64_t i = expected - 1; i >= 0; i--) {
    struct ArrowArray batch;
    xchg_error err;
    memset(&batch, 0, sizeof(batch));
    xchg_status st = xchg_ipc_reader_read_batch(r, i, &batch, &err);
    if (st != XCHG_OK)
      return tu_errorf(msg, MSG_SIZE, "read_batch(%" PRId64 "): %s: %s", i, xchg_status_name(st),
                       err.message);
    int rc = arrow_json_compare_batch(doc, i, schema, &batch, msg, MSG_SIZE);
    release_array(&batch);
    if (rc != 0) {
      strncat(msg, " (random access)", MSG_SIZE - strlen(msg) - 1);
      return -1;
    }
  }
  return 0;
}

/* Everything about one open reader; closes it. */
static int check_reader(const arrow_json *doc, xchg_ipc_reader *r, int is_file, int random_access,
                        char *msg) {
  struct ArrowSchema schema;
  xchg_error err;
  int rc = -1;
  memset(&schema, 0, sizeof(schema));
  xchg_ipc_format want = is_file ? XCHG_IPC_FILE : XCHG_IPC_STREAM;
  if (xchg_ipc_reader_format(r) != want) {
    tu_errorf(msg, MSG_SIZE, "detected as the %s format", is_file ? "stream" : "file");
  } else if (xchg_ipc_reader_schema(r, &schema, &err) != XCHG_OK) {
    tu_errorf(msg, MSG_SIZE, "schema: %s", err.message);
  } else if (arrow_json_compare_schema(doc, &schema, msg, MSG_SIZE) == 0 &&
             check_sequential(doc, r, &schema, NULL, msg) == 0 &&
             (!random_access || check_random_access(doc, r, &schema, msg) == 0)) {
    rc = 0;
  }
  release_schema(&schema);
  xchg_ipc_reader_free(r);
  return rc;
}

/* Pipe feeding: a thread writes the file in chunks of varying, odd sizes so
 * that message boundaries fall anywhere within a read. */
typedef struct feeder {
  int fd;
  const uint8_t *data;
  size_t size;
} feeder;

static void *feed_pipe(void *arg) {
  feeder *f = arg;
  static const size_t chunks[] = {1, 7, 8, 13, 4096, 3, 65536, 511};
  size_t at = 0, k = 0;
  while (at < f->size) {
    size_t n = chunks[k++ % (sizeof(chunks) / sizeof(chunks[0]))];
    if (n > f->size - at) n = f->size - at;
    ssize_t put = write(f->fd, f->data + at, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) break; /* the reader closed its end early (EPIPE) */
    at += (size_t)put;
  }
  close(f->fd);
  return NULL;
}

static int check_pipe(const arrow_json *doc, const uint8_t *data, size_t size, int is_file,
                      char *msg) {
  int fds[2];
  if (pipe(fds) != 0) return tu_errorf(msg, MSG_SIZE, "pipe: %s", strerror(errno));
  feeder f = {fds[1], data, size};
  pthread_t thread;
  if (pthread_create(&thread, NULL, feed_pipe, &f) != 0) {
    close(fds[0]);
    close(fds[1]);
    return tu_errorf(msg, MSG_SIZE, "pthread_create failed");
  }
  xchg_ipc_reader *r;
  xchg_error err;
  int rc;
  xchg_source *src;
  xchg_status st = xchg_source_from_fd(fds[0], 1, &src, &err);
  if (st != XCHG_OK)
    close(fds[0]); /* not taken over: closing it stops the feeder */
  else
    st = xchg_ipc_reader_open(src, NULL, &r, &err);
  if (st != XCHG_OK)
    rc = tu_errorf(msg, MSG_SIZE, "open: %s: %s", xchg_status_name(st), err.message);
  else
    rc = check_reader(doc, r, is_file, 0, msg);
  pthread_join(thread, NULL);
  return rc;
}

static int check_fd(const arrow_json *doc, const char *path, int is_file,
                    const xchg_ipc_read_options *opts, char *msg) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return tu_errorf(msg, MSG_SIZE, "open: %s", strerror(errno));
  xchg_ipc_reader *r;
  xchg_error err;
  xchg_source *src;
  xchg_status st = xchg_source_from_fd(fd, 1, &src, &err);
  if (st != XCHG_OK)
    close(fd); /* not taken over */
  else
    st = xchg_ipc_reader_open(src, opts, &r, &err);
  if (st != XCHG_OK)
    return tu_errorf(msg, MSG_SIZE, "open: %s: %s", xchg_status_name(st), err.message);
  return check_reader(doc, r, is_file, is_file, msg);
}

static int check_mmap(const arrow_json *doc, const char *path, int is_file,
                      const xchg_ipc_read_options *opts, char *msg) {
  xchg_ipc_reader *r;
  xchg_error err;
  xchg_status st = xchg_ipc_reader_open_file(path, opts, &r, &err);
  if (st != XCHG_OK)
    return tu_errorf(msg, MSG_SIZE, "open: %s: %s", xchg_status_name(st), err.message);
  return check_reader(doc, r, is_file, is_file, msg);
}

/* Caller-owned memory: the batches must stay valid after the reader is
 * closed (they keep the input alive), and the input's release callback must
 * run exactly once, after the last batch is gone. */
typedef struct owned_input {
  uint8_t *data;
  int releases;
} owned_input;

static void release_owned(void *ctx, const void *data, size_t size) {
  owned_input *in = ctx;
  (void)data;
  (void)size;
  in->releases++;
  free(in->data);
  in->data = NULL;
}

static int check_memory(const arrow_json *doc, const uint8_t *data, size_t size, char *msg) {
  owned_input in = {malloc(size ? size : 1), 0};
  if (!in.data) return tu_errorf(msg, MSG_SIZE, "out of memory");
  memcpy(in.data, data, size);
  int64_t n = arrow_json_num_batches(doc);
  struct ArrowArray *batches = calloc((size_t)n + 1, sizeof(*batches));
  struct ArrowSchema schema;
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  int rc = -1;
  memset(&schema, 0, sizeof(schema));
  xchg_status st = xchg_ipc_reader_open_memory(in.data, size, release_owned, &in, NULL, &r, &err);
  if (!batches) {
    tu_errorf(msg, MSG_SIZE, "out of memory");
  } else if (st != XCHG_OK) {
    r = NULL;
    tu_errorf(msg, MSG_SIZE, "open: %s: %s", xchg_status_name(st), err.message);
  } else if (xchg_ipc_reader_schema(r, &schema, &err) != XCHG_OK) {
    tu_errorf(msg, MSG_SIZE, "schema: %s", err.message);
  } else if (check_sequential(doc, r, &schema, batches, msg) == 0) {
    xchg_ipc_reader_free(r);
    r = NULL;
    rc = 0;
    for (int64_t i = 0; rc == 0 && i < n; i++)
      rc = arrow_json_compare_batch(doc, i, &schema, &batches[i], msg, MSG_SIZE);
    if (rc != 0) strncat(msg, " (compared after closing the reader)", MSG_SIZE - strlen(msg) - 1);
  }
  xchg_ipc_reader_free(r);
  for (int64_t i = 0; batches && i < n; i++) release_array(&batches[i]);
  free(batches);
  release_schema(&schema);
  if (st == XCHG_OK && in.releases != 1 && rc == 0)
    rc = tu_errorf(msg, MSG_SIZE, "the input's release callback ran %d times, expected once",
                   in.releases);
  if (in.releases == 0) free(in.data); /* already reported; do not leak */
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Self-check: the comparator must notice a wrong schema and a wrong value   */

typedef struct self_check_stats {
  int schema_checks, wrong_batch_checks;
  int value_checks, nested_value_checks, dictionary_value_checks;
} self_check_stats;

/* Width in bits of the values of a fixed-width format, or 0. */
static int fixed_width_bits(const char *f) {
  if (!f || !f[0]) return 0;
  if (!f[1]) {
    switch (f[0]) {
      case 'b': return 1;
      case 'c':
      case 'C': return 8;
      case 's':
      case 'S':
      case 'e': return 16;
      case 'i':
      case 'I':
      case 'f': return 32;
      case 'l':
      case 'L':
      case 'g': return 64;
      default: return 0;
    }
  }
  if (f[0] == 'd' && f[1] == ':') { /* d:p,s or d:p,s,bits */
    const char *second = strchr(f, ',');
    const char *third = second ? strchr(second + 1, ',') : NULL;
    return third ? atoi(third + 1) : 128;
  }
  if (f[0] == 'w' && f[1] == ':') return 8 * atoi(f + 2);
  if (f[0] == 't') {
    switch (f[1]) {
      case 'd': return f[2] == 'D' ? 32 : 64;
      case 't': return (f[2] == 's' || f[2] == 'm') ? 32 : 64;
      case 's':
      case 'D': return 64;
      case 'i': return f[2] == 'M' ? 32 : f[2] == 'D' ? 64 : 128;
      default: return 0;
    }
  }
  return 0;
}

/* Width of the offsets of a binary/utf8 format, or 0. */
static int binary_offset_width(const char *f) {
  if (!f) return 0;
  if (strcmp(f, "z") == 0 || strcmp(f, "u") == 0) return 4;
  if (strcmp(f, "Z") == 0 || strcmp(f, "U") == 0) return 8;
  return 0;
}

/* One mutation of a decoded batch: the target-th mutable array in the tree
 * (preorder: node, children, dictionary) gets one bit of one valid value
 * flipped, in copies; the decoded batch itself is never written. */
typedef struct mutation {
  int64_t target, seen;
  int done, oom;
  char path[512];   /* schema names down to the mutated array */
  const char *what; /* the kind of change */
  void **allocs;
  size_t n_allocs, cap_allocs;
} mutation;

static void *mutation_alloc(mutation *m, size_t size) {
  void *p = NULL;
  if (m->n_allocs == m->cap_allocs) {
    size_t cap = m->cap_allocs ? 2 * m->cap_allocs : 16;
    void **allocs = realloc(m->allocs, cap * sizeof(*allocs));
    if (allocs) {
      m->allocs = allocs;
      m->cap_allocs = cap;
    }
  }
  if (m->n_allocs < m->cap_allocs && (p = malloc(size ? size : 1)) != NULL)
    m->allocs[m->n_allocs++] = p;
  else
    m->oom = 1;
  return p;
}

static void mutation_free(mutation *m) {
  for (size_t i = 0; i < m->n_allocs; i++) free(m->allocs[i]);
  free(m->allocs);
}

static int slot_is_valid(const struct ArrowArray *a, int64_t i) {
  const uint8_t *bits = a->buffers[0];
  int64_t at = a->offset + i;
  return !bits || ((bits[at >> 3] >> (at & 7)) & 1);
}

static int64_t read_offset(const void *offsets, int width, int64_t i) {
  if (width == 4) {
    int32_t v;
    memcpy(&v, (const uint8_t *)offsets + 4 * i, 4);
    return v;
  }
  int64_t v;
  memcpy(&v, (const uint8_t *)offsets + 8 * i, 8);
  return v;
}

/* Replaces buffer `index` of a (a shallow copy) by a copy of its first
 * `extent` bytes with bit `bit` flipped. */
static int flip_bit_in_copy(struct ArrowArray *a, int index, size_t extent, int64_t bit,
                            mutation *m) {
  const void **buffers = mutation_alloc(m, (size_t)a->n_buffers * sizeof(*buffers));
  uint8_t *copy = mutation_alloc(m, extent);
  if (!buffers || !copy) return 0;
  memcpy(copy, a->buffers[index], extent);
  copy[bit >> 3] ^= (uint8_t)(1u << (bit & 7));
  memcpy(buffers, a->buffers, (size_t)a->n_buffers * sizeof(*buffers));
  buffers[index] = copy;
  a->buffers = buffers;
  return 1;
}

/* Width of the offsets in buffer 1 of a format that has them there. */
static int offsets_width(const char *f) {
  if (binary_offset_width(f)) return binary_offset_width(f);
  if (strcmp(f, "+l") == 0 || strcmp(f, "+m") == 0 || strncmp(f, "+ud:", 4) == 0) return 4;
  if (strcmp(f, "+L") == 0) return 8;
  return 0;
}

/* Where the first valid value of a fixed-width or binary array lives:
 * sets *bit and *extent (bytes of buffer *index read by a comparison).
 * Returns 0 when there is no such value. */
static int first_value_bit(const struct ArrowSchema *s, const struct ArrowArray *a, int *index,
                           int64_t *bit, size_t *extent) {
  int bits = fixed_width_bits(s->format), width = binary_offset_width(s->format);
  *index = bits ? 1 : 2;
  if ((!bits && !width) || a->n_buffers != *index + 1 || !a->buffers[*index]) return 0;
  for (int64_t i = 0; i < a->length; i++) {
    if (!slot_is_valid(a, i)) continue;
    if (bits) {
      *bit = (a->offset + i) * bits;
      *extent = (size_t)(((a->offset + a->length) * bits + 7) / 8);
      return 1;
    }
    int64_t begin = read_offset(a->buffers[1], width, a->offset + i);
    if (read_offset(a->buffers[1], width, a->offset + i + 1) > begin) {
      *bit = begin * 8;
      *extent = (size_t)read_offset(a->buffers[1], width, a->offset + a->length);
      return 1;
    }
  }
  return 0;
}

/* The mutations one array offers, in order: its first bit of buffer 0
 * (a validity bit, or a union's first type id), the first bit of its
 * first offset, the lowest bit of its first valid value.  Applies the one
 * that is the target; returns 1 when it did. */
static int mutate_node(const struct ArrowSchema *s, struct ArrowArray *a, mutation *m) {
  if (a->length <= 0 || a->n_buffers < 1 || !a->buffers) return 0;
  int is_union = strncmp(s->format, "+u", 2) == 0;
  if (a->buffers[0] && m->seen++ == m->target) {
    m->what = is_union ? "type id" : "validity bit";
    size_t extent =
        is_union ? (size_t)(a->offset + a->length) : (size_t)(a->offset + a->length + 7) / 8;
    return flip_bit_in_copy(a, 0, extent, is_union ? a->offset * 8 : a->offset, m);
  }
  int width = offsets_width(s->format);
  if (width && a->n_buffers >= 2 && a->buffers[1] && m->seen++ == m->target) {
    m->what = "offset";
    int dense = strncmp(s->format, "+ud:", 4) == 0;
    size_t extent = (size_t)(a->offset + a->length + !dense) * (size_t)width;
    return flip_bit_in_copy(a, 1, extent, a->offset * width * 8, m);
  }
  int index;
  int64_t bit;
  size_t extent;
  if (first_value_bit(s, a, &index, &bit, &extent) && m->seen++ == m->target) {
    m->what = "value";
    return flip_bit_in_copy(a, index, extent, bit, m);
  }
  return 0;
}

/* named: append the array's name to the path (not for a dictionary, which
 * the path already names). */
static void mutate_tree(const struct ArrowSchema *s, const struct ArrowArray *a,
                        struct ArrowArray *out, mutation *m, int named) {
  size_t mark = strlen(m->path);
  *out = *a;
  if (named)
    snprintf(m->path + mark, sizeof(m->path) - mark, "%s%s", mark ? "." : "",
             s->name ? s->name : "");
  if (mutate_node(s, out, m)) {
    m->done = 1;
    return;
  }
  if (a->n_children > 0 && a->n_children == s->n_children) {
    struct ArrowArray **children = mutation_alloc(m, (size_t)a->n_children * sizeof(*children));
    struct ArrowArray *copies = mutation_alloc(m, (size_t)a->n_children * sizeof(*copies));
    if (!children || !copies) return;
    for (int64_t k = 0; k < a->n_children; k++) {
      children[k] = a->children[k];
      if (!m->done && !m->oom) {
        mutate_tree(s->children[k], a->children[k], &copies[k], m, 1);
        children[k] = &copies[k];
      }
    }
    out->children = children;
  }
  if (!m->done && !m->oom && a->dictionary && s->dictionary) {
    struct ArrowArray *copy = mutation_alloc(m, sizeof(*copy));
    if (!copy) return;
    size_t before = strlen(m->path);
    snprintf(m->path + before, sizeof(m->path) - before, "{dictionary}");
    mutate_tree(s->dictionary, a->dictionary, copy, m, 0);
    out->dictionary = copy;
  }
  if (!m->done) m->path[mark] = '\0';
}

/* Every value-holding array of batch bi, in turn, with one value changed:
 * the comparator must report each change.  Returns -1 when one went
 * unnoticed. */
static int mutate_every_array(const arrow_json *doc, int64_t bi, const struct ArrowSchema *schema,
                              const struct ArrowArray *batch, self_check_stats *stats, char *msg) {
  for (int64_t target = 0;; target++) {
    mutation m;
    struct ArrowArray bad;
    char why[MSG_SIZE];
    memset(&m, 0, sizeof(m));
    m.target = target;
    mutate_tree(schema, batch, &bad, &m, 0);
    int rc = 0;
    if (m.oom)
      rc = tu_errorf(msg, MSG_SIZE, "self-check: out of memory");
    else if (m.done && arrow_json_compare_batch(doc, bi, schema, &bad, why, sizeof(why)) == 0)
      rc = tu_errorf(msg, MSG_SIZE,
                     "self-check: a changed %s in batch %" PRId64 ", array %s went unnoticed",
                     m.what, bi, m.path);
    int done = m.done;
    if (done && rc == 0) {
      stats->value_checks++;
      stats->nested_value_checks += strchr(m.path, '.') != NULL;
      stats->dictionary_value_checks += strstr(m.path, "{dictionary}") != NULL;
    }
    mutation_free(&m);
    if (rc != 0) return -1;
    if (!done) return 0;
  }
}

static int self_check(const arrow_json *doc, const char *path, self_check_stats *stats, char *msg) {
  xchg_ipc_reader *r;
  xchg_error err;
  struct ArrowSchema schema;
  if (xchg_ipc_reader_open_file(path, NULL, &r, &err) != XCHG_OK)
    return tu_errorf(msg, MSG_SIZE, "self-check: open: %s", err.message);
  memset(&schema, 0, sizeof(schema));
  int rc = 0;
  if (xchg_ipc_reader_schema(r, &schema, &err) != XCHG_OK) {
    xchg_ipc_reader_free(r);
    return tu_errorf(msg, MSG_SIZE, "self-check: schema: %s", err.message);
  }
  if (schema.n_children > 0) { /* rename the first field in a copy */
    struct ArrowSchema renamed = *schema.children[0], copy = schema;
    struct ArrowSchema **children = malloc((size_t)schema.n_children * sizeof(*children));
    if (!children) {
      rc = tu_errorf(msg, MSG_SIZE, "out of memory");
    } else {
      memcpy(children, schema.children, (size_t)schema.n_children * sizeof(*children));
      renamed.name = "renamed by the self-check";
      children[0] = &renamed;
      copy.children = children;
      char why[MSG_SIZE];
      if (arrow_json_compare_schema(doc, &copy, why, sizeof(why)) == 0)
        rc = tu_errorf(msg, MSG_SIZE, "self-check: a renamed field went unnoticed");
      else
        stats->schema_checks++;
      free(children);
    }
  }
  struct ArrowArray previous;
  memset(&previous, 0, sizeof(previous));
  for (int64_t bi = 0; rc == 0; bi++) {
    struct ArrowArray batch;
    memset(&batch, 0, sizeof(batch));
    if (xchg_ipc_reader_next(r, &batch, &err) != XCHG_OK || !batch.release) break;
    rc = mutate_every_array(doc, bi, &schema, &batch, stats, msg);
    /* A batch of another length must not match the previous JSON batch. */
    if (rc == 0 && previous.release && previous.length != batch.length) {
      char why[MSG_SIZE];
      if (arrow_json_compare_batch(doc, bi - 1, &schema, &batch, why, sizeof(why)) == 0)
        rc = tu_errorf(msg, MSG_SIZE,
                       "self-check: batch %" PRId64 " compared equal to the JSON's batch %" PRId64,
                       bi, bi - 1);
      else
        stats->wrong_batch_checks++;
    }
    release_array(&previous);
    previous = batch;
  }
  release_array(&previous);
  release_schema(&schema);
  xchg_ipc_reader_free(r);
  return rc;
}

/* ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------ */
/* Comparator self-test for types the gold files lack                        */

/* The gold files predate float16 columns, decimal32/64, month-day-nano
 * intervals, string views, list views and run-end encoding, so the
 * comparator's handling of them is tested here on arrays built by hand from
 * the format specification (IEEE half floats, two's complement, 16-byte
 * views), never from xchg's output. */
static const char new_types_json[] =
    "{\"schema\": {\"fields\": ["
    " {\"name\": \"h\", \"nullable\": true, \"children\": [],"
    "  \"type\": {\"name\": \"floatingpoint\", \"precision\": \"HALF\"}},"
    " {\"name\": \"d32\", \"nullable\": true, \"children\": [],"
    "  \"type\": {\"name\": \"decimal\", \"precision\": 9, \"scale\": 2, \"bitWidth\": 32}},"
    " {\"name\": \"d64\", \"nullable\": false, \"children\": [],"
    "  \"type\": {\"name\": \"decimal\", \"precision\": 18, \"scale\": 3, \"bitWidth\": 64}},"
    " {\"name\": \"mdn\", \"nullable\": true, \"children\": [],"
    "  \"type\": {\"name\": \"interval\", \"unit\": \"MONTH_DAY_NANO\"}},"
    " {\"name\": \"sv\", \"nullable\": true, \"children\": [], \"type\": {\"name\": \"utf8view\"}},"
    " {\"name\": \"lv\", \"nullable\": true, \"type\": {\"name\": \"listview\"}, \"children\": ["
    "   {\"name\": \"item\", \"nullable\": true, \"children\": [],"
    "    \"type\": {\"name\": \"int\", \"bitWidth\": 16, \"isSigned\": true}}]},"
    " {\"name\": \"ree\", \"nullable\": true, \"type\": {\"name\": \"runendencoded\"}, \"children\": ["
    "   {\"name\": \"run_ends\", \"nullable\": false, \"children\": [],"
    "    \"type\": {\"name\": \"int\", \"bitWidth\": 32, \"isSigned\": true}},"
    "   {\"name\": \"values\", \"nullable\": true, \"children\": [], \"type\": {\"name\": \"utf8\"}}]}"
    "]},"
    "\"batches\": [{\"count\": 3, \"columns\": ["
    " {\"name\": \"h\", \"count\": 3, \"VALIDITY\": [1, 0, 1],"
    "  \"DATA\": [15872, 0, 1]},"
    " {\"name\": \"d32\", \"count\": 3, \"VALIDITY\": [1, 1, 0], \"DATA\": [\"12345\", \"-1\", \"0\"]},"
    " {\"name\": \"d64\", \"count\": 3, \"VALIDITY\": [1, 1, 1],"
    "  \"DATA\": [\"-9223372036854775808\", \"999999999999999999\", \"0\"]},"
    " {\"name\": \"mdn\", \"count\": 3, \"VALIDITY\": [1, 1, 0], \"DATA\": ["
    "  {\"months\": 1, \"days\": -2, \"nanoseconds\": \"3000000000\"},"
    "  {\"months\": -1, \"days\": 0, \"nanoseconds\": \"-1\"},"
    "  {\"months\": 0, \"days\": 0, \"nanoseconds\": \"0\"}]},"
    " {\"name\": \"sv\", \"count\": 3, \"VALIDITY\": [1, 1, 0], \"VIEWS\": ["
    "  {\"SIZE\": 5, \"INLINED\": \"hello\"},"
    "  {\"SIZE\": 14, \"PREFIX_HEX\": \"6C6F6E67\", \"BUFFER_INDEX\": 0, \"OFFSET\": 2},"
    "  {\"SIZE\": 0, \"INLINED\": \"\"}],"
    "  \"VARIADIC_DATA_BUFFERS\": [\"78786C6F6E6720737472696E67732121\"]},"
    " {\"name\": \"lv\", \"count\": 3, \"VALIDITY\": [1, 0, 1], \"OFFSET\": [2, 0, 0],"
    "  \"SIZE\": [2, 0, 1], \"children\": ["
    "  {\"name\": \"item\", \"count\": 4, \"VALIDITY\": [1, 1, 0, 1], \"DATA\": [7, -8, 0, 9]}]},"
    " {\"name\": \"ree\", \"count\": 3, \"children\": ["
    "  {\"name\": \"run_ends\", \"count\": 2, \"VALIDITY\": [1, 1], \"DATA\": [2, 3]},"
    "  {\"name\": \"values\", \"count\": 2, \"VALIDITY\": [1, 0], \"OFFSET\": [0, 2, 2],"
    "   \"DATA\": [\"ab\", \"\"]}]}"
    "]}]}";

static void release_nothing_schema(struct ArrowSchema *s) { s->release = NULL; }
static void release_nothing_array(struct ArrowArray *a) { a->release = NULL; }

#define SCHEMA(fmt, nm, flg, n, kids) \
  { fmt, nm, NULL, flg, n, kids, NULL, release_nothing_schema, NULL }
#define ARRAY(len, nulls, nbuf, bufs, n, kids) \
  { len, nulls, 0, nbuf, n, (const void **)(bufs), kids, NULL, release_nothing_array, NULL }

typedef struct mdn_value {
  int32_t months, days;
  int64_t nanoseconds;
} mdn_value;

/* A 16-byte view: length, then inline bytes or prefix, buffer index, offset. */
static void make_view(uint8_t view[16], int32_t size, const char *inline_or_prefix,
                      int32_t buffer_index, int32_t offset) {
  memset(view, 0, 16);
  memcpy(view, &size, 4);
  memcpy(view + 4, inline_or_prefix, size <= 12 ? (size_t)size : 4);
  if (size > 12) {
    memcpy(view + 8, &buffer_index, 4);
    memcpy(view + 12, &offset, 4);
  }
}

static int comparator_self_test(self_check_stats *stats, char *msg) {
  char path[] = "/tmp/xchg_gold_selftest_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return tu_errorf(msg, MSG_SIZE, "mkstemp: %s", strerror(errno));
  ssize_t put = write(fd, new_types_json, sizeof(new_types_json) - 1);
  close(fd);
  arrow_json *doc = NULL;
  int loaded =
      put == (ssize_t)sizeof(new_types_json) - 1 && arrow_json_load(path, &doc, msg, MSG_SIZE) == 0;
  unlink(path);
  if (!loaded) return msg[0] ? -1 : tu_errorf(msg, MSG_SIZE, "cannot write %s", path);

  static uint8_t valid_101 = 0x05, valid_110 = 0x03, valid_1101 = 0x0B, valid_10 = 0x01;
  static const uint16_t halves[] = {0x3E00, 0x1234, 0x0001}; /* 1.5, (null), 2^-24 */
  static const int32_t d32[] = {12345, -1, 77};
  static const int64_t d64[] = {INT64_MIN, 999999999999999999, 0};
  static const mdn_value mdn[] = {{1, -2, 3000000000}, {-1, 0, -1}, {5, 5, 5}};
  static const char view_data[] = "xxlong strings!!";
  static const int64_t view_sizes[] = {16};
  static const int32_t lv_offsets[] = {2, 0, 0}, lv_sizes[] = {2, 0, 1};
  static const int16_t items[] = {7, -8, 0, 9};
  static const int32_t run_ends[] = {2, 3}, value_offsets[] = {0, 2, 2};
  uint8_t views[3][16];
  make_view(views[0], 5, "hello", 0, 0);
  make_view(views[1], 14, "long", 0, 2);
  make_view(views[2], 0, "", 0, 0);

  const void *h_bufs[] = {&valid_101, halves}, *d32_bufs[] = {&valid_110, d32},
             *d64_bufs[] = {NULL, d64}, *mdn_bufs[] = {&valid_110, mdn},
             *sv_bufs[] = {&valid_110, views, view_data, view_sizes},
             *lv_bufs[] = {&valid_101, lv_offsets, lv_sizes}, *item_bufs[] = {&valid_1101, items},
             *run_end_bufs[] = {NULL, run_ends}, *value_bufs[] = {&valid_10, value_offsets, "ab"},
             *top_bufs[] = {NULL};
  struct ArrowArray item = ARRAY(4, 1, 2, item_bufs, 0, NULL);
  struct ArrowArray run_end_array = ARRAY(2, 0, 2, run_end_bufs, 0, NULL);
  struct ArrowArray value_array = ARRAY(2, 1, 3, value_bufs, 0, NULL);
  struct ArrowArray *lv_kids[] = {&item}, *ree_kids[] = {&run_end_array, &value_array};
  struct ArrowArray cols[] = {
      ARRAY(3, 1, 2, h_bufs, 0, NULL),   ARRAY(3, 1, 2, d32_bufs, 0, NULL),
      ARRAY(3, 0, 2, d64_bufs, 0, NULL), ARRAY(3, 1, 2, mdn_bufs, 0, NULL),
      ARRAY(3, 1, 4, sv_bufs, 0, NULL),  ARRAY(3, 1, 3, lv_bufs, 1, lv_kids),
      ARRAY(3, 0, 0, NULL, 2, ree_kids),
  };
  struct ArrowArray *col_ptrs[] = {&cols[0], &cols[1], &cols[2], &cols[3],
                                   &cols[4], &cols[5], &cols[6]};
  struct ArrowArray batch = ARRAY(3, 0, 1, top_bufs, 7, col_ptrs);

  struct ArrowSchema item_s = SCHEMA("s", "item", ARROW_FLAG_NULLABLE, 0, NULL);
  struct ArrowSchema run_ends_s = SCHEMA("i", "run_ends", 0, 0, NULL);
  struct ArrowSchema values_s = SCHEMA("u", "values", ARROW_FLAG_NULLABLE, 0, NULL);
  struct ArrowSchema *lv_schema_kids[] = {&item_s}, *ree_schema_kids[] = {&run_ends_s, &values_s};
  struct ArrowSchema fields[] = {
      SCHEMA("e", "h", ARROW_FLAG_NULLABLE, 0, NULL),
      SCHEMA("d:9,2,32", "d32", ARROW_FLAG_NULLABLE, 0, NULL),
      SCHEMA("d:18,3,64", "d64", 0, 0, NULL),
      SCHEMA("tin", "mdn", ARROW_FLAG_NULLABLE, 0, NULL),
      SCHEMA("vu", "sv", ARROW_FLAG_NULLABLE, 0, NULL),
      SCHEMA("+vl", "lv", ARROW_FLAG_NULLABLE, 1, lv_schema_kids),
      SCHEMA("+r", "ree", ARROW_FLAG_NULLABLE, 2, ree_schema_kids),
  };
  struct ArrowSchema *field_ptrs[] = {&fields[0], &fields[1], &fields[2], &fields[3],
                                      &fields[4], &fields[5], &fields[6]};
  struct ArrowSchema schema = SCHEMA("+s", "", 0, 7, field_ptrs);

  int rc = -1;
  char why[MSG_SIZE];
  if (arrow_json_compare_schema(doc, &schema, msg, MSG_SIZE) != 0 ||
      arrow_json_compare_batch(doc, 0, &schema, &batch, msg, MSG_SIZE) != 0) {
    /* reported */
  } else if (mutate_every_array(doc, 0, &schema, &batch, stats, msg) != 0) {
    /* reported */
  } else {
    /* Views: a changed byte of a variadic buffer, and a view that points
     * elsewhere, must both be noticed. */
    static const char other_data[] = "xxlong strings!?";
    const void *other_bufs[] = {&valid_110, views, other_data, view_sizes};
    cols[4].buffers = other_bufs;
    if (arrow_json_compare_batch(doc, 0, &schema, &batch, why, sizeof(why)) == 0) {
      tu_errorf(msg, MSG_SIZE, "a changed byte of a utf8view data buffer went unnoticed");
    } else {
      cols[4].buffers = (const void **)sv_bufs;
      views[1][12] = 1; /* offset 2 -> 1 */
      if (arrow_json_compare_batch(doc, 0, &schema, &batch, why, sizeof(why)) == 0)
        tu_errorf(msg, MSG_SIZE, "a changed utf8view offset went unnoticed");
      else
        rc = 0;
      views[1][12] = 2;
    }
  }
  arrow_json_free(doc);
  return rc;
}

/* Gold files whose IPC differs from their JSON in a way Arrow's own
 * equality accepts.  1.0.0's generated_map_non_canonical.stream holds the
 * canonical map field names "entries"/"key"/"value" (its writer normalised
 * them), while the JSON and the .arrow_file of the same case hold
 * "some_entries"/"some_key"/"some_value"; the .arrow_file stays strict. */
static int writer_used_canonical_map_names(const char *path) {
  const char *base = strrchr(path, '/');
  return strcmp(base ? base + 1 : path, "generated_map_non_canonical.stream") == 0;
}

typedef struct totals {
  xchg_pool *pool;
  self_check_stats self;
} totals;

static void check_ipc_file(arrow_json *doc, const char *path, const char *shown, int is_file,
                           totals *t) {
  char msg[MSG_SIZE] = "";
  int quirk = writer_used_canonical_map_names(path);
  arrow_json_accept_canonical_map_names(doc, quirk);
  const char *how = "read";
  uint8_t *data = NULL;
  size_t size = 0;
  int64_t live_before = xchg_buf_live_count();
  data = tu_read_file(path, &size);
  int rc = data != NULL ? 0 : -1;
  if (rc != 0) tu_errorf(msg, MSG_SIZE, "cannot read the file");
  /* Trusted-input validation must not change what is decoded; nor must
   * decoding on a pool, with every buffer a task and batches read ahead. */
  xchg_ipc_read_options trusted, pooled;
  xchg_ipc_read_options_init(&trusted);
  trusted.validation = XCHG_VALIDATE_BOUNDS;
  xchg_ipc_read_options_init(&pooled);
  pooled.pool = t->pool;
  pooled.task_bytes = 1;
  pooled.readahead_bytes = 1 << 20;
  if (rc == 0) rc = check_mmap(doc, path, is_file, NULL, msg), how = "mmap";
  if (rc == 0) rc = check_fd(doc, path, is_file, &trusted, msg), how = "fd (validation: bounds)";
  if (rc == 0 && t->pool) rc = check_mmap(doc, path, is_file, &pooled, msg), how = "mmap on a pool";
  if (rc == 0 && !is_file) rc = check_pipe(doc, data, size, is_file, msg), how = "pipe";
  if (rc == 0) rc = check_memory(doc, data, size, msg), how = "memory";
  if (rc == 0) rc = self_check(doc, path, &t->self, msg), how = "self-check";
  free(data);
  int64_t live_after = xchg_buf_live_count();
  if (rc == 0 && live_after != live_before) {
    rc = tu_errorf(msg, MSG_SIZE,
                   "%" PRId64 " xchg_buf objects still alive after everything was released",
                   live_after - live_before);
    how = "leak check";
  }
  char what[4096];
  if (rc == 0)
    snprintf(what, sizeof what, "%s (%" PRId64 " batches; mmap, fd, pool%s, memory%s)%s", shown,
             arrow_json_num_batches(doc), is_file ? "" : ", pipe", is_file ? ", random access" : "",
             quirk ? " [map entry names: canonical in the file, custom in the JSON]" : "");
  else
    snprintf(what, sizeof what, "%s: %s", shown, how);
  TU_CHECK(rc == 0, "%s: %s", what, msg);
  fflush(stdout);
}

static totals t;

static void comparator_self_test_case(void) {
  char self_msg[MSG_SIZE] = "";
  TU_CHECK(
      comparator_self_test(&t.self, self_msg) == 0,
      "comparator self-test (float16, decimal32/64, month_day_nano, utf8view, listview, run-end encoded): %s",
      self_msg);
}

/* Every gold file read every way, and the comparator's mutations of it caught. */
static void gold_files(void) {
  char dir[4096];
  tu_testdata_path(dir, sizeof dir, "arrow-gold");
  char **jsons;
  size_t njsons;
  if (!TU_CHECK(rt_find_gold(dir, &jsons, &njsons) == 0, "cannot list the gold files under %s",
                dir))
    return;
  int failed_before = tu_failed_count();
  TU_CHECK(xchg_pool_create(3, &t.pool, NULL) == XCHG_OK, "cannot create a thread pool");
  size_t dirlen = strlen(dir);
  for (size_t i = 0; i < njsons; i++) {
    const char *json_path = jsons[i];
    const char *shown_json = json_path + dirlen + (json_path[dirlen] == '/');
    arrow_json *doc;
    char msg[MSG_SIZE];
    if (arrow_json_load(json_path, &doc, msg, sizeof(msg)) != 0) {
      TU_CHECK(0, "%s: %s", shown_json, msg);
      continue;
    }
    static const char *const exts[] = {".stream", ".arrow_file"};
    size_t base = strlen(json_path) - strlen(".json.gz");
    int found = 0;
    for (int k = 0; k < 2; k++) {
      char path[4096];
      struct stat st;
      snprintf(path, sizeof(path), "%.*s%s", (int)base, json_path, exts[k]);
      if (stat(path, &st) != 0) continue;
      found++;
      check_ipc_file(doc, path, path + dirlen + (path[dirlen] == '/'), k == 1, &t);
    }
    TU_CHECK(found, "%s: no .stream or .arrow_file beside it", shown_json);
    arrow_json_free(doc);
  }
  rt_free_paths(jsons, njsons);
  if (t.pool) xchg_pool_free(t.pool);
  TU_CHECK(njsons > 0, "no gold files found under %s", dir);
  TU_CHECK(
      tu_failed_count() > failed_before || (t.self.schema_checks > 0 && t.self.value_checks > 0),
      "self-check: no file allowed both a schema and a value mutation");
  printf(
      "self-check caught: %d renamed fields, %d flipped bits (validity, type ids, offsets, values; "
      "%d in nested arrays, %d in "
      "dictionaries), %d wrong batches\n",
      t.self.schema_checks, t.self.value_checks, t.self.nested_value_checks,
      t.self.dictionary_value_checks, t.self.wrong_batch_checks);
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN); /* the pipe feeder sees EPIPE if a reader stops early */
  static const tu_case cases[] = {
      {"comparator_self_test", comparator_self_test_case},
      {"gold_files", gold_files},
  };
  return TU_MAIN(argc, argv, "gold", cases);
}
