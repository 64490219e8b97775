/* tests/test_bad_input.c — bad bytes give errors, never crashes or short
 * results.
 *
 *   - Every input under $XCHG_TESTDATA/arrow-fuzz (inputs that once crashed
 *     or misled Arrow C++'s reader) is read to the end: it decodes or gives
 *     an error with a message; under ASan + UBSan any memory error aborts.
 *   - Every gold .stream and .arrow_file cut at every byte offset gives an
 *     error: a truncated input is never taken for a whole one.  Inputs up
 *     to 32 KiB are decoded in full at every cut.  In larger ones the
 *     batches wholly before the cut are skipped unread
 *     (xchg_ipc_reader_skip), and inside message bodies — where every cut
 *     takes the same path, "the body runs past the end" — one offset in 7
 *     is cut; every offset of framing and metadata still is.
 *   - A seeded sample of single-bit flips of every gold file: an error or a
 *     decode, never a crash (whether the decode is right is not knowable
 *     in general: a flipped value bit is still a valid file).
 * After each input the number of live buffers must be back where it was:
 * no error path leaks.  One summary line per sweep, then
 * "N passed, M failed". */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xchg/xchg.h"

/* Under AddressSanitizer, the bytes past a cut are poisoned so that any
 * read beyond the end the reader was given is reported — without copying
 * the prefix for every cut, which would make the sweep quadratic in
 * copies. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

static int passed, failed;

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = malloc(n > 0 ? (size_t)n : 1);
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

typedef struct outcome {
  int ok;            /* decoded to the end */
  int64_t batches;
  char message[XCHG_ERROR_MESSAGE_SIZE];
} outcome;

/* Reads everything from memory; the reader checks all it can.  With
 * skip_before >= 0, record batches that end before that offset are
 * skipped rather than decoded. */
static outcome read_until(const uint8_t *data, size_t size, int64_t skip_before) {
  outcome o = {0, 0, ""};
  xchg_ipc_reader *r;
  xchg_error err;
  if (xchg_ipc_reader_open_memory(data, size, NULL, NULL, NULL, &r, &err) != XCHG_OK) {
    snprintf(o.message, sizeof o.message, "%s", err.message);
    return o;
  }
  struct ArrowSchema s;
  if (xchg_ipc_reader_schema(r, &s, &err) == XCHG_OK) s.release(&s);
  for (;;) {
    struct ArrowArray a;
    xchg_batch_header h;
    int at_end = 0;
    if (skip_before >= 0) {
      if (xchg_ipc_reader_peek(r, &h, &at_end, &err) != XCHG_OK) {
        snprintf(o.message, sizeof o.message, "%s", err.message);
        break;
      }
      /* A batch's message is at most metadata + body + 8 bytes of framing
       * long; one that ends well before the cut was decoded whole by the
       * first read. */
      if (!at_end && h.offset + 8 + h.body_bytes + 65536 < skip_before) {
        if (xchg_ipc_reader_skip(r, &err) != XCHG_OK) {
          snprintf(o.message, sizeof o.message, "%s", err.message);
          break;
        }
        o.batches++;
        continue;
      }
    }
    if (xchg_ipc_reader_next(r, &a, &err) != XCHG_OK) {
      snprintf(o.message, sizeof o.message, "%s", err.message);
      break;
    }
    if (!a.release) {
      o.ok = 1;
      break;
    }
    o.batches++;
    a.release(&a);
  }
  xchg_ipc_reader_close(r);
  return o;
}

static outcome read_all(const uint8_t *data, size_t size) { return read_until(data, size, -1); }

static void check(int cond, const char *fmt, const char *a, int64_t b) {
  if (cond) {
    passed++;
    return;
  }
  failed++;
  printf("FAIL ");
  printf(fmt, a, b);
  printf("\n");
}

typedef void (*file_fn)(const char *path);

static void walk(const char *dir, const char *suffix, file_fn fn) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char path[1024];
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t len = strlen(path), sl = strlen(suffix);
    if (e->d_type == DT_DIR) walk(path, suffix, fn);
    else if (len >= sl && strcmp(path + len - sl, suffix) == 0) fn(path);
  }
  closedir(d);
}

/* ---- the fuzz corpus ---------------------------------------------------------- */

static int64_t fuzz_inputs, fuzz_errors;

static void fuzz_file(const char *path) {
  size_t size;
  uint8_t *data = read_file(path, &size);
  int64_t live = xchg_buf_live_count();
  outcome o = read_all(data, size);
  fuzz_inputs++;
  fuzz_errors += !o.ok;
  check(o.ok || o.message[0] != '\0', "%s: an error without a message (%" PRId64 ")", path, 0);
  check(xchg_buf_live_count() == live, "%s: %" PRId64 " buffers leaked", path, xchg_buf_live_count() - live);
  free(data);
}

/* ---- truncation ------------------------------------------------------------------ */

static int64_t cuts, cut_errors;

