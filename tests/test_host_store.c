/* test_host_store.c — the cache's host store (xchg/cache.h, "Host store"):
 * fork()ed processes sharing one decode, a decoder killed mid-write, a
 * holder killed, budget and age eviction, refused directories and
 * segments, segments corrupted after publish, no room for a segment, bad bytes, and
 * cancelling while another process decodes.  Every value read is checked against the formula the
 * data was made from (tests/support/cache_data), and what the processes
 * did is read from the files in the store's directory and from the
 * metrics each child writes to memory shared with the parent. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/cache_data.h"
#include "support/testutil.h"
#include "xchg/cache.h"

static const int64_t std_rows[5] = {4000, 0, 9000, 3000, 1};
#define STD_BATCHES 5
#define PROCESSES 4
#define THREADS 8

/* ---- the store's directory ----------------------------------------------------- */

static void make_dir(char *out, size_t n) {
  struct stat st;
  snprintf(out, n, "%s/xchg-host-XXXXXX", stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp");
  if (!mkdtemp(out)) {
    perror("mkdtemp");
    exit(1);
  }
}

/* Files in dir whose names end in suffix; *size the size of the last. */
static int count_files(const char *dir, const char *suffix, off_t *size) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *de; d && (de = readdir(d));) {
    if (!tu_has_suffix(de->d_name, suffix)) continue;
    n++;
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    if (size && stat(path, &st) == 0) *size = st.st_size;
  }
  if (d) closedir(d);
  return n;
}

/* The path of the one file ending in suffix (empty when there is none). */
static void find_file(const char *dir, const char *suffix, char *out, size_t n) {
  DIR *d = opendir(dir);
  out[0] = 0;
  for (struct dirent *de; d && (de = readdir(d));)
    if (tu_has_suffix(de->d_name, suffix)) snprintf(out, n, "%s/%s", dir, de->d_name);
  if (d) closedir(d);
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  for (struct dirent *de; d && (de = readdir(d));) {
    if (de->d_name[0] == '.') continue;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

/* ---- data and caches --------------------------------------------------------- */

static xchg_buf *std_stream(void) {
  xchg_buf *b = NULL;
  if (cd_make_stream(0, std_rows, STD_BATCHES, 0, XCHG_BLOCK_ZSTD, &b) != 0) {
    fprintf(stderr, "cannot make test data\n");
    exit(1);
  }
  return b;
}

static void std_source(cd_source *s) {
  xchg_buf *ipc = std_stream();
  cd_source_init(s, &ipc, 1, XCHG_STREAM_NONE);
  xchg_buf_unref(ipc);
}

static xchg_cache *host_cache_validating(const char *dir, int64_t retain_bytes, int64_t retain_ms,
                                         xchg_validation validation) {
  xchg_cache_options o;
  xchg_cache_options_init(&o);
  o.read.validation = validation;
  o.wait_check_ms = 10;
  o.host_dir = dir;
  o.host_retain_bytes = retain_bytes;
  o.host_retain_ms = retain_ms;
  return cd_cache_create(&o);
}

static xchg_cache *host_cache(const char *dir, int64_t retain_bytes, int64_t retain_ms) {
  return host_cache_validating(dir, retain_bytes, retain_ms, XCHG_VALIDATE_FULL);
}

/* Whether p lies in a mapping of a file under dir (/proc/self/maps). */
static int in_mapping_of(const void *p, const char *dir) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[1024];
  int found = 0;
  while (f && !found && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char *path = strchr(line, '/');
    if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && path && strncmp(path, dir, strlen(dir)) == 0)
      found = (uintptr_t)p >= lo && (uintptr_t)p < hi;
  }
  if (f) fclose(f);
  return found;
}

/* Checks every batch of h against part 0's formula; with dir, also that
 * the int64 column's values are read in place from a segment's mapping. */
