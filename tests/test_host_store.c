/* test_host_store.c — the cache's host store (xchg/cache.h, "Host store"):
 * fork()ed processes sharing one decode, a decoder killed mid-write, a
 * process killed at each point of the protocol while two others acquire, a
 * holder killed, budget and age eviction, refused directories and
 * segments, segments corrupted after publish, no room for a segment, bad bytes, and
 * cancelling while another process decodes.  Races between processes are
 * forced, not hoped for: the store's test hook (cache/host_store.h) stops
 * a process at a point of the protocol until the test has made another
 * one act (two evictions at once, the last two releases at once, a failed
 * write with processes waiting for it); a store too small for a segment
 * is a tmpfs of that size, mounted in a mount namespace of the test's own.  Every value read is checked against the formula the
 * data was made from (tests/support/cache_data), and what the processes
 * did is read from the files in the store's directory and from the
 * metrics each child writes to memory shared with the parent. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache/host_store.h"
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
    if (xchg_cache_holder_batch(h, i, &a, &err) != XCHG_OK) return tu_errorf(msg, 1, "batch");
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
  xchg_cache_request req;
  xchg_status st = xchg_cache_acquire(c, key, &b, cd_request(&req, NULL, 0, cancel, ctx), &h, err);
  if (st != XCHG_OK) return st;
  if (check_holder(h, mapped_dir) != 0) st = xchg_errorf(err, XCHG_EFORMAT, "wrong values");
  xchg_cache_holder_release(h);
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
  char why[PROCESSES]
          [sizeof(xchg_error) + 32]; /* each child's xchg_cache_host_error: "status: message" */
  /* The test hook: a process stopped at its point says so, and waits for
   * resume; writes counts the segment writes begun on the host. */
  atomic_int stopped, resume, writes;
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

/* ---- the test hook ------------------------------------------------------------- */

static atomic_int hook_counts[HOST_HOOK_WRITE_FAILED + 1]; /* in this process */
static shared *hook_shared;                                /* where to stop and count writes */
static int hook_stop_at = -1;                              /* the point to stop at, once */

static void test_hook(host_hook_point point, const char *file) {
  (void)file;
  atomic_fetch_add(&hook_counts[point], 1);
  if (!hook_shared) return;
  if (point == HOST_HOOK_WRITE) atomic_fetch_add(&hook_shared->writes, 1);
  if ((int)point != hook_stop_at) return;
  hook_stop_at = -1;
  atomic_store(&hook_shared->stopped, 1);
  while (!atomic_load(&hook_shared->resume)) usleep(1000);
}

/* This process stops at `point` (-1: nowhere) and counts its writes in sh. */
static void hook_into(shared *sh, int point) {
  hook_shared = sh;
  hook_stop_at = point;
  host_store_hook = test_hook;
}

static int child_stop_at = -1; /* where the children forked now stop */

/* Waits (up to 10 s) for a process to stop at its hook. */
static int wait_stopped(shared *sh) {
  for (int i = 0; i < 10000 && !atomic_load(&sh->stopped); i++) usleep(1000);
  return atomic_load(&sh->stopped) ? 0 : -1;
}

static pid_t spawn(child_fn fn, const char *dir, shared *sh, int i) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int before = tu_failed_count(); /* the child's own failures count */
    hook_into(sh, child_stop_at);
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
  atomic_store(&s.delay_us, 100);                /* a decode long enough for the others to arrive */
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

/* ---- a process killed at each point of the protocol ----------------------------------- */

/* Acquires "bc" three times, each checked; a hang is a failure (SIGALRM).
 * The others (i > 0) retain the segment, so that once it is published they
 * never write it again (which would remove a dead writer's temporary). */
static void acquiring_child(const char *dir, shared *sh, int i) {
  alarm(60);
  cd_source s;
  std_source(&s);
  atomic_store(&s.delay_us, 50);
  xchg_cache *c = host_cache(dir, i > 0 ? INT64_MAX : 0, 0);
  xchg_error err;
  for (int k = 0; k < 3; k++)
    if (i > 0)
      TU_OK(acquire_checked(c, &s, NULL, NULL, NULL, &err), err);
    else
      (void)acquire_checked(c, &s, NULL, NULL, NULL, &err); /* the victim, killed */
  child_done(sh, i, c, &s);
}

/* A process killed (SIGKILL) while stopped at each point of the store's
 * protocol that a process acquiring alone at retention 0 reaches (its
 * scan, writing the segment, just published, mapping it, removing it at
 * its last release), and at a random time, while two others acquire the
 * same key: they get the right values, never hang, and no temporary is
 * left. */
static void test_killed_at_each_point(void) {
  static const int points[] = {
      -1, HOST_HOOK_SCAN, HOST_HOOK_WRITE, HOST_HOOK_PUBLISHED, HOST_HOOK_MAP, HOST_HOOK_REMOVING};
  for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
    int point = points[i];
    char dir[256];
    make_dir(dir, sizeof dir);
    shared *sh = new_shared();
    child_stop_at = point;
    pid_t victim = spawn(acquiring_child, dir, sh, 0);
    child_stop_at = -1;
    if (point >= 0)
      TU_CHECK(wait_stopped(sh) == 0, "point %d was not reached", point);
    else
      sleep_ms(rand() % 20);
    pid_t others[2] = {spawn(acquiring_child, dir, sh, 1), spawn(acquiring_child, dir, sh, 2)};
    sleep_ms(20);
    kill_child(victim);
    for (int k = 0; k < 2; k++)
      TU_CHECK(exited_ok(others[k]), "killed at point %d: process %d failed", point, k + 1);
    TU_CHECK(count_files(dir, ".tmp", NULL) == 0, "killed at point %d: a temporary is left", point);
    munmap(sh, sizeof *sh);
    remove_dir(dir);
  }
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
    elapsed =
        (int)((now.tv_sec - d.start.tv_sec) * 1000 + (now.tv_nsec - d.start.tv_nsec) / 1000000);
  }
  TU_CHECK(st == XCHG_ECANCELLED, "status %d: %s", (int)st, err.message);
  TU_CHECK(elapsed >= 200 && elapsed < 2000, "cancelled after %d ms", elapsed);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(
      m.cancellations == 1 && m.host_waits == 1 && m.decodes == 0 && atomic_load(&s.opens) == 0,
      "%lld cancellations, %lld waits, %lld decodes, %d opens", (long long)m.cancellations,
      (long long)m.host_waits, (long long)m.decodes, atomic_load(&s.opens));
  kill_child(decoder);
  /* The next acquire decodes (the dead decoder's lock is free). */
  TU_OK(acquire_checked(c, &s, dir, NULL, NULL, &err), err);
  TU_CHECK(cd_metrics(c).host_decodes == 1);
  xchg_cache_free(c);
  cd_source_free(&s);
  munmap(sh, sizeof *sh);
  remove_dir(dir);
}