/* Where the message bodies of an input are, from the reader's own report. */
typedef struct body_map {
  int64_t start[4096], end[4096];
  int n;
} body_map;

static void record_body(void *ctx, const xchg_message_info *info) {
  body_map *m = ctx;
  if (m->n == 4096) return;
  int64_t end = info->offset + 8 + info->metadata_bytes + info->body_bytes;
  m->start[m->n] = end - info->body_bytes;
  m->end[m->n++] = end;
}

static void map_bodies(const uint8_t *data, size_t size, body_map *m) {
  xchg_read_options opts;
  xchg_read_options_init(&opts);
  opts.on_message = record_body;
  opts.on_message_ctx = m;
  xchg_ipc_reader *r;
  xchg_error err;
  m->n = 0;
  if (xchg_ipc_reader_open_memory(data, size, NULL, NULL, &opts, &r, &err) != XCHG_OK) return;
  for (;;) {
    struct ArrowArray a;
    if (xchg_ipc_reader_next(r, &a, &err) != XCHG_OK || !a.release) break;
    a.release(&a);
  }
  xchg_ipc_reader_close(r);
}

/* Cut inside a body (not at its first or last 8 bytes)? */
static int inside_body(const body_map *m, int64_t cut) {
  for (int i = 0; i < m->n; i++)
    if (cut > m->start[i] + 8 && cut < m->end[i] - 8) return 1;
  return 0;
}

static void truncate_file(const char *path) {
  size_t size;
  uint8_t *data = read_file(path, &size);
  int64_t live = xchg_buf_live_count();
  outcome whole = read_all(data, size);
  check(whole.ok, "%s: the whole file does not decode (%" PRId64 ")", path, 0);
  int large = size > 32768;
  static body_map bodies;
  if (large) map_bodies(data, size, &bodies);
  for (size_t cut = 0; cut < size; cut++) {
    if (large && cut % 7 && inside_body(&bodies, (int64_t)cut)) continue;
    POISON(data + cut, size - cut);
    outcome o = read_until(data, cut, large ? (int64_t)cut : -1);
    UNPOISON(data + cut, size - cut);
    cuts++;
    cut_errors += !o.ok;
    if (o.ok) check(0, "%s cut at byte %" PRId64 " decodes as a whole input", path, (int64_t)cut);
    if (!o.ok && o.message[0] == '\0') check(0, "%s cut at byte %" PRId64 ": error without a message", path, (int64_t)cut);
  }
  check(xchg_buf_live_count() == live, "%s: %" PRId64 " buffers leaked while cutting", path,
        xchg_buf_live_count() - live);
  passed++;
  free(data);
}

/* ---- bit flips ----------------------------------------------------------------------- */

static int64_t flips, flip_errors;

static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void flip_file(const char *path) {
  size_t size;
  uint8_t *data = read_file(path, &size);
  uint64_t rng = 0x5eed ^ size;
  int64_t live = xchg_buf_live_count();
  uint8_t *copy = malloc(size);
  for (int i = 0; i < 300; i++) {
    memcpy(copy, data, size);
    /* Half the flips land in the first 512 bytes, where the metadata is. */
    uint64_t span = (i % 2 && size > 512) ? 512 : size;
    uint64_t bit = next_random(&rng) % (span * 8);
    copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    outcome o = read_all(copy, size);
    flips++;
    flip_errors += !o.ok;
  }
  check(xchg_buf_live_count() == live, "%s: %" PRId64 " buffers leaked while flipping bits", path,
        xchg_buf_live_count() - live);
  free(copy);
  free(data);
}

int main(int argc, char **argv) {
  const char *env = getenv("XCHG_TESTDATA");
  char fuzz_dir[1024], gold_dir[1024];
  if (!env && argc < 2) {
    fprintf(stderr, "usage: test_bad_input [TESTDATA_DIR] (or set XCHG_TESTDATA)\n");
    return 2;
  }
  const char *base = argc > 1 ? argv[1] : env;
  snprintf(fuzz_dir, sizeof fuzz_dir, "%s/arrow-fuzz", base);
  snprintf(gold_dir, sizeof gold_dir, "%s/arrow-gold", base);
  walk(fuzz_dir, "", fuzz_file);
  printf("fuzz corpus: %" PRId64 " inputs, %" PRId64 " errors returned, crashes = 0\n", fuzz_inputs, fuzz_errors);
  walk(gold_dir, ".stream", truncate_file);
  walk(gold_dir, ".arrow_file", truncate_file);
  printf("truncation: %" PRId64 " cuts, %" PRId64 " errors returned, crashes = 0\n", cuts, cut_errors);
  walk(gold_dir, ".stream", flip_file);
  walk(gold_dir, ".arrow_file", flip_file);
  printf("bit flips: %" PRId64 " inputs, %" PRId64 " errors returned, crashes = 0\n", flips, flip_errors);
  if (fuzz_inputs == 0 || cuts == 0) failed++;
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