static int check_holder(const xchg_cache_holder *h, const char *mapped_dir) {
  static const int64_t cols[CD_COLUMNS] = {0, 1, 2};
  char msg[256];
  if (xchg_cache_holder_num_batches(h) != STD_BATCHES) return -1;
  for (int64_t i = 0; i < STD_BATCHES; i++) {
    struct ArrowArray a;
    xchg_error err;
    if (xchg_cache_holder_batch(h, i, &a, &err) != XCHG_OK) return tu_failf(msg, 1, "batch");
    int rc = cd_check_batch(&a, cols, CD_COLUMNS, 0, i, std_rows[i], msg, sizeof msg);
    if (rc == 0 && mapped_dir && std_rows[i] > 0 &&
        !in_mapping_of(a.children[0]->buffers[1], mapped_dir)) {
      snprintf(msg, sizeof msg, "column k of batch %lld is not in the segment's mapping",
               (long long)i);
      rc = -1;
    }
    a.release(&a);
    if (rc != 0) {
      fprintf(stderr, "batch %lld: %s\n", (long long)i, msg);
      return -1;
    }
  }
  return 0;
}

/* One acquire of key from s, checked; returns the status. */
static xchg_status acquire_key_checked(xchg_cache *c, cd_source *s, const char *key,
                                       const char *mapped_dir, xchg_cancel_fn cancel, void *ctx,
                                       xchg_error *err) {
  xchg_broadcast b = cd_broadcast(s);
  xchg_cache_holder *h;
  xchg_status st = xchg_cache_acquire(c, key, &b, NULL, 0, cancel, ctx, &h, err);
  if (st != XCHG_OK) return st;
  if (check_holder(h, mapped_dir) != 0) st = xchg_errorf(err, XCHG_EFORMAT, "wrong values");
  xchg_cache_release(h);
  return st;
}

static xchg_status acquire_checked(xchg_cache *c, cd_source *s, const char *mapped_dir,
                                   xchg_cancel_fn cancel, void *ctx, xchg_error *err) {
  return acquire_key_checked(c, s, "bc", mapped_dir, cancel, ctx, err);
}

/* ---- processes ----------------------------------------------------------------- */

/* What children tell the parent, in memory shared with it. */
typedef struct shared {
  atomic_int arrived;
  atomic_int ready;
  xchg_cache_metrics m[PROCESSES];
  int failed[PROCESSES];
} shared;

static shared *new_shared(void) {
  shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  memset(sh, 0, sizeof *sh);
  return sh;
}

typedef void (*child_fn)(const char *dir, shared *sh, int i);

static pid_t spawn(child_fn fn, const char *dir, shared *sh, int i) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int before = tu_failed_count(); /* the child's own failures count */
    fn(dir, sh, i);
    _exit(tu_failed_count() != before ? 1 : 0);
  }
  TU_CHECK(pid > 0, "fork: %s", strerror(errno));
  return pid;
}