/* ---- a holder killed ----------------------------------------------------------------- */

static int64_t holder_retain_ms = 100; /* the holding child's host retention (age) */

static void holding_child(const char *dir, shared *sh, int i) {
  (void)i;
  cd_source s;
  std_source(&s);
  xchg_cache *c = host_cache(dir, INT64_MAX, holder_retain_ms);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *h;
  xchg_error err;
  TU_OK(xchg_cache_acquire(c, "bc", &b, NULL, &h, &err), err);
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
  TU_CHECK(cd_metrics(c).host_maps == 1 && cd_metrics(c).decodes == 0,
           "the holder's segment was not used");
  sleep_ms(200);
  xchg_cache_trim(c);
  TU_CHECK(count_files(dir, ".seg", NULL) == 1, "a segment held by a live process was removed");
  kill_child(holder);
  xchg_cache_trim(c);
  TU_CHECK(count_files(dir, ".seg", NULL) == 0, "the dead holder's segment outlived its retention");
  TU_CHECK(cd_metrics(c).host_evictions == 1);
  xchg_cache_free(c);
  cd_source_free(&s);
  munmap(sh, sizeof *sh);
  remove_dir(dir);
}

/* ---- budget and age -------------------------------------------------------------------- */

static void acquire_key(xchg_cache *c, cd_source *s, const char *key, xchg_cache_holder **out) {
  xchg_broadcast b = cd_broadcast(s);
  xchg_error err;
  TU_OK(xchg_cache_acquire(c, key, &b, NULL, out, &err), err);
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
  xchg_cache_holder_release(h);
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
  xchg_cache_holder_release(b);
  xchg_cache_holder_release(a);
  xchg_cache_trim(c); /* over budget: b, released first, goes */
  TU_CHECK(count_files(dir, ".seg", NULL) == 1, "over budget, no segment was evicted");
  acquire_key(c, &s, "a", &a);
  TU_CHECK(cd_metrics(c).host_maps == 3 && cd_metrics(c).host_decodes == 2,
           "not the most recently released segment was kept");
  xchg_cache_holder_release(a);
  TU_CHECK(cd_metrics(c).host_evictions == 1);
  xchg_cache_free(c);
  remove_dir(dir);

  make_dir(dir, sizeof dir);
  c = host_cache(dir, INT64_MAX, 150);
  acquire_key(c, &s, "a", &a);
  xchg_cache_holder_release(a);
  xchg_cache_trim(c);
  TU_CHECK(count_files(dir, ".seg", NULL) == 1, "evicted before its age");
  sleep_ms(250);
  xchg_cache_trim(c);
  TU_CHECK(count_files(dir, ".seg", NULL) == 0, "kept past its age");
  TU_CHECK(cd_metrics(c).host_evictions == 1);
  xchg_cache_free(c);
  remove_dir(dir);
  cd_source_free(&s);
}

/* ---- refused directories and segments ------------------------------------------------ */

/* An acquire that must fall back to a private decode, for `reason` with
 * status `want`, after mapping the segment `maps` times (0: refused
 * before mapping). */
static void expect_fallback_after(const char *dir, cd_source *s, int64_t maps, xchg_status want,
                                  const char *reason, const char *what) {
  xchg_cache *c = host_cache(dir, INT64_MAX, 0);
  xchg_error err;
  TU_CHECK(acquire_checked(c, s, NULL, NULL, NULL, &err) == XCHG_OK, "%s: %s", what, err.message);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.host_fallbacks == 1 && m.host_maps == maps && m.decodes == 1,
           "%s: %lld fallbacks, %lld maps, %lld decodes", what, (long long)m.host_fallbacks,
           (long long)m.host_maps, (long long)m.decodes);
  xchg_error why;
  xchg_status st = xchg_cache_host_error(c, &why);
  TU_CHECK(st == want && strstr(why.message, reason), "%s: the reason given is %s '%s'", what,
           xchg_status_name(st), why.message);
  xchg_cache_free(c);
}

static void expect_fallback(const char *dir, cd_source *s, xchg_status want, const char *reason,
                            const char *what) {
  expect_fallback_after(dir, s, 0, want, reason, what);
}

/* Publishes the standard segment in dir (kept: unlimited retention), from
 * a cache validating as `validation` says. */
