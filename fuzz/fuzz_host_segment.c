/* fuzz/fuzz_host_segment.c — a host store segment as another process (or
 * a damaged /dev/shm) could leave it, mapped by the cache.
 *
 * The input is a whole segment file (src/cache/host_store.h: header, key,
 * part table, the parts' IPC streams).  Its header checksum is recomputed
 * (host_segment_seal) so that mutations get past it to the part table
 * and the streams behind it, and it is written as the published segment of
 * the key "fuzz" in a private store directory.  A cache with that store
 * then acquires the key, column 0 first and every column next (the lazy
 * per-column decode over an entry already held), reads every batch and
 * releases it all.  A segment the cache refuses makes it decode the key's
 * own bytes instead: a stream of no columns and no batches, cheap to
 * decode.  The seeds are segments the store wrote for gold streams, by
 * writers that validated in full or checked bounds only; the mapping cache
 * validates them in full, as every mapping process does by default. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/host_store.h"
#include "fuzz_common.h"
#include "xchg/cache.h"
#include "xchg/writer.h"

#define KEY "fuzz"

static char store_dir[256];
static char segment_path[512];
static xchg_buf *empty_stream; /* the key's own bytes */

static void no_release_schema(struct ArrowSchema *s) { s->release = NULL; }

/* An IPC stream of a schema without columns, and no batch. */
static xchg_buf *make_empty_stream(void) {
  struct ArrowSchema schema = {.format = "+s", .name = "", .release = no_release_schema};
  xchg_ipc_writer *w = NULL;
  xchg_buf *out = NULL;
  if (xchg_ipc_writer_open_memory(&schema, NULL, &w, NULL) == XCHG_OK &&
      xchg_ipc_writer_finish(w, NULL) == XCHG_OK)
    out = xchg_ipc_writer_take_memory(w);
  xchg_ipc_writer_free(w);
  return out;
}

static xchg_broadcast key_bytes(xchg_chunk *chunk, xchg_broadcast_part *part) {
  *chunk = (xchg_chunk){xchg_buf_data(empty_stream), xchg_buf_size(empty_stream)};
  *part = (xchg_broadcast_part){chunk, 1, XCHG_STREAM_NONE};
  return (xchg_broadcast){part, 1, NULL, NULL};
}

static xchg_cache *open_cache(void) {
  xchg_cache_options opts;
  xchg_cache_options_init(&opts);
  fuzz_read_options(&opts.read);
  opts.host_dir = store_dir;
  opts.host_retain_bytes = INT64_MAX; /* the store leaves the segment in place */
  xchg_cache *cache = NULL;
  if (xchg_cache_create(&opts, &cache, NULL) != XCHG_OK) abort();
  return cache;
}

static void remove_store(void) {
  DIR *d = opendir(store_dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", store_dir, e->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(store_dir);
}

/* The store's directory, and the name of the key's segment in it, learnt
 * by having the store publish one. */
static void set_up(void) {
  struct stat st;
  snprintf(store_dir, sizeof store_dir, "%s/xchg-fuzz-host-XXXXXX",
           stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp");
  if (!mkdtemp(store_dir) || !(empty_stream = make_empty_stream())) abort();
  atexit(remove_store);
  xchg_cache *cache = open_cache();
  xchg_chunk chunk;
  xchg_broadcast_part part;
  xchg_broadcast b = key_bytes(&chunk, &part);
  xchg_cache_holder *h = NULL;
  xchg_error err;
  if (xchg_cache_acquire(cache, KEY, &b, NULL, &h, &err) != XCHG_OK) abort();
  xchg_cache_holder_release(h);
  xchg_cache_free(cache);
  DIR *d = opendir(store_dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (n > 4 && strcmp(e->d_name + n - 4, ".seg") == 0)
      snprintf(segment_path, sizeof segment_path, "%s/%s", store_dir, e->d_name);
  }
  if (d) closedir(d);
  if (!segment_path[0]) {
    fprintf(stderr, "fuzz_host_segment: the store published no segment in %s\n", store_dir);
    abort();
  }
}

static void write_segment(const uint8_t *data, size_t size) {
  int fd = open(segment_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) abort();
  size_t done = 0;
  while (done < size) {
    ssize_t k = write(fd, data + done, size - done);
    if (k <= 0) abort();
    done += (size_t)k;
  }
  close(fd);
}

/* Acquires the key with the given columns and reads every batch; keeps the
 * holder in *keep when asked. */
static void acquire_and_read(xchg_cache *cache, const int64_t *columns, int64_t n_columns,
                             xchg_cache_holder **keep) {
  xchg_chunk chunk;
  xchg_broadcast_part part;
  xchg_broadcast b = key_bytes(&chunk, &part);
  xchg_error err = {""};
  xchg_cache_holder *h = NULL;
  xchg_cache_request req;
  xchg_cache_request_init(&req);
  req.columns = columns;
  req.n_columns = n_columns;
  xchg_status st = xchg_cache_acquire(cache, KEY, &b, &req, &h, &err);
  if (st == XCHG_OK) {
    struct ArrowSchema schema;
    st = xchg_cache_holder_schema(h, &schema, &err);
    if (st == XCHG_OK) schema.release(&schema);
    (void)xchg_cache_holder_num_rows(h);
    for (int64_t i = 0; st == XCHG_OK && i < xchg_cache_holder_num_batches(h); i++) {
      struct ArrowArray a;
      st = xchg_cache_holder_batch(h, i, &a, &err);
      if (st == XCHG_OK) a.release(&a);
    }
  }
  fuzz_note_status(st, &err);
  if (keep && st == XCHG_OK)
    *keep = h;
  else
    xchg_cache_holder_release(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!segment_path[0]) set_up();
  int64_t live = xchg_buf_live_count();
  uint8_t *segment = malloc(size ? size : 1);
  if (!segment) abort();
  memcpy(segment, data, size);
  (void)host_segment_seal(segment, size);
  write_segment(segment, size);
  free(segment);

  xchg_cache *cache = open_cache();
  const int64_t first_column = 0;
  xchg_cache_holder *narrow = NULL;
  acquire_and_read(cache, &first_column, 1, &narrow);
  acquire_and_read(cache, NULL, 0, NULL);
  xchg_cache_holder_release(narrow);
  xchg_cache_free(cache);
  fuzz_check_no_leak(live, "host segment");
  return 0;
}