static int exited_ok(pid_t pid) {
  int status = 0;
  return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void kill_child(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

/* Waits (up to 10 s) for a temporary with data in it: a writer mid-write. */
static int wait_for_partial_temporary(const char *dir) {
  for (int i = 0; i < 10000; i++) {
    off_t size = 0;
    if (count_files(dir, ".tmp", &size) == 1 && size > 4096) return 0;
    sleep_ms(1);
  }
  return -1;
}

/* A child that starts decoding "bc" and blocks half way, forever. */
static void blocked_decoder(const char *dir, shared *sh, int i) {
  (void)sh;
  (void)i;
  cd_source s;
  std_source(&s);
  atomic_store(&s.gate_after, (long)xchg_buf_size(s.parts[0]) / 2);
  cd_source_close_gate(&s);
  xchg_cache *c = host_cache(dir, 0, 0);
  xchg_error err;
  (void)acquire_checked(c, &s, NULL, NULL, NULL, &err);
  TU_CHECK(0, "the blocked decoder returned: %s", err.message);
}

/* ---- 4 processes x 8 threads: one decode on the host ----------------------------- */

typedef struct worker {
  xchg_cache *cache;
  cd_source *source;
  const char *dir;
  int failed;
} worker;

static int never_cancelled(void *ctx) {
  (void)ctx;
  return 0;
}

/* A task with a cancel check, as every engine task has: still zero-copy. */
static void *run_worker(void *arg) {
  worker *w = arg;
  xchg_error err;
  if (acquire_checked(w->cache, w->source, w->dir, never_cancelled, NULL, &err) != XCHG_OK) {
    fprintf(stderr, "worker: %s\n", err.message);
    w->failed = 1;
  }
  return NULL;
}

/* The end of child i: its cache's metrics left for the parent, then its
 * cache and source freed. */
static void child_done(shared *sh, int i, xchg_cache *c, cd_source *s) {
  sh->m[i] = cd_metrics(c);
  xchg_cache_free(c);
  cd_source_free(s);
}

static void sharing_child(const char *dir, shared *sh, int i) {
  cd_source s;
  std_source(&s);
  atomic_store(&s.delay_us, 100); /* a decode long enough for the others to arrive */
  xchg_cache *c = host_cache(dir, INT64_MAX, 0); /* so that a late process finds it too */
  atomic_fetch_add(&sh->arrived, 1);
  while (atomic_load(&sh->arrived) < PROCESSES) sleep_ms(1);
  worker w[THREADS];
  for (int t = 0; t < THREADS; t++) w[t] = (worker){c, &s, dir, 0};
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, run_worker, &w[t]);
  for (int t = 0; t < THREADS; t++) {
    pthread_join(th[t], NULL);
    sh->failed[i] |= w[t].failed;
  }
  child_done(sh, i, c, &s);
}

static void test_one_decode_per_host(void) {
  char dir[256];
  make_dir(dir, sizeof dir);
  shared *sh = new_shared();
  pid_t pids[PROCESSES];
  for (int i = 0; i < PROCESSES; i++) pids[i] = spawn(sharing_child, dir, sh, i);
  int64_t decodes = 0, host_decodes = 0, waits = 0;
  for (int i = 0; i < PROCESSES; i++) {
    TU_CHECK(exited_ok(pids[i]), "process %d failed", i);
    TU_CHECK(!sh->failed[i], "process %d read wrong values", i);
    /* Once its threads all released it, a process maps the segment again. */
    TU_CHECK(sh->m[i].host_maps >= 1 && sh->m[i].host_fallbacks == 0,
             "process %d: %lld maps, %lld fallbacks", i, (long long)sh->m[i].host_maps,
             (long long)sh->m[i].host_fallbacks);
    decodes += sh->m[i].decodes;
    host_decodes += sh->m[i].host_decodes;
    waits += sh->m[i].host_waits;
  }
  TU_CHECK(decodes == 1 && host_decodes == 1, "%lld decodes, %lld host decodes on the host",
           (long long)decodes, (long long)host_decodes);
  TU_CHECK(waits >= 1, "nobody waited for the decoding process");
  TU_CHECK(count_files(dir, ".seg", NULL) == 1 && count_files(dir, ".tmp", NULL) == 0,
           "not one published segment and no temporary");
  munmap(sh, sizeof *sh);
  remove_dir(dir);
}

/* ---- a decoder killed mid-write ------------------------------------------------------ */

static void recovering_child(const char *dir, shared *sh, int i) {
  cd_source s;
  std_source(&s);
  xchg_cache *c = host_cache(dir, 0, 0);
  xchg_error err;
  TU_OK(acquire_checked(c, &s, dir, NULL, NULL, &err), err);
  child_done(sh, i, c, &s);
}

static void test_decoder_killed(void) {
  char dir[256];
  make_dir(dir, sizeof dir);
  shared *sh = new_shared();
  pid_t decoder = spawn(blocked_decoder, dir, sh, 0);
  TU_CHECK(wait_for_partial_temporary(dir) == 0, "the decoder wrote no temporary");
  pid_t waiter = spawn(recovering_child, dir, sh, 1);
  sleep_ms(300);
  TU_CHECK(count_files(dir, ".seg", NULL) == 0, "a segment was published mid-write");
  kill_child(decoder);
  TU_CHECK(exited_ok(waiter), "the waiting process failed after the decoder died");
  TU_CHECK(sh->m[1].host_waits == 1 && sh->m[1].host_decodes == 1 && sh->m[1].host_maps == 1,
           "waiter: %lld waits, %lld decodes, %lld maps", (long long)sh->m[1].host_waits,
           (long long)sh->m[1].host_decodes, (long long)sh->m[1].host_maps);
  TU_CHECK(count_files(dir, ".tmp", NULL) == 0, "the dead decoder's temporary is left");
  TU_CHECK(count_files(dir, "", NULL) == 2, "%d files left after the last holder (retain 0)",
           count_files(dir, "", NULL) - 2); /* "." and ".." */
  munmap(sh, sizeof *sh);
  remove_dir(dir);
}

/* ---- cancel while another process decodes -------------------------------------------- */

typedef struct deadline {
  struct timespec start;
  int ms;
  int checks;
} deadline;

static int past_deadline(void *ctx) {
  deadline *d = ctx;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  d->checks++;
  return (now.tv_sec - d->start.tv_sec) * 1000 + (now.tv_nsec - d->start.tv_nsec) / 1000000 >=
         d->ms;
}

static void test_cancel_while_another_decodes(void) {
  char dir[256];
  make_dir(dir, sizeof dir);
  shared *sh = new_shared();
  pid_t decoder = spawn(blocked_decoder, dir, sh, 0);
  TU_CHECK(wait_for_partial_temporary(dir) == 0, "the decoder wrote no temporary");
  cd_source s;
  std_source(&s);
  xchg_cache *c = host_cache(dir, 0, 0);
  deadline d = {{0, 0}, 200, 0};
  clock_gettime(CLOCK_MONOTONIC, &d.start);
  xchg_error err;
  xchg_status st = acquire_checked(c, &s, NULL, past_deadline, &d, &err);
  d.ms = 0;
  int elapsed = 0;
  {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    elapsed = (int)((now.tv_sec - d.start.tv_sec) * 1000 + (now.tv_nsec - d.start.tv_nsec) / 1000000);
  }
  TU_CHECK(st == XCHG_ECANCELLED, "status %d: %s", (int)st, err.message);
  TU_CHECK(elapsed >= 200 && elapsed < 2000, "cancelled after %d ms", elapsed);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.cancellations == 1 && m.host_waits == 1 && m.decodes == 0 && atomic_load(&s.opens) == 0,
           "%lld cancellations, %lld waits, %lld decodes, %d opens", (long long)m.cancellations,
           (long long)m.host_waits, (long long)m.decodes, atomic_load(&s.opens));
  kill_child(decoder);
  /* The next acquire decodes (the dead decoder's lock is free). */
  TU_OK(acquire_checked(c, &s, dir, NULL, NULL, &err), err);
  TU_EXPECT(cd_metrics(c).host_decodes == 1);
  xchg_cache_free(c);
  cd_source_free(&s);
  munmap(sh, sizeof *sh);
  remove_dir(dir);
}