static void publish_validated(const char *dir, cd_source *s, xchg_validation validation,
                              char *seg_path, size_t n) {
  xchg_cache *c = host_cache_validating(dir, INT64_MAX, 0, validation);
  xchg_error err;
  TU_OK(acquire_checked(c, s, dir, NULL, NULL, &err), err);
  TU_CHECK(cd_metrics(c).host_decodes == 1);
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

/* A directory refused when the cache is created: xchg_cache_host_error
 * says why at once (cache.h: create), before any acquire falls back. */
static void expect_refused_at_create(const char *dir, const char *reason, const char *what) {
  xchg_cache *c = host_cache(dir, INT64_MAX, 0);
  xchg_error why;
  xchg_status st = xchg_cache_host_error(c, &why);
  TU_CHECK(st == XCHG_EINVAL && strstr(why.message, reason),
           "%s: after create, the reason given is %s '%s'", what, xchg_status_name(st),
           why.message);
  TU_CHECK(cd_metrics(c).host_fallbacks == 0, "%s: a fallback counted before any acquire", what);
  xchg_cache_free(c);
}

static void test_refused(void) {
  cd_source s;
  std_source(&s);
  char dir[256], seg[512];
  make_dir(dir, sizeof dir);
  TU_CHECK(chmod(dir, 0777) == 0);
  expect_refused_at_create(dir, "writable", "world-writable directory");
  expect_fallback(dir, &s, XCHG_EINVAL, "writable", "world-writable directory");
  TU_CHECK(chmod(dir, 0770) == 0);
  expect_fallback(dir, &s, XCHG_EINVAL, "writable", "group-writable directory");
  TU_CHECK(chmod(dir, 0700) == 0 && chown(dir, 65534, 65534) == 0);
  expect_refused_at_create(dir, "owned by uid 65534", "foreign-owned directory");
  expect_fallback(dir, &s, XCHG_EINVAL, "owned by uid 65534", "foreign-owned directory");
  TU_CHECK(count_files(dir, ".seg", NULL) == 0);
  TU_CHECK(chown(dir, geteuid(), getegid()) == 0);

  publish(dir, &s, seg, sizeof seg);
  TU_CHECK(chown(seg, 65534, 65534) == 0);
  expect_fallback(dir, &s, XCHG_EINVAL, "owned by uid 65534", "foreign-owned segment");
  TU_CHECK(count_files(dir, ".seg", NULL) == 1, "a foreign segment was removed");
  TU_CHECK(chown(seg, geteuid(), getegid()) == 0 && chmod(seg, 0644) == 0);
  expect_fallback(dir, &s, XCHG_EINVAL, "mode", "segment of mode 644");
  TU_CHECK(chmod(seg, 0600) == 0);
  expect_mapped(dir, &s, "the segment made right again");
  /* A FIFO under the segment's name: refused, not opened for good (an
   * open without O_NONBLOCK waits for a writer that never comes) */
  TU_CHECK(unlink(seg) == 0 && mkfifo(seg, 0600) == 0);
  alarm(60); /* a hang ends the test, failed */
  expect_fallback(dir, &s, XCHG_EINVAL, "not a regular file", "a FIFO under the segment's name");
  alarm(0);
  struct stat st;
  TU_CHECK(lstat(seg, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was removed");
  TU_CHECK(unlink(seg) == 0);
  remove_dir(dir);
  cd_source_free(&s);
}

/* A file under the name of a key's lock or temporary that the store could
 * not have made (mode 644: the user's own, say) is left alone, as
 * cache.h promises of every file: the acquire falls back, saying why,
 * instead of taking the lock file over and unlinking it, or unlinking the
 * temporary as a dead writer's.  Both are found as they were, and nothing
 * is published. */
static void expect_left_alone(const char *dir, cd_source *s, const char *path, const char *what) {
  static const char mine[] = "not the store's\n";
  TU_CHECK(tu_write_file(path, mine, sizeof mine - 1) == 0 && chmod(path, 0644) == 0);
  expect_fallback(dir, s, XCHG_EIO, "not a file the store made", what);
  size_t n = 0;
  uint8_t *kept = tu_read_file(path, &n);
  TU_CHECK(kept && n == sizeof mine - 1 && memcmp(kept, mine, n) == 0, "%s: removed or changed",
           what);
  TU_CHECK(count_files(dir, ".seg", NULL) == 0, "%s: a segment was published", what);
  free(kept);
  unlink(path);
  char seg[512]; /* what a store that took the name over published */
  find_file(dir, ".seg", seg, sizeof seg);
  if (seg[0] != '\0') unlink(seg);
}

static void test_foreign_files(void) {
  cd_source s;
  char dir[256], seg[512], path[512];
  published_segment(&s, XCHG_VALIDATE_FULL, dir, seg); /* to learn the key's file names */
  TU_CHECK(unlink(seg) == 0);
  size_t base = strlen(seg) - strlen(".seg");
  snprintf(path, sizeof path, "%.*s.lock", (int)base, seg);
  expect_left_alone(dir, &s, path, "a foreign file under the lock's name");
  snprintf(path, sizeof path, "%.*s.tmp", (int)base, seg);
  expect_left_alone(dir, &s, path, "a foreign file under the temporary's name");
  publish(dir, &s, seg, sizeof seg); /* the names free again: written as before */
  /* The user's files of mode 600 named as the store's but for hex digits,
   * which no key gives: a scan retaining nothing leaves them alone. */
  static const char *const lookalikes[] = {"ABCDEFGHIJKLMNOPQRSTUVWXYZ012345.seg",
                                           "abcdefghijklmnopqrstuvwxyz012345.tmp",
                                           "0123456789abcdef0123456789abcdeg.lock"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, lookalikes[i]);
    TU_CHECK(tu_write_file(path, "mine\n", 5) == 0 && chmod(path, 0600) == 0);
  }
  xchg_cache *c = host_cache(dir, 0, 0);
  xchg_cache_trim(c);
  xchg_cache_free(c);
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, lookalikes[i]);
    TU_CHECK(access(path, F_OK) == 0, "the user's %s was removed", lookalikes[i]);
  }
  remove_dir(dir);
  cd_source_free(&s);
}

/* A segment of no bytes under a key's name (the user's, mode 600: every
 * process refuses it) goes at the next scan when nothing is retained, as
 * any unheld segment does: the key is decoded and shared again, not
 * refused for good. */
static void test_empty_segment(void) {
  cd_source s;
  char dir[256], seg[512];
  published_segment(&s, XCHG_VALIDATE_FULL, dir, seg);
  TU_CHECK(truncate(seg, 0) == 0);
  xchg_cache *c = host_cache(dir, 0, 0);
  xchg_error err;
  TU_CHECK(acquire_checked(c, &s, NULL, NULL, NULL, &err) == XCHG_OK, "%s", err.message);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.host_fallbacks == 0 && m.host_decodes == 1,
           "an empty segment at retention 0: %lld fallbacks, %lld host decodes",
           (long long)m.host_fallbacks, (long long)m.host_decodes);
  xchg_cache_free(c);
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
  TU_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  cd_source s;
  std_source(&s);
  expect_fallback(dir, &s, XCHG_EIO, "host segment", "no room for the segment");
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
  TU_CHECK(tu_write_file(path, bad, new_size) == 0);
  free(bad);
}

#define HEADER_STUB 63 /* bytes, one short of a segment's fixed header */

static void test_corrupted(void) {
  cd_source s;
  char dir[256], seg[512];
  published_segment(&s, XCHG_VALIDATE_FULL, dir, seg);
  size_t size;
  uint8_t *good = tu_read_file(seg, &size);
  TU_CHECK(good && size > 1024, "cannot read the segment");
  if (!good) return;
  corrupt(seg, good, size, 0, 1, size);
  expect_fallback(dir, &s, XCHG_EFORMAT, "magic", "magic overwritten");
  corrupt(seg, good, size, 0, 0, size - 1);
  expect_fallback(dir, &s, XCHG_EFORMAT, "out of bounds", "truncated by a byte");
  /* The header: 64 fixed bytes, the key "bc" padded to 64, the part
   * table, 192 bytes in all. */
  corrupt(seg, good, size, 128, 8, size);
  expect_fallback(dir, &s, XCHG_EFORMAT, "checksum", "part table overwritten");
  /* The same, sealed again (host_segment_seal, as the fuzz target does):
   * the part's bounds are checked behind the checksum. */
  corrupt(seg, good, size, 128, 8, size);
  uint8_t *sealed = tu_read_file(seg, &size);
  TU_CHECK(sealed && host_segment_seal(sealed, size) == 0, "cannot seal the segment");
  if (sealed) TU_CHECK(tu_write_file(seg, sealed, size) == 0);
  free(sealed);
  expect_fallback(dir, &s, XCHG_EFORMAT, "part 0 at [18446744073709551615",
                  "part table overwritten, sealed");
  /* Bytes too short for a header, as the fuzz target may hand them over. */
  uint8_t *stub_bytes = malloc(HEADER_STUB);
  memcpy(stub_bytes, good, HEADER_STUB);
  xchg_buf *stub = xchg_buf_wrap(stub_bytes, HEADER_STUB, NULL, NULL);
  host_segment *none = NULL;
  xchg_error err;
  TU_CHECK(host_segment_open(stub, "bc", "stub", &none, &err) == XCHG_EFORMAT && !none &&
               strstr(err.message, "too short for a header") &&
               host_segment_seal(stub_bytes, HEADER_STUB) == -1,
           "a stub of a header: %s", err.message);
  xchg_buf_unref(stub);
  free(stub_bytes);
  corrupt(seg, good, size, 192 + 8, 64, size);
  expect_fallback_after(dir, &s, 1, XCHG_EFORMAT, "part 0",
                        "the first part's schema message overwritten");
  corrupt(seg, good, size, size - 8, 8, size);
  expect_fallback_after(dir, &s, 1, XCHG_EFORMAT, "part 0", "the end-of-stream marker overwritten");
  TU_CHECK(tu_write_file(seg, good, size) == 0);
  expect_mapped(dir, &s, "the segment restored");
  /* Another key's file holding this segment (as after a hash collision);
   * a key of the same length, so that only its bytes differ. */
  xchg_cache *c = host_cache(dir, INT64_MAX, 0);
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
  TU_CHECK(cd_metrics(c).host_fallbacks == 1 && xchg_cache_host_error(c, &why) == XCHG_EINVAL &&
               strstr(why.message, "another key"),
           "a segment of another key was used");
  xchg_cache_free(c);
  TU_CHECK(tu_write_file(seg, good, size) == 0);
  expect_mapped(dir, &s, "the segment restored");
  free(good);
  remove_dir(dir);
  cd_source_free(&s);
}

/* ---- two evictions at once ------------------------------------------------------ */

/* Trims with retention 0. */
static void trimming_child(const char *dir, shared *sh, int i) {
  (void)sh;
  (void)i;
  xchg_cache *c = host_cache(dir, 0, 0);
  xchg_cache_trim(c);
  xchg_cache_free(c);
}

/* Child i, stopping at `point`. */
static pid_t spawn_stopping(child_fn fn, const char *dir, shared *sh, int i, int point) {
  child_stop_at = point;
  pid_t pid = spawn(fn, dir, sh, i);
  child_stop_at = -1;
  return pid;
}

/* The names of the files in dir, for a message. */
static void list_files(const char *dir, char *out, size_t n) {
  DIR *d = opendir(dir);
  size_t at = 0;
  out[0] = 0;
  for (struct dirent *de; d && (de = readdir(d));)
    if (de->d_name[0] != '.' && at < n) at += (size_t)snprintf(out + at, n - at, " %s", de->d_name);
  if (d) closedir(d);
}

/* Issue 19 item 12: process A lists an unheld segment and stops before
 * removing it; B removes it (and everything of its key) meanwhile; then A
 * goes on.  Nothing was published after B, so nothing may be left: an
 * eviction that creates the key's lock file to remove a segment that is
 * gone leaves that file for good. */
static void test_evictions_at_once(void) {
  cd_source s;
  char dir[256], seg[512], left[512];
  published_segment(&s, XCHG_VALIDATE_FULL, dir, seg);
  shared *sh = new_shared();
  pid_t a = spawn_stopping(trimming_child, dir, sh, 0, HOST_HOOK_REMOVE);
  TU_CHECK(wait_stopped(sh) == 0, "A did not reach the removal of the segment");
  TU_CHECK(exited_ok(spawn(trimming_child, dir, sh, 1)), "B failed");
  TU_CHECK(count_files(dir, ".seg", NULL) == 0, "B did not remove the unheld segment");
  atomic_store(&sh->resume, 1);
  TU_CHECK(exited_ok(a), "A failed");
  list_files(dir, left, sizeof left);
  TU_CHECK(left[0] == 0, "two evictions at once left:%s", left);
  munmap(sh, sizeof *sh);
  remove_dir(dir);
  cd_source_free(&s);
}

/* An acquire of "bc" at retention 0 whose cancel callback, asked while
 * it waits, says so in sh->ready (and never cancels). */
static shared *waiting_shared;

static int say_waiting(void *ctx) {
  (void)ctx;
  atomic_store(&waiting_shared->ready, 1);
  return 0;
}

static void waiting_acquirer(const char *dir, shared *sh, int i) {
  waiting_shared = sh;
  cd_source s;
  std_source(&s);
  xchg_cache *c = host_cache(dir, 0, 0);
  xchg_error err;
  TU_OK(acquire_checked(c, &s, dir, say_waiting, NULL, &err), err);
  child_done(sh, i, c, &s);
}

/* A segment being removed (its remover, holding LOCK_EX, stopped before
 * unlinking it) is waited for, not written again beside it: once it is
 * gone, the acquirer writes, publishes and maps its own. */
static void test_removal_waited_for(void) {
  cd_source s;
  char dir[256], seg[512];
  published_segment(&s, XCHG_VALIDATE_FULL, dir, seg);
  shared *sh = new_shared();
  pid_t remover = spawn_stopping(trimming_child, dir, sh, 0, HOST_HOOK_REMOVING);
  TU_CHECK(wait_stopped(sh) == 0, "the remover did not take the segment's lock");
  pid_t acquirer = spawn(waiting_acquirer, dir, sh, 1);
  for (int i = 0; i < 10000 && !atomic_load(&sh->ready); i++) sleep_ms(1);
  TU_CHECK(atomic_load(&sh->ready), "the acquirer did not wait for the removal");
  atomic_store(&sh->resume, 1);
  TU_CHECK(exited_ok(remover) && exited_ok(acquirer), "the remover or the acquirer failed");
  TU_CHECK(sh->m[1].host_decodes == 1 && sh->m[1].host_maps == 1 && sh->m[1].host_fallbacks == 0,
           "after the removal: %lld host decodes, %lld maps, %lld fallbacks",
           (long long)sh->m[1].host_decodes, (long long)sh->m[1].host_maps,
           (long long)sh->m[1].host_fallbacks);
  munmap(sh, sizeof *sh);
  remove_dir(dir);
  cd_source_free(&s);
}

/* A segment just published and not yet mapped by its writer (stopped
 * there) is already leased: a scan at retention 0 meanwhile leaves it. */
static void test_published_is_leased(void) {
  char dir[256];
  make_dir(dir, sizeof dir);
  shared *sh = new_shared();
  pid_t writer = spawn_stopping(recovering_child, dir, sh, 0, HOST_HOOK_PUBLISHED);
  TU_CHECK(wait_stopped(sh) == 0, "the writer did not publish");
  TU_CHECK(exited_ok(spawn(trimming_child, dir, sh, 1)), "the scanning process failed");
  TU_CHECK(count_files(dir, ".seg", NULL) == 1,
           "a scan removed a segment before its writer mapped it");
  atomic_store(&sh->resume, 1);
  TU_CHECK(exited_ok(writer), "the writer did not map what it published");
  munmap(sh, sizeof *sh);
  remove_dir(dir);
}