/* ---- a holder killed ----------------------------------------------------------------- */

static void holding_child(const char *dir, shared *sh, int i) {
  (void)i;
  cd_source s;
  std_source(&s);
  xchg_cache *c = host_cache(dir, INT64_MAX, 100);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *h;
  xchg_error err;
  TU_OK(xchg_cache_acquire(c, "bc", &b, NULL, 0, NULL, NULL, &h, &err), err);
  atomic_store(&sh->ready, 1);
  for (;;) pause();
}

static void test_holder_killed(void) {
  char dir[256];
  make_dir(dir, sizeof dir);
  shared *sh = new_shared();
  pid_t holder = spawn(holding_child, dir, sh, 0);
  for (int i = 0; i < 10000 && !atomic_load(&sh->ready); i++) sleep_ms(1);
  TU_CHECK(atomic_load(&sh->ready), "the holder did not acquire");
  cd_source s;
  std_source(&s);
  xchg_cache *c = host_cache(dir, INT64_MAX, 100);
  xchg_error err;
  TU_OK(acquire_checked(c, &s, dir, NULL, NULL, &err), err);
  TU_CHECK(cd_metrics(c).host_maps == 1 && cd_metrics(c).decodes == 0, "the holder's segment was not used");
  sleep_ms(200);
  xchg_cache_trim(c);
  TU_CHECK(count_files(dir, ".seg", NULL) == 1, "a segment held by a live process was removed");
  kill_child(holder);
  xchg_cache_trim(c);
  TU_CHECK(count_files(dir, ".seg", NULL) == 0, "the dead holder's segment outlived its retention");
  TU_EXPECT(cd_metrics(c).host_evictions == 1);
  xchg_cache_free(c);
  cd_source_free(&s);
  munmap(sh, sizeof *sh);
  remove_dir(dir);
}