/* A remover that opened a segment, stopped, and finds the name published
 * again (another process removed the first and wrote a new one, which it
 * holds) leaves the new one: it removes only the file it locked. */
static void test_name_reused(void) {
  cd_source s;
  char dir[256], seg[512];
  published_segment(&s, XCHG_VALIDATE_FULL, dir, seg);
  shared *sh = new_shared();
  pid_t late = spawn_stopping(trimming_child, dir, sh, 0, HOST_HOOK_REMOVE);
  TU_CHECK(wait_stopped(sh) == 0, "the late remover did not open the segment");
  TU_CHECK(exited_ok(spawn(trimming_child, dir, sh, 1)), "the first remover failed");
  pid_t holder = spawn(holding_child, dir, sh, 2);
  for (int i = 0; i < 10000 && !atomic_load(&sh->ready); i++) sleep_ms(1);
  TU_CHECK(atomic_load(&sh->ready) && count_files(dir, ".seg", NULL) == 1,
           "no new segment was published");
  atomic_store(&sh->resume, 1);
  TU_CHECK(exited_ok(late), "the late remover failed");
  TU_CHECK(count_files(dir, ".seg", NULL) == 1, "the late remover removed the new, held segment");
  kill_child(holder);
  munmap(sh, sizeof *sh);
  remove_dir(dir);
  cd_source_free(&s);
}

/* A process that opened a segment to map it, stopped, and finds it
 * removed meanwhile (by a scan at retention 0) does not lease the removed
 * file, which nobody else could find: it publishes a new one, which the
 * others find. */
static void test_removed_before_leased(void) {
  cd_source s;
  char dir[256], seg[512];
  published_segment(&s, XCHG_VALIDATE_FULL, dir, seg);
  shared *sh = new_shared();
  holder_retain_ms = 0; /* its own scan must leave the segment, however slow it runs */
  pid_t holder = spawn_stopping(holding_child, dir, sh, 0, HOST_HOOK_MAP);
  holder_retain_ms = 100;
  TU_CHECK(wait_stopped(sh) == 0, "the holder did not open the segment");
  TU_CHECK(exited_ok(spawn(trimming_child, dir, sh, 1)), "the scanning process failed");
  TU_CHECK(count_files(dir, ".seg", NULL) == 0, "the scan did not remove the unheld segment");
  atomic_store(&sh->resume, 1);
  for (int i = 0; i < 10000 && !atomic_load(&sh->ready); i++) sleep_ms(1);
  TU_CHECK(atomic_load(&sh->ready) && count_files(dir, ".seg", NULL) == 1,
           "the holder holds a segment nobody else can find");
  kill_child(holder);
  munmap(sh, sizeof *sh);
  remove_dir(dir);
  cd_source_free(&s);
}

/* What dead processes leave is removed by the next scan: a lock file
 * nobody holds (empty, or holding what is no record), a temporary whose
 * lock is free, a failure's record past HOST_FAILURE_MEMORY_MS; a recent
 * record stays. */
static void test_left_overs(void) {
  char dir[256], path[512];
  make_dir(dir, sizeof dir);
  static const char *const names[5] = {
      "00000000000000000000000000000001.lock", "00000000000000000000000000000002.tmp",
      "00000000000000000000000000000003.lock", "00000000000000000000000000000004.lock",
      "00000000000000000000000000000005.lock"};
  uint8_t record[16] = "XCHGROOM", other[16] = "XCHGHS01";
  record[8] = other[8] = 1;
  for (int i = 0; i < 5; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    TU_CHECK(tu_write_file(path, i == 4 ? other : record, i < 2 ? 0 : sizeof record) == 0 &&
             chmod(path, 0600) == 0);
  }
  struct timespec then[2];
  clock_gettime(CLOCK_REALTIME, &then[0]);
  then[0].tv_sec -= HOST_FAILURE_MEMORY_MS / 1000 + 1;
  then[1] = then[0];
  snprintf(path, sizeof path, "%s/%s", dir, names[2]);
  TU_CHECK(utimensat(AT_FDCWD, path, then, 0) == 0);
  xchg_cache *c = host_cache(dir, 0, 0);
  xchg_cache_trim(c);
  xchg_cache_free(c);
  char left[512];
  list_files(dir, left, sizeof left);
  TU_CHECK(strcmp(left, " 00000000000000000000000000000004.lock") == 0, "left after the scan:%s",
           left);
  remove_dir(dir);
}

/* ---- the last two releases at once -------------------------------------------- */

/* Child 0 holds "bc" until told (sh->ready); child 1 maps it and releases
 * it at once, stopping where its removal found the segment still held by
 * child 0, until the test has let child 0 release it and end. */
static void releasing_child(const char *dir, shared *sh, int i) {
  cd_source s;
  std_source(&s);
  xchg_cache *c = host_cache(dir, 0, 0);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *h = NULL;
  xchg_error err;
  TU_OK(xchg_cache_acquire(c, "bc", &b, NULL, &h, &err), err);
  TU_CHECK(cd_metrics(c).host_maps == 1, "child %d did not map the segment", i);
  atomic_fetch_add(&sh->arrived, 1);
  if (i == 0) {
    while (!atomic_load(&sh->ready)) sleep_ms(1);
  } else {
    hook_into(sh, HOST_HOOK_REMOVE_HELD);
  }
  xchg_cache_holder_release(h);
  child_done(sh, i, c, &s);
}

/* Issue 19 item 13: at retention 0 the last release on the host removes
 * the segment whatever the interleaving, here the worst one: the
 * first releaser, finding the segment held, stops there; the second
 * releases meanwhile, and ends.  Then nobody holds it, and it must be gone. */
static void test_last_releases_at_once(void) {
  char dir[256], left[512];
  make_dir(dir, sizeof dir);
  shared *sh = new_shared();
  pid_t holder = spawn(releasing_child, dir, sh, 0);
  for (int i = 0; i < 10000 && atomic_load(&sh->arrived) < 1; i++) sleep_ms(1);
  pid_t first = spawn(releasing_child, dir, sh, 1);
  TU_CHECK(wait_stopped(sh) == 0, "the first releaser did not find the segment held");
  atomic_store(&sh->ready, 1);
  TU_CHECK(exited_ok(holder), "the last holder failed");
  atomic_store(&sh->resume, 1);
  TU_CHECK(exited_ok(first), "the first releaser failed");
  list_files(dir, left, sizeof left);
  TU_CHECK(left[0] == 0, "the segment outlived every process at retention 0:%s", left);
  TU_CHECK(sh->m[0].host_evictions + sh->m[1].host_evictions == 1,
           "%lld + %lld evictions, one expected", (long long)sh->m[0].host_evictions,
           (long long)sh->m[1].host_evictions);
  munmap(sh, sizeof *sh);
  remove_dir(dir);
}

/* ---- a release scans nothing ---------------------------------------------------- */

static void *release_array(void *arg) {
  struct ArrowArray *a = arg;
  a->release(a);
  return NULL;
}

/* Issue 19 item 14: dropping the last array of a mapped segment, on a
 * thread of its own (as a JVM thread would), scans no directory: at
 * retention 0 it removes its own segment, and only it; with a budget,
 * eviction waits for the next store operation (here xchg_cache_trim). */
static void test_release_scans_nothing(void) {
  cd_source s;
  std_source(&s);
  off_t size = segment_size(&s);
  char dir[256];
  make_dir(dir, sizeof dir);
  hook_into(NULL, -1);
  xchg_cache *c = host_cache(dir, 0, 0);
  xchg_cache_holder *h = NULL;
  acquire_key(c, &s, "a", &h);
  struct ArrowArray a;
  xchg_error err;
  TU_OK(xchg_cache_holder_batch(h, 0, &a, &err), err);
  xchg_cache_holder_release(h); /* the array still holds the entry and its mapping */
  TU_CHECK(count_files(dir, ".seg", NULL) == 1, "the segment went with an array still out");
  int scans = atomic_load(&hook_counts[HOST_HOOK_SCAN]);
  pthread_t th;
  TU_CHECK(pthread_create(&th, NULL, release_array, &a) == 0 && pthread_join(th, NULL) == 0);
  TU_CHECK(atomic_load(&hook_counts[HOST_HOOK_SCAN]) == scans,
           "dropping the last array scanned the directory %d times",
           atomic_load(&hook_counts[HOST_HOOK_SCAN]) - scans);
  TU_CHECK(count_files(dir, "", NULL) == 2, "retention 0: %d files left after the last release",
           count_files(dir, "", NULL) - 2);
  TU_CHECK(cd_metrics(c).host_evictions == 1);
  xchg_cache_free(c);

  c = host_cache(dir, size + size / 2, 0);
  xchg_cache_holder *b = NULL;
  acquire_key(c, &s, "a", &h);
  acquire_key(c, &s, "b", &b);
  scans = atomic_load(&hook_counts[HOST_HOOK_SCAN]);
  xchg_cache_holder_release(b);
  xchg_cache_holder_release(h);
  TU_CHECK(atomic_load(&hook_counts[HOST_HOOK_SCAN]) == scans, "a release scanned the directory");
  TU_CHECK(count_files(dir, ".seg", NULL) == 2, "a release evicted over budget");
  xchg_cache_trim(c);
  TU_CHECK(count_files(dir, ".seg", NULL) == 1, "the next store operation did not evict");
  xchg_cache_free(c);
  host_store_hook = NULL;
  remove_dir(dir);
  cd_source_free(&s);
}

/* ---- what a consumer could fault on ------------------------------------------------ */

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

/* Sets offset 6 of column "s" in batch 0 of the segment at path to
 * INT32_MAX: row 5's string would then run 2 GB past its data, and the
 * offsets decrease at row 7.  The first 12 offsets are found as the
 * formula of tests/support/cache_data.c makes them. */
static void corrupt_an_offset(const char *path) {
  int32_t pattern[12] = {0};
  for (int r = 0; r < 11; r++) {
    int64_t k = cd_key(0, 0, r);
    char text[32];
    pattern[r + 1] =
        pattern[r] + (k % 11 == 0 ? 0 : sprintf(text, "s%lld", (long long)(k * 7 % 1000003)));
  }
  size_t size;
  uint8_t *bytes = tu_read_file(path, &size);
  uint8_t *at = bytes ? memmem(bytes, size, pattern, sizeof pattern) : NULL;
  TU_CHECK(at != NULL, "no offsets of column s found in %s", path);
  if (at) {
    const int32_t huge = INT32_MAX;
    memcpy(at + 6 * sizeof pattern[0], &huge, sizeof huge);
    TU_CHECK(tu_write_file(path, bytes, size) == 0);
  }
  free(bytes);
}

static const char *fault_reason; /* what fallback_child expects, set before it is forked */

static void fallback_child(const char *dir, shared *sh, int i) {
  (void)sh;
  (void)i;
  cd_source s;
  std_source(&s);
  expect_fallback_after(dir, &s, 1, XCHG_EFORMAT, fault_reason, "a damaged segment");
  cd_source_free(&s);
}

/* A process mapping a damaged segment (in a child, so that a crash fails
 * the check instead of ending the test) finds what a consumer would have
 * faulted on, says so, and reads the right values from its own bytes. */
static void expect_fault_found(const char *dir, const char *reason, const char *what) {
  fault_reason = reason;
  TU_CHECK(exited_ok(spawn(fallback_child, dir, NULL, 0)), "%s reached the consumer", what);
}

/* Issue 19 item 16: every process mapping a segment checks what a consumer
 * could fault on, whoever wrote it and however: offsets monotonic and
 * within their data, dictionary indices within their dictionary (as
 * read.validation says, XCHG_VALIDATE_FULL by default).  A cache that
 * asks for bounds checks only maps such a segment as it is: its readers
 * never read outside the mapping, its consumers are trusted. */
static void test_mapped_structure_checked(void) {
  cd_source s;
  char dir[256], seg[512];
  published_segment(&s, XCHG_VALIDATE_FULL, dir, seg);
  size_t size;
  uint8_t *good = tu_read_file(seg, &size);
  corrupt_an_offset(seg);
  expect_fault_found(dir, "at row 7 is below the one before", "a flipped offset");
  TU_CHECK(tu_write_file(seg, good, size) == 0);
  corrupt_an_index(seg);
  expect_fault_found(dir, "dictionary index -1 at row 5", "a bad dictionary index");
  xchg_cache *c = host_cache_validating(dir, INT64_MAX, 0, XCHG_VALIDATE_BOUNDS);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *h = NULL;
  xchg_error err;
  TU_OK(xchg_cache_acquire(c, "bc", &b, NULL, &h, &err), err);
  TU_CHECK(cd_metrics(c).host_maps == 1 && cd_metrics(c).host_fallbacks == 0,
           "a cache checking bounds only refused the segment");
  xchg_cache_holder_release(h);
  xchg_cache_free(c);
  free(good);
  remove_dir(dir);
  cd_source_free(&s);
}

/* ---- a store too small for the segment ----------------------------------------- */

static int mount_tmpfs(const char *dir, size_t bytes, unsigned long flags) {
  char opts[64];
  snprintf(opts, sizeof opts, "size=%zu,mode=700", bytes);
  return mount("xchg-test", dir, "tmpfs", flags, opts);
}

/* Enters a mount namespace of this process's own and mounts a tmpfs of
 * `bytes` on dir in it: nobody else sees it, and it goes with the
 * namespace's last process. */