/* ---- budget and age -------------------------------------------------------------------- */

static void acquire_key(xchg_cache *c, cd_source *s, const char *key, xchg_cache_holder **out) {
  xchg_broadcast b = cd_broadcast(s);
  xchg_error err;
  TU_OK(xchg_cache_acquire(c, key, &b, NULL, 0, NULL, NULL, out, &err), err);
}

/* The size of the segment of the standard broadcast. */
static off_t segment_size(cd_source *s) {
  char dir[256];
  make_dir(dir, sizeof dir);
  xchg_cache *c = host_cache(dir, INT64_MAX, 0);
  xchg_cache_holder *h = NULL;
  acquire_key(c, s, "probe", &h);
  off_t size = 0;
  count_files(dir, ".seg", &size);
  xchg_cache_release(h);
  xchg_cache_free(c);
  remove_dir(dir);
  return size;
}

static void test_budget_and_age(void) {
  cd_source s;
  std_source(&s);
  off_t size = segment_size(&s);
  TU_CHECK(size > 100000, "segment of %lld bytes", (long long)size);
  char dir[256];
  make_dir(dir, sizeof dir);
  xchg_cache *c = host_cache(dir, size + size / 2, 0);
  xchg_cache_holder *a = NULL, *b = NULL;
  acquire_key(c, &s, "a", &a);
  acquire_key(c, &s, "b", &b);
  TU_CHECK(count_files(dir, ".seg", NULL) == 2, "a held segment was evicted over budget");
  xchg_cache_release(b);
  xchg_cache_release(a); /* over budget: b, released first, goes */
  TU_CHECK(count_files(dir, ".seg", NULL) == 1, "over budget, no segment was evicted");
  acquire_key(c, &s, "a", &a);
  TU_CHECK(cd_metrics(c).host_maps == 3 && cd_metrics(c).host_decodes == 2,
           "not the most recently released segment was kept");
  xchg_cache_release(a);
  TU_EXPECT(cd_metrics(c).host_evictions == 1);
  xchg_cache_free(c);
  remove_dir(dir);

  make_dir(dir, sizeof dir);
  c = host_cache(dir, INT64_MAX, 150);
  acquire_key(c, &s, "a", &a);
  xchg_cache_release(a);
  xchg_cache_trim(c);
  TU_CHECK(count_files(dir, ".seg", NULL) == 1, "evicted before its age");
  sleep_ms(250);
  xchg_cache_trim(c);
  TU_CHECK(count_files(dir, ".seg", NULL) == 0, "kept past its age");
  TU_EXPECT(cd_metrics(c).host_evictions == 1);
  xchg_cache_free(c);
  remove_dir(dir);
  cd_source_free(&s);
}

/* ---- refused directories and segments ------------------------------------------------ */

/* An acquire that must fall back to a private decode, for `reason`, after
 * mapping the segment `maps` times (0: refused before mapping). */
static void expect_fallback_after(const char *dir, cd_source *s, int64_t maps, const char *reason,
                                  const char *what) {
  xchg_cache *c = host_cache(dir, INT64_MAX, 0);
  xchg_error err;
  TU_CHECK(acquire_checked(c, s, NULL, NULL, NULL, &err) == XCHG_OK, "%s: %s", what, err.message);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.host_fallbacks == 1 && m.host_maps == maps && m.decodes == 1,
           "%s: %lld fallbacks, %lld maps, %lld decodes", what, (long long)m.host_fallbacks,
           (long long)m.host_maps, (long long)m.decodes);
  xchg_error why;
  TU_CHECK(xchg_cache_host_error(c, &why) && strstr(why.message, reason),
           "%s: the reason given is '%s'", what, why.message);
  xchg_cache_free(c);
}