static int mount_private_tmpfs(const char *dir, size_t bytes) {
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    return -1;
  return mount_tmpfs(dir, bytes, 0);
}

/* One process on the small store: acquires "bc" once every process of the
 * round has arrived (sh->ready of them), counting its writes and stopping
 * where a write failed for lack of room; leaves its metrics and the
 * reason of its fallback in sh. */
static void small_store_child(const char *dir, shared *sh, int i) {
  hook_into(sh, HOST_HOOK_WRITE_FAILED);
  cd_source s;
  std_source(&s);
  xchg_cache *c = host_cache(dir, 0, 0);
  atomic_fetch_add(&sh->arrived, 1);
  while (atomic_load(&sh->arrived) < atomic_load(&sh->ready)) sleep_ms(1);
  xchg_error err, why;
  TU_OK(acquire_checked(c, &s, NULL, NULL, NULL, &err), err);
  xchg_status st = xchg_cache_host_error(c, &why);
  snprintf(sh->why[i], sizeof sh->why[i], "%s: %s", xchg_status_name(st), why.message);
  child_done(sh, i, c, &s);
}

/* The same with the broadcast's bytes in memory, as chunks (not behind a
 * callback, so that the store knows their size and how much it read). */
static void small_store_chunks_child(const char *dir, shared *sh, int i) {
  hook_into(sh, HOST_HOOK_WRITE_FAILED);
  xchg_buf *ipc = std_stream();
  xchg_chunk chunk = {xchg_buf_data(ipc), xchg_buf_size(ipc)};
  xchg_broadcast_part part = {&chunk, 1, XCHG_STREAM_NONE};
  xchg_broadcast b = {&part, 1, NULL, NULL};
  xchg_cache *c = host_cache(dir, 0, 0);
  xchg_cache_holder *h = NULL;
  xchg_error err, why;
  TU_OK(xchg_cache_acquire(c, "chunks", &b, NULL, &h, &err), err);
  TU_CHECK(h && check_holder(h, NULL) == 0, "wrong values");
  xchg_cache_holder_release(h);
  xchg_status st = xchg_cache_host_error(c, &why);
  snprintf(sh->why[i], sizeof sh->why[i], "%s: %s", xchg_status_name(st), why.message);
  sh->m[i] = cd_metrics(c);
  xchg_cache_free(c);
  xchg_buf_unref(ipc);
}

/* A round of n processes (fn) at once on the small store, whose shared
 * memory it returns.  When one of them is to fail writing (`failing`), it
 * checks that the others fell back while it was stopped there. */
static shared *small_store_round_of(child_fn fn, const char *dir, int n, int failing) {
  shared *sh = new_shared();
  atomic_store(&sh->ready, n);
  pid_t pids[PROCESSES];
  for (int i = 0; i < n; i++) pids[i] = spawn(fn, dir, sh, i);
  int done[PROCESSES] = {0}, n_done = 0, stopped = failing && wait_stopped(sh) == 0;
  /* The writer stays stopped, the key's lock held: the others fall back
   * meanwhile, or never did before (f248ab3: they waited for the lock,
   * then wrote each in turn). */
  for (int t = 0; t < 10000 && stopped && n_done < n - 1; t++, sleep_ms(1))
    for (int i = 0; i < n; i++) {
      int status;
      if (done[i] || waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
      done[i] = 1;
      n_done++;
      TU_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d failed", i);
    }
  TU_CHECK(!failing || (stopped && n_done == n - 1),
           "%d of %d processes fell back while the "
           "failed writer held the key's lock",
           n_done, n - 1);
  atomic_store(&sh->resume, 1);
  for (int i = 0; i < n; i++)
    if (!done[i]) TU_CHECK(exited_ok(pids[i]), "process %d failed", i);
  return sh;
}

/* Checks process i of a round: it read the right values from its own
 * decode (as without a store), for `reason`, an i/o error (lack of room). */
static void expect_fell_back(const shared *sh, int i, const char *reason, const char *round) {
  const xchg_cache_metrics *m = &sh->m[i];
  TU_CHECK(m->host_fallbacks == 1 && m->decodes == 1 && m->host_maps == 0 && !sh->failed[i],
           "%s, process %d: %lld fallbacks, %lld decodes, %lld maps", round, i,
           (long long)m->host_fallbacks, (long long)m->decodes, (long long)m->host_maps);
  TU_CHECK(strstr(sh->why[i], reason) && strncmp(sh->why[i], "i/o error: ", 11) == 0,
           "%s, process %d: the reason is '%s', not an i/o error '%s'", round, i, sh->why[i],
           reason);
}

static shared *small_store_round(const char *dir, int n, int failing) {
  return small_store_round_of(small_store_child, dir, n, failing);
}

static size_t small_room; /* the small store's size, set before its host is forked */

/* The processes on the small store, in a mount namespace of their own. */
static void small_store_host(const char *dir, shared *unused, int unused_i) {
  (void)unused;
  (void)unused_i;
  TU_CHECK(mount_private_tmpfs(dir, small_room) == 0,
           "cannot mount a tmpfs of %zu bytes on %s "
           "(the test needs root, as test_refused does): %s",
           small_room, dir, strerror(errno));
  /* 4 processes at once: one writes, runs out of room and records it; the
   * others fall back at once, not writing. */
  shared *sh = small_store_round(dir, PROCESSES, 1);
  TU_CHECK(atomic_load(&sh->writes) == 1, "%d writes of the segment, 1 expected",
           atomic_load(&sh->writes));
  int writer = -1;
  for (int i = 0; i < PROCESSES; i++)
    if (strstr(sh->why[i], strerror(ENOSPC))) writer = i;
  TU_CHECK(writer >= 0, "no process says the store has no room: '%s'", sh->why[0]);
  for (int i = 0; i < PROCESSES; i++)
    expect_fell_back(sh, i, i == writer ? strerror(ENOSPC) : "not tried again", "4 at once");
  munmap(sh, sizeof *sh);
  /* A process arriving later falls back at once too. */
  sh = small_store_round(dir, 1, 0);
  TU_CHECK(atomic_load(&sh->writes) == 0, "a later process wrote again");
  expect_fell_back(sh, 0, "not tried again", "later");
  munmap(sh, sizeof *sh);
  /* Once the record is older than HOST_FAILURE_MEMORY_MS, one tries again. */
  char lock[512];
  find_file(dir, ".lock", lock, sizeof lock);
  struct timespec then[2];
  clock_gettime(CLOCK_REALTIME, &then[0]);
  then[0].tv_sec -= HOST_FAILURE_MEMORY_MS / 1000 + 1;
  then[1] = then[0];
  TU_CHECK(lock[0] && utimensat(AT_FDCWD, lock, then, 0) == 0, "no record of the failure");
  sh = small_store_round(dir, 1, 1);
  TU_CHECK(atomic_load(&sh->writes) == 1, "the record was heeded past its time");
  expect_fell_back(sh, 0, strerror(ENOSPC), "after the record's time");
  munmap(sh, sizeof *sh);
  /* With room (statvfs says so), the next process writes, maps and
   * publishes, and nothing is left once it is done (retention 0). */
  TU_CHECK(mount_tmpfs(dir, 4 * small_room, MS_REMOUNT) == 0, "cannot grow the tmpfs: %s",
           strerror(errno));
  sh = small_store_round(dir, 1, 0);
  TU_CHECK(atomic_load(&sh->writes) == 1 && sh->m[0].host_maps == 1 && sh->m[0].host_decodes == 1 &&
               sh->m[0].host_fallbacks == 0,
           "with room: %d writes, %lld maps, %lld fallbacks (%s)", atomic_load(&sh->writes),
           (long long)sh->m[0].host_maps, (long long)sh->m[0].host_fallbacks, sh->why[0]);
  munmap(sh, sizeof *sh);
  char left[512];
  list_files(dir, left, sizeof left);
  TU_CHECK(left[0] == 0, "left on the store:%s", left);
  /* A store of half the segment's size, and bytes whose size the store
   * knows: the writer stops early, once the rest projects past the free
   * space, and records it for the next process. */
  TU_CHECK(mount_tmpfs(dir, small_room / 2, MS_REMOUNT) == 0, "cannot shrink the tmpfs: %s",
           strerror(errno));
  sh = small_store_round_of(small_store_chunks_child, dir, 1, 1);
  TU_CHECK(atomic_load(&sh->writes) == 1, "%d writes", atomic_load(&sh->writes));
  expect_fell_back(sh, 0, "(stopped early)", "half the room");
  munmap(sh, sizeof *sh);
  sh = small_store_round_of(small_store_chunks_child, dir, 1, 0);
  TU_CHECK(atomic_load(&sh->writes) == 0, "a write stopped early was tried again");
  expect_fell_back(sh, 0, "not tried again", "half the room, later");
  munmap(sh, sizeof *sh);
  TU_CHECK(umount2(dir, 0) == 0, "cannot unmount %s: %s", dir, strerror(errno));
}

/* Issue 19 item 15: a store slightly too small for a segment (a tmpfs a
 * page short of it).  "Never worse than without": one process on the host
 * writes until the file system is full; the others, waiting for it or
 * arriving later, fall back at once while the free space (statvfs) is
 * short of what it needed; the record heeds HOST_FAILURE_MEMORY_MS; with
 * room, the store works again. */
static void test_store_too_small(void) {
  cd_source s;
  std_source(&s);
  off_t size = segment_size(&s);
  cd_source_free(&s);
  small_room = (size_t)size / 4096 * 4096 - 4096;
  char dir[256];
  snprintf(dir, sizeof dir, "/tmp/xchg-small-XXXXXX");
  TU_CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
  TU_CHECK(exited_ok(spawn(small_store_host, dir, NULL, 0)), "the small store's processes failed");
  remove_dir(dir);
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
  TU_CHECK(cd_metrics(c).host_decodes == 1);
  xchg_cache_free(c);
  cd_source_free(&s);
  remove_dir(dir);
}

/* Two IPC streams concatenated into one part: the host store's write
 * stops at the first stream's end-of-stream marker as a decode does, so
 * the bytes after it are the acquirer's XCHG_EFORMAT there too (not a
 * segment of the first stream alone), and no segment is left. */
static void test_concatenated_part(void) {
  char dir[256];
  make_dir(dir, sizeof dir);
  xchg_buf *one = std_stream();
  size_t n = xchg_buf_size(one);
  xchg_buf *two = xchg_buf_alloc(2 * n);
  TU_CHECK(two != NULL);
  memcpy(xchg_buf_mutable_data(two), xchg_buf_data(one), n);
  memcpy(xchg_buf_mutable_data(two) + n, xchg_buf_data(one), n);
  cd_source s;
  cd_source_init(&s, &two, 1, XCHG_STREAM_NONE);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache *c = host_cache(dir, INT64_MAX, 0);
  xchg_cache_holder *h = NULL;
  xchg_error err;
  xchg_status st = xchg_cache_acquire(c, "two in one", &b, NULL, &h, &err);
  char want[128];
  snprintf(want, sizeof want,
           "part 0: bytes follow its IPC stream's end-of-stream marker, from byte %zu", n);
  TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, want), "status %d: %s", (int)st, err.message);
  if (st == XCHG_OK) xchg_cache_holder_release(h);
  TU_CHECK(cd_metrics(c).host_decodes == 0 && cd_metrics(c).host_fallbacks == 0,
           "%lld host decodes, %lld fallbacks", (long long)cd_metrics(c).host_decodes,
           (long long)cd_metrics(c).host_fallbacks);
  TU_CHECK(count_files(dir, "", NULL) == 2, "%d files left by the failed write",
           count_files(dir, "", NULL) - 2);
  xchg_cache_free(c);
  cd_source_free(&s);
  xchg_buf_unref(two);
  xchg_buf_unref(one);
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
  TU_CHECK(m.decodes == 1 && m.host_maps == 0 && m.host_fallbacks == 0 &&
               xchg_cache_host_error(c, &err) == XCHG_OK && err.message[0] == 0,
           "the host store acted without a directory");
  xchg_cache_free(c);
  cd_source_free(&s);
}

int main(int argc, char **argv) {
  alarm(300); /* a wait that never ends (a lost cancel, a lock never freed) fails the test */
  static const tu_case cases[] = {
      {"without_host_dir", test_without_host_dir},
      {"one_decode_per_host", test_one_decode_per_host},
      {"decoder_killed", test_decoder_killed},
      {"cancel_while_another_decodes", test_cancel_while_another_decodes},
      {"holder_killed", test_holder_killed},
      {"killed_at_each_point", test_killed_at_each_point},
      {"budget_and_age", test_budget_and_age},
      {"evictions_at_once", test_evictions_at_once},
      {"removal_waited_for", test_removal_waited_for},
      {"published_is_leased", test_published_is_leased},
      {"name_reused", test_name_reused},
      {"removed_before_leased", test_removed_before_leased},
      {"left_overs", test_left_overs},
      {"last_releases_at_once", test_last_releases_at_once},
      {"release_scans_nothing", test_release_scans_nothing},
      {"refused", test_refused},
      {"foreign_files", test_foreign_files},
      {"empty_segment", test_empty_segment},
      {"corrupted", test_corrupted},
      {"mapped_structure_checked", test_mapped_structure_checked},
      {"no_room", test_no_room},
      {"store_too_small", test_store_too_small},
      {"bad_bytes", test_bad_bytes},
      {"concatenated_part", test_concatenated_part},
  };
  return TU_MAIN(argc, argv, "host_store", cases);
}