static void expect_fallback(const char *dir, cd_source *s, const char *reason, const char *what) {
  expect_fallback_after(dir, s, 0, reason, what);
}

/* Publishes the standard segment in dir (kept: unlimited retention), from
 * a cache validating as `validation` says. */
static void publish_validated(const char *dir, cd_source *s, xchg_validation validation,
                              char *seg_path, size_t n) {
  xchg_cache *c = host_cache_validating(dir, INT64_MAX, 0, validation);
  xchg_error err;
  TU_OK(acquire_checked(c, s, dir, NULL, NULL, &err), err);
  TU_EXPECT(cd_metrics(c).host_decodes == 1);
  xchg_cache_free(c);
  find_file(dir, ".seg", seg_path, n);
}

static void publish(const char *dir, cd_source *s, char *seg_path, size_t n) {
  publish_validated(dir, s, XCHG_VALIDATE_FULL, seg_path, n);
}

/* The standard source, and a new directory dir[256] holding its segment
 * seg[512], written by a cache validating as `validation` says. */
static void published_segment(cd_source *s, xchg_validation validation, char *dir, char *seg) {
  std_source(s);
  make_dir(dir, 256);
  publish_validated(dir, s, validation, seg, 512);
}

static void expect_mapped(const char *dir, cd_source *s, const char *what) {
  xchg_cache *c = host_cache(dir, INT64_MAX, 0);
  xchg_error err;
  TU_CHECK(acquire_checked(c, s, dir, NULL, NULL, &err) == XCHG_OK, "%s: %s", what, err.message);
  TU_CHECK(cd_metrics(c).host_maps == 1 && cd_metrics(c).decodes == 0, "%s: not mapped", what);
  xchg_cache_free(c);
}

static void test_refused(void) {
  cd_source s;
  std_source(&s);
  char dir[256], seg[512];
  make_dir(dir, sizeof dir);
  TU_EXPECT(chmod(dir, 0777) == 0);
  expect_fallback(dir, &s, "writable", "world-writable directory");
  TU_EXPECT(chmod(dir, 0770) == 0);
  expect_fallback(dir, &s, "writable", "group-writable directory");
  TU_EXPECT(chmod(dir, 0700) == 0 && chown(dir, 65534, 65534) == 0);
  expect_fallback(dir, &s, "owned by uid 65534", "foreign-owned directory");
  TU_EXPECT(count_files(dir, ".seg", NULL) == 0);
  TU_EXPECT(chown(dir, geteuid(), getegid()) == 0);

  publish(dir, &s, seg, sizeof seg);
  TU_EXPECT(chown(seg, 65534, 65534) == 0);
  expect_fallback(dir, &s, "owned by uid 65534", "foreign-owned segment");
  TU_CHECK(count_files(dir, ".seg", NULL) == 1, "a foreign segment was removed");
  TU_EXPECT(chown(seg, geteuid(), getegid()) == 0 && chmod(seg, 0644) == 0);
  expect_fallback(dir, &s, "mode", "segment of mode 644");
  TU_EXPECT(chmod(seg, 0600) == 0);
  expect_mapped(dir, &s, "the segment made right again");
  remove_dir(dir);
  cd_source_free(&s);
}

/* ---- no room to write ------------------------------------------------------------- */

/* A file size limit stands in for a full /dev/shm: writing the segment
 * fails (EFBIG), and the process decodes privately. */
static void full_disk_child(const char *dir, shared *sh, int i) {
  (void)sh;
  (void)i;
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = {65536, 65536};
  TU_EXPECT(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  cd_source s;
  std_source(&s);
  expect_fallback(dir, &s, "host segment", "no room for the segment");
  cd_source_free(&s);
}

static void test_no_room(void) {
  char dir[256];
  make_dir(dir, sizeof dir);
  TU_CHECK(exited_ok(spawn(full_disk_child, dir, NULL, 0)), "the process without room failed");
  TU_CHECK(count_files(dir, "", NULL) == 2, "%d files left by the failed write",
           count_files(dir, "", NULL) - 2);
  remove_dir(dir);
}

/* ---- corrupted after publish ------------------------------------------------------- */

static void corrupt(const char *path, const uint8_t *good, size_t size, size_t at, size_t n,
                    size_t new_size) {
  uint8_t *bad = malloc(size);
  memcpy(bad, good, size);
  memset(bad + at, 0xff, n);
  TU_EXPECT(tu_write_file(path, bad, new_size) == 0);
  free(bad);
}

static void test_corrupted(void) {
  cd_source s;
  char dir[256], seg[512];
  published_segment(&s, XCHG_VALIDATE_FULL, dir, seg);
  size_t size;
  uint8_t *good = tu_read_file(seg, &size);
  TU_CHECK(good && size > 1024, "cannot read the segment");
  if (!good) return;
  corrupt(seg, good, size, 0, 1, size);
  expect_fallback(dir, &s, "magic", "magic overwritten");
  corrupt(seg, good, size, 0, 0, size - 1);
  expect_fallback(dir, &s, "out of bounds", "truncated by a byte");
  /* The header: 64 fixed bytes, the key "bc" padded to 64, the part
   * table, 192 bytes in all. */
  corrupt(seg, good, size, 128, 8, size);
  expect_fallback(dir, &s, "checksum", "part table overwritten");
  corrupt(seg, good, size, 192 + 8, 64, size);
  expect_fallback_after(dir, &s, 1, "part 0", "the first part's schema message overwritten");
  corrupt(seg, good, size, size - 8, 8, size);
  expect_fallback_after(dir, &s, 1, "part 0", "the end-of-stream marker overwritten");
  TU_EXPECT(tu_write_file(seg, good, size) == 0);
  expect_mapped(dir, &s, "the segment restored");
  /* Another key's file holding this segment (as after a hash collision);
   * a key of the same length, so that only its bytes differ. */
  xchg_cache *c = host_cache(dir, INT64_MAX, 0);
  xchg_error err;
  TU_OK(acquire_key_checked(c, &s, "zz", dir, NULL, NULL, &err), err);
  xchg_cache_free(c);
  char other[512] = "";
  DIR *d = opendir(dir);
  for (struct dirent *de; d && (de = readdir(d));)
    if (tu_has_suffix(de->d_name, ".seg") && !strstr(seg, de->d_name))
      snprintf(other, sizeof other, "%s/%s", dir, de->d_name);
  if (d) closedir(d);
  TU_CHECK(other[0] && tu_write_file(other, good, size) == 0, "cannot replace %s", other);
  c = host_cache(dir, INT64_MAX, 0);
  TU_OK(acquire_key_checked(c, &s, "zz", NULL, NULL, NULL, &err), err);
  xchg_error why;
  TU_CHECK(cd_metrics(c).host_fallbacks == 1 && xchg_cache_host_error(c, &why) &&
           strstr(why.message, "another key"), "a segment of another key was used");
  xchg_cache_free(c);
  TU_EXPECT(tu_write_file(seg, good, size) == 0);
  expect_mapped(dir, &s, "the segment restored");
  free(good);
  remove_dir(dir);
  cd_source_free(&s);
}

/* ---- values checked once ------------------------------------------------------------ */

/* Sets a dictionary index of the segment at path to -1, outside its
 * dictionary: the indices of batch 0 are row % 4, found as they lie. */
static void corrupt_an_index(const char *path) {
  size_t size;
  uint8_t *bytes = tu_read_file(path, &size);
  const int32_t pattern[12] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
  uint8_t *at = bytes ? memmem(bytes, size, pattern, sizeof pattern) : NULL;
  TU_CHECK(at != NULL, "no dictionary indices found in %s", path);
  if (at) corrupt(path, bytes, size, (size_t)(at - bytes) + 5 * sizeof pattern[0], 4, size);
  free(bytes);
}

/* A segment whose writer validated the values in full is mapped with its
 * bounds checked only (no page of values is read before a consumer does):
 * a bad index in it is not looked for.  A segment whose writer did not
 * (it validated bounds only) is validated in full by a process that asks
 * for it: the bad index is found, and that process decodes privately. */
static void test_values_checked_once(void) {
  cd_source s;
  char dir[256], seg[512];
  published_segment(&s, XCHG_VALIDATE_FULL, dir, seg);
  corrupt_an_index(seg);
  xchg_cache *c = host_cache(dir, INT64_MAX, 0);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *h = NULL;
  xchg_error err;
  TU_OK(xchg_cache_acquire(c, "bc", &b, NULL, 0, NULL, NULL, &h, &err), err);
  TU_CHECK(cd_metrics(c).host_maps == 1 && cd_metrics(c).host_fallbacks == 0 && cd_metrics(c).decodes == 0,
           "a validated segment was not mapped as it is");
  xchg_cache_release(h);
  xchg_cache_free(c);
  remove_dir(dir);
  cd_source_free(&s);
  published_segment(&s, XCHG_VALIDATE_BOUNDS, dir, seg);
  corrupt_an_index(seg);
  expect_fallback_after(dir, &s, 1, "dictionary index -1 at row 5", "a bad index in a segment written "
                        "without full validation");
  remove_dir(dir);
  cd_source_free(&s);
}

/* ---- bad bytes -------------------------------------------------------------------- */

/* Bytes that fail to decode are the acquirer's error, as without a host
 * store (not a fallback that decodes them again); nothing is left behind,
 * and the next acquirer decodes. */
static void test_bad_bytes(void) {
  char dir[256];
  make_dir(dir, sizeof dir);
  cd_source s;
  std_source(&s);
  atomic_store(&s.fail_opens, 1);
  atomic_store(&s.fail_after, 20000);
  xchg_cache *c = host_cache(dir, INT64_MAX, 0);
  xchg_error err;
  xchg_status st = acquire_checked(c, &s, NULL, NULL, NULL, &err);
  TU_CHECK(st == XCHG_EIO && strstr(err.message, "injected failure"), "status %d: %s", (int)st,
           err.message);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.failed_decodes == 1 && m.host_fallbacks == 0 && atomic_load(&s.opens) == 1,
           "%lld failed decodes, %lld fallbacks, %d opens", (long long)m.failed_decodes,
           (long long)m.host_fallbacks, atomic_load(&s.opens));
  TU_CHECK(count_files(dir, "", NULL) == 2, "%d files left by the failed decode",
           count_files(dir, "", NULL) - 2);
  TU_OK(acquire_checked(c, &s, dir, NULL, NULL, &err), err);
  TU_EXPECT(cd_metrics(c).host_decodes == 1);
  xchg_cache_free(c);
  cd_source_free(&s);
  remove_dir(dir);
}

/* ---- no host directory: unchanged ---------------------------------------------------- */

static void test_without_host_dir(void) {
  cd_source s;
  std_source(&s);
  xchg_cache *c = NULL;
  TU_CHECK(xchg_cache_create(NULL, &c, NULL) == XCHG_OK, "cannot create a cache");
  xchg_error err;
  TU_OK(acquire_checked(c, &s, NULL, NULL, NULL, &err), err);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.decodes == 1 && m.host_maps == 0 && m.host_fallbacks == 0 && !xchg_cache_host_error(c, &err),
           "the host store acted without a directory");
  xchg_cache_free(c);
  cd_source_free(&s);
}

int main(void) {
  alarm(300); /* a wait that never ends (a lost cancel, a lock never freed) fails the test */
  int64_t live = xchg_buf_live_count(), bytes = tu_live_bytes();
  test_without_host_dir();
  test_one_decode_per_host();
  test_decoder_killed();
  test_cancel_while_another_decodes();
  test_holder_killed();
  test_budget_and_age();
  test_refused();
  test_corrupted();
  test_values_checked_once();
  test_no_room();
  test_bad_bytes();
  TU_CHECK(xchg_buf_live_count() == live && tu_live_bytes() == bytes,
           "%lld buffers / %lld bytes live at the end, %lld / %lld at the start",
           (long long)xchg_buf_live_count(), (long long)tu_live_bytes(),
           (long long)live, (long long)bytes);
  return tu_finish("host_store");
}
