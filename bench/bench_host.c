/* bench_host.c — `xchg bench host`: shape `broadcast` read by P processes
 * on one machine (as 4–8 executor JVMs of a Spark node), with the cache's
 * host store off and on.
 *
 * The broadcast is generated once, as Spark ships it (an IPC stream in
 * lz4-java 32 KiB blocks).  Each of P fork()ed processes takes its own copy
 * of those bytes (every executor receives the broadcast), creates its cache
 * (process-level sharing and retention on in both modes, so that "off" is
 * today's one decode per process; "on" adds a host directory on /dev/shm)
 * and runs N tasks on T threads: acquire, read every value into checksums,
 * check them, release.  Reported per run: decodes on the host (summed over
 * the processes), summed task CPU (each task's thread CPU clock), the peak
 * of the summed PSS of the processes (/proc/PID/smaps_rollup, sampled
 * while they run and once more when all hold the broadcast), one decoded
 * copy's bytes, the input bytes summed over the processes, and the wall
 * time from the start signal to the last process done, and the wall time
 * of the slowest acquire of any task (deciding, decoding or mapping,
 * waiting: what a task waits for before it reads).
 *
 * Reading every value costs the same off and on, and with the store off
 * each process already decodes only once, so the summed task CPU can fall
 * by at most (P-1)/P of the decode cost: its on/off ratio is bounded below
 * by reading plus 1/P of a decode.  So once every process is done, each
 * runs its N tasks on T threads again, on its retained entry (reading
 * alone, under the same load as the first round), and the task CPU beyond
 * reading is reported per process: that of a process that decoded (every
 * process, with the store off) and that of a process that found the
 * broadcast on the host and mapped it, whose ratio to the first is what
 * the host store saves a process.  Runs with the store off and on
 * alternate; medians (and min-max) over --runs.
 *
 * --validation both adds a third mode, interleaved with the others: the
 * store on, every process's cache checking bounds only
 * (XCHG_VALIDATE_BOUNDS), so that a mapping process does not check the
 * segment's offsets and dictionary indices: what that check costs.
 * --dir puts the runs' host directories elsewhere than /dev/shm, e.g. on
 * a tmpfs too small for the segment, where the store must fall back
 * without costing more time than no store. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broadcast_data.h"
#include "bench.h"
#include "cli/options.h"
#include "stats.h"
#include "xchg/stream.h"
#include "xchg/testing.h"

#define MAX_PROCESSES 64
#define MAX_RUNS 64 /* the summaries' arrays */
#define KEY "broadcast_0"

/* The CPU one process's tasks spend, per kind of process (one that
 * decoded: every process with the store off; one that mapped what
 * another decoded), beyond reading the values (the first round of tasks
 * less the second), and in acquire and release alone (the first round:
 * deciding, decoding or mapping, waiting, without the page faults of the
 * first read of a mapping, which count beyond reading). */
enum { BEYOND_READING, ACQUIRING, N_FIGURES };
enum { DECODING, MAPPING, N_KINDS };
static const char *const figure_name[N_FIGURES] = {"beyond reading", "in acquire+release"};
static const char *const figure_json[N_FIGURES][N_KINDS] = {
    {"decoding_process_beyond_read_ms", "mapping_process_beyond_read_ms"},
    {"decoding_process_acquire_ms", "mapping_process_acquire_ms"}};

/* What a child process reports. */
typedef struct child_report {
  int64_t cpu_ns;
  int64_t acquire_ns;         /* of cpu_ns, in acquire and release */
  int64_t read_ns;            /* reading alone: the tasks run again, on the retained entry */
  int64_t slowest_acquire_ns; /* wall time, over the first round's tasks */
  int64_t decodes, host_decodes, host_fallbacks, bytes_held, bytes_shared;
  int errors;
} child_report;

/* Memory shared by the parent and the children of one run. */
typedef struct run_shared {
  atomic_int ready, read_once, done, go, finish;
  /* when the last process finished its first round (CLOCK_MONOTONIC, one
   * clock for every process): the wall time's end, to the nanosecond, where
   * the parent polls every 5 ms */
  _Atomic int64_t first_round_end_ns;
  child_report child[MAX_PROCESSES];
} run_shared;

/* The modes a run alternates: the store off, on, and on with bounds
 * checks only (--validation both). */
enum { MODE_OFF, MODE_ON, MODE_ON_BOUNDS, N_MODES };
#define VALIDATION_BOTH 2 /* --validation both: besides XCHG_VALIDATE_FULL and _BOUNDS */

typedef struct config {
  int processes, tasks, threads;
  int host_sharing;
  xchg_validation validation;
  const char *parent_dir; /* of the runs' host directories */
  const xchg_buf *input;  /* the bytes as shipped (lz4-java) */
  shape_sums want;
} config;

typedef struct result {
  int processes, threads, tasks, host_sharing;
  xchg_validation validation;
  int64_t decodes, fallbacks, pss_bytes, decoded_bytes, input_bytes;
  double task_cpu_ms, wall_ms, acquire_wall_ms;
  double read_cpu_ms; /* all the tasks' reading alone: their second round, all hits */
  /* The figures of one process, averaged over the processes of each kind
   * (n_mapping mapped; beyond reading is a difference of two clocks, so
   * noise can make it negative). */
  double per_process[N_FIGURES][N_KINDS];
  int n_mapping;
} result;

/* ---- a child process ---------------------------------------------------------------- */

typedef struct child_state {
  xchg_cache *cache;
  xchg_broadcast_part part;
  const config *cfg;
  atomic_int next_task;
  atomic_int errors;
  atomic_llong *cpu_ns;            /* where the tasks of this round add their CPU */
  atomic_llong *acquire_ns;        /* and that of their acquire and release */
  atomic_llong slowest_acquire_ns; /* wall time, first round */
} child_state;

static void run_task(child_state *cs) {
  xchg_broadcast bytes = {&cs->part, 1, NULL, NULL};
  xchg_cache_holder *h;
  xchg_error err;
  shape_sums got;
  memset(&got, 0, sizeof got);
  int64_t t0 = bench_thread_cpu_ns(), wall0 = bench_now_ns();
  xchg_status st = xchg_cache_acquire(cs->cache, KEY, &bytes, NULL, &h, &err);
  int64_t acquire_ns = bench_thread_cpu_ns() - t0, wall_ns = bench_now_ns() - wall0;
  for (long long was = atomic_load(&cs->slowest_acquire_ns);
       wall_ns > was && !atomic_compare_exchange_weak(&cs->slowest_acquire_ns, &was, wall_ns);) {}
  if (st != XCHG_OK || broadcast_read_all(h, &got, &err) != 0) {
    fprintf(stderr, "xchg bench host: %s\n", err.message);
    atomic_fetch_add(&cs->errors, 1);
    return;
  }
  t0 = bench_thread_cpu_ns();
  xchg_cache_holder_release(h);
  atomic_fetch_add(cs->acquire_ns, acquire_ns + bench_thread_cpu_ns() - t0);
  if (memcmp(got.value, cs->cfg->want.value, sizeof got.value[0] * SHAPE_BROADCAST_COLUMNS) != 0) {
    fprintf(stderr, "xchg bench host: checksums differ\n");
    atomic_fetch_add(&cs->errors, 1);
  }
}

static void *task_thread(void *arg) {
  child_state *cs = arg;
  while (atomic_fetch_add(&cs->next_task, 1) < cs->cfg->tasks) {
    int64_t t0 = bench_thread_cpu_ns();
    run_task(cs);
    atomic_fetch_add(cs->cpu_ns, bench_thread_cpu_ns() - t0);
  }
  return NULL;
}

/* Runs the N tasks on T threads; their summed CPU, and in *acquire_ns
 * that of their acquires and releases. */
static int64_t run_round(child_state *cs, int threads, int64_t *acquire_ns) {
  pthread_t th[256];
  atomic_llong cpu_ns, in_acquire;
  atomic_init(&cpu_ns, 0);
  atomic_init(&in_acquire, 0);
  atomic_store(&cs->next_task, 0);
  cs->cpu_ns = &cpu_ns;
  cs->acquire_ns = &in_acquire;
  for (int i = 0; i < threads; i++) bench_start_thread(&th[i], task_thread, cs, i + 1, threads);
  for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
  *acquire_ns = atomic_load(&in_acquire);
  return atomic_load(&cpu_ns);
}

static void wait_flag(atomic_int *flag, int value) {
  while (atomic_load(flag) < value) usleep(500);
}

/* A child dies with the bench (SIGKILL when its parent goes, whatever
 * killed it): left alone it would wait for ever for the parent's next
 * step, spinning and holding its segment in the host directory.  The
 * parent's cleanup signals take their default action again in it: the
 * parent alone cleans up. */
static void child_follows_parent(pid_t parent) {
  static const int reset[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++) {
    struct sigaction sa;
    if (sigaction(reset[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN) signal(reset[i], SIG_DFL);
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1); /* gone before the line above */
}

/* One executor: its own copy of the bytes, its cache, its tasks; it keeps
 * the broadcast (retained) until the parent has measured. */
static int run_child(const config *cfg, const char *dir, run_shared *sh, int index) {
  size_t size = xchg_buf_size(cfg->input);
  xchg_buf *own = xchg_buf_alloc(size);
  if (!own) return 1;
  memcpy(xchg_buf_mutable_data(own), xchg_buf_data(cfg->input), size);
  xchg_chunk chunk = {xchg_buf_data(own), size};
  xchg_cache_options o;
  xchg_cache_options_init(&o);
  o.retain_bytes = (int64_t)1 << 40;
  o.read.validation = cfg->validation;
  o.host_dir = cfg->host_sharing ? dir : NULL;
  o.host_retain_bytes = (int64_t)1 << 40;
  child_state cs;
  memset(&cs, 0, sizeof cs);
  if (xchg_cache_create(&o, &cs.cache, NULL) != XCHG_OK) {
    xchg_buf_unref(own);
    return 1;
  }
  cs.part = (xchg_broadcast_part){&chunk, 1, XCHG_STREAM_LZ4_JAVA};
  cs.cfg = cfg;
  int threads = cfg->threads < 256 ? cfg->threads : 256;
  atomic_fetch_add(&sh->ready, 1);
  wait_flag(&sh->go, 1);
  int64_t acquire_ns, hits_acquire_ns;
  int64_t cpu_ns = run_round(&cs, threads, &acquire_ns);
  int64_t ended = bench_now_ns(), latest = atomic_load(&sh->first_round_end_ns);
  while (ended > latest && !atomic_compare_exchange_weak(&sh->first_round_end_ns, &latest, ended)) {
  }
  int64_t slowest_acquire_ns = atomic_load(&cs.slowest_acquire_ns);
  /* The same tasks again, every process at it as in the first round, on
   * the retained entry: what reading the values alone costs. */
  atomic_fetch_add(&sh->read_once, 1);
  wait_flag(&sh->read_once, cfg->processes);
  int64_t read_ns = run_round(&cs, threads, &hits_acquire_ns);
  xchg_cache_metrics m;
  xchg_cache_get_metrics(cs.cache, &m);
  child_report *r = &sh->child[index];
  r->cpu_ns = cpu_ns;
  r->acquire_ns = acquire_ns;
  r->read_ns = read_ns;
  r->slowest_acquire_ns = slowest_acquire_ns;
  r->decodes = m.decodes;
  r->host_decodes = m.host_decodes;
  r->host_fallbacks = m.host_fallbacks;
  r->bytes_held = m.bytes_held;
  r->bytes_shared = m.bytes_shared;
  r->errors = atomic_load(&cs.errors);
  atomic_fetch_add(&sh->done, 1);
  wait_flag(&sh->finish, 1);
  xchg_cache_free(cs.cache);
  xchg_buf_unref(own);
  return r->errors ? 1 : 0;
}

/* ---- the parent ----------------------------------------------------------------------- */

/* SIGINT, SIGTERM or SIGHUP received by the bench (0: none): its run stops,
 * kills its children and removes its host directory (segments of tens of
 * MB in /dev/shm, which is memory), then the bench dies of the signal. */
static volatile sig_atomic_t stop_signal;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_STOP_SIGNALS (sizeof stop_signals / sizeof stop_signals[0])

static void note_stop(int sig) {
  if (stop_signal == 0) stop_signal = sig;
}

/* Catches the stop signals that are not ignored (nohup stays). */
static void catch_stop_signals(void) {
  for (size_t i = 0; i < N_STOP_SIGNALS; i++) {
    struct sigaction sa;
    if (sigaction(stop_signals[i], NULL, &sa) != 0 || sa.sa_handler == SIG_IGN) continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = note_stop;
    sigaction(stop_signals[i], &sa, NULL);
  }
}

/* Once everything is cleaned up: dies of the stop signal received, if any. */
static void die_of_stop_signal(void) {
  if (stop_signal == 0) return;
  signal(stop_signal, SIG_DFL);
  raise(stop_signal);
}

/* The children of a run, as the parent watches them. */
typedef struct children {
  pid_t pids[MAX_PROCESSES];
  int n; /* forked */
  int reaped[MAX_PROCESSES];
  int status[MAX_PROCESSES];
} children;

/* Whether the run must stop: a stop signal came, or a child ended before
 * the run was done with it (killed, crashed, failed early): its siblings
 * would wait for it for ever.  Says why, once. */
static int run_broken(children *c) {
  if (stop_signal != 0) return 1;
  for (int i = 0; i < c->n; i++) {
    if (c->reaped[i] || waitpid(c->pids[i], &c->status[i], WNOHANG) != c->pids[i]) continue;
    c->reaped[i] = 1;
    int st = c->status[i];
    if (WIFSIGNALED(st))
      fprintf(stderr, "xchg bench host: process %d (pid %d) was killed by signal %d (%s)\n", i,
              (int)c->pids[i], WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
      fprintf(stderr, "xchg bench host: process %d (pid %d) ended early, exit status %d\n", i,
              (int)c->pids[i], WEXITSTATUS(st));
    return 1;
  }
  return 0;
}

/* wait_flag for the parent: 0 once flag reaches value, -1 when the run
 * broke first (run_broken). */
static int watch_flag(children *c, atomic_int *flag, int value) {
  while (atomic_load(flag) < value) {
    if (run_broken(c)) return -1;
    usleep(500);
  }
  return 0;
}

/* Ends a broken run's children: killed, then reaped. */
static void kill_children(children *c) {
  for (int i = 0; i < c->n; i++)
    if (!c->reaped[i]) kill(c->pids[i], SIGKILL);
  for (int i = 0; i < c->n; i++)
    if (!c->reaped[i]) {
      while (waitpid(c->pids[i], &c->status[i], 0) < 0 && errno == EINTR) {}
      c->reaped[i] = 1;
    }
}

static int64_t pss_bytes(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
  FILE *f = fopen(path, "r");
  int64_t kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "Pss:", 4) == 0) kb = atoll(line + 4);
  if (f) fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

static int64_t summed_pss(const pid_t *pids, int n) {
  int64_t sum = 0;
  for (int i = 0; i < n; i++) {
    int64_t p = pss_bytes(pids[i]);
    if (p < 0) return -1;
    sum += p;
  }
  return sum;
}

/* Removes the run's host directory: the bench made it and every file in it. */
static void remove_host_dir(const char *dir) {
  DIR *d = opendir(dir);
  for (struct dirent *de; d && (de = readdir(d));)
    if (de->d_name[0] != '.') unlinkat(dirfd(d), de->d_name, 0);
  if (d) closedir(d);
  rmdir(dir);
}

/* Makes a run's host directory in parent (dir: its name); says why not,
 * naming parent, on standard error. */
static int make_host_dir(const char *parent, char *dir, size_t size) {
  int n = snprintf(dir, size, "%s/xchg-bench-host-XXXXXX", parent);
  if (n >= 0 && (size_t)n < size && mkdtemp(dir)) return 0;
  fprintf(stderr, "xchg bench host: --dir '%s': cannot create a host directory there: %s\n", parent,
          n >= 0 && (size_t)n < size ? strerror(errno) : "name too long");
  return -1;
}

/* Whether the runs can make their host directories in parent: checked
 * before anything is printed, so that a mistyped --dir fails at once with
 * its name rather than after the table's header. */
static int host_dir_usable(const char *parent) {
  char dir[4096];
  if (make_host_dir(parent, dir, sizeof dir) != 0) return 0;
  rmdir(dir);
  return 1;
}

static int run(config *cfg, result *out) {
  char dir[4096];
  if (cfg->host_sharing && make_host_dir(cfg->parent_dir, dir, sizeof dir) != 0) return -1;
  run_shared *sh =
      mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) return -1;
  memset(sh, 0, sizeof *sh);
  children kids;
  memset(&kids, 0, sizeof kids);
  pid_t *pids = kids.pids, parent = getpid();
  fflush(NULL);
  for (int i = 0; i < cfg->processes && stop_signal == 0; i++, kids.n++)
    if ((pids[i] = fork()) == 0) {
      child_follows_parent(parent);
      _exit(run_child(cfg, dir, sh, i));
    } else if (pids[i] < 0) {
      perror("xchg bench host: fork");
      break;
    }
  int broken = kids.n < cfg->processes || watch_flag(&kids, &sh->ready, cfg->processes) != 0;
  int64_t peak = broken ? 0 : summed_pss(pids, cfg->processes), t0 = bench_now_ns();
  atomic_store(&sh->go, 1);
  while (!broken && atomic_load(&sh->read_once) < cfg->processes) {
    int64_t now = summed_pss(pids, cfg->processes);
    if (now > peak) peak = now;
    broken = run_broken(&kids);
    usleep(5000);
  }
  double wall_ms = (double)(atomic_load(&sh->first_round_end_ns) - t0) / 1e6;
  int64_t holding = broken ? 0 : summed_pss(pids, cfg->processes); /* every process holds it now */
  if (holding > peak) peak = holding;
  broken = broken || watch_flag(&kids, &sh->done, cfg->processes) != 0;
  if (broken) {
    kill_children(&kids);
    munmap(sh, sizeof *sh);
    if (cfg->host_sharing) remove_host_dir(dir);
    return -1;
  }
  atomic_store(&sh->finish, 1);
  int failed = 0, n[N_KINDS] = {0, 0};
  memset(out, 0, sizeof *out);
  out->wall_ms = wall_ms;
  for (int i = 0; i < cfg->processes; i++) {
    int status = kids.status[i];
    if (!kids.reaped[i] && waitpid(pids[i], &status, 0) != pids[i]) failed = 1;
    failed |= !WIFEXITED(status) || WEXITSTATUS(status);
    const child_report *c = &sh->child[i];
    int kind =
        !cfg->host_sharing || c->host_decodes > 0 || c->host_fallbacks > 0 ? DECODING : MAPPING;
    out->per_process[BEYOND_READING][kind] += (double)(c->cpu_ns - c->read_ns) / 1e6;
    out->per_process[ACQUIRING][kind] += (double)c->acquire_ns / 1e6;
    n[kind]++;
    out->task_cpu_ms += (double)sh->child[i].cpu_ns / 1e6;
    if ((double)c->slowest_acquire_ns / 1e6 > out->acquire_wall_ms)
      out->acquire_wall_ms = (double)c->slowest_acquire_ns / 1e6;
    out->read_cpu_ms += (double)sh->child[i].read_ns / 1e6;
    out->decodes += sh->child[i].decodes;
    out->fallbacks += sh->child[i].host_fallbacks;
    if (sh->child[i].bytes_held > out->decoded_bytes) out->decoded_bytes = sh->child[i].bytes_held;
  }
  for (int f = 0; f < N_FIGURES; f++)
    for (int k = 0; k < N_KINDS; k++)
      if (n[k]) out->per_process[f][k] /= n[k];
  out->n_mapping = n[MAPPING];
  out->processes = cfg->processes;
  out->threads = cfg->threads;
  out->tasks = cfg->tasks;
  out->host_sharing = cfg->host_sharing;
  out->validation = cfg->validation;
  out->pss_bytes = peak;
  out->input_bytes = (int64_t)xchg_buf_size(cfg->input) * cfg->processes;
  munmap(sh, sizeof *sh);
  if (cfg->host_sharing) remove_host_dir(dir);
  return failed ? -1 : 0;
}

/* ---- summaries ---------------------------------------------------------------------- */

/* The median run of (processes, mode) over `runs` runs: results[r] are in
 * run order; the fields are medians each, min-max beside the CPU and PSS. */
typedef struct summary {
  result median;
  bench_spread cpu, pss, wall, acquire_wall, per_process[N_FIGURES][N_KINDS];
} summary;

static summary summarize(const result *rs, int runs) {
  double cpu[64], pss[64], wall[64], read[64], acquire_wall[64];
  for (int r = 0; r < runs; r++) {
    read[r] = rs[r].read_cpu_ms;
    acquire_wall[r] = rs[r].acquire_wall_ms;
    cpu[r] = rs[r].task_cpu_ms;
    pss[r] = (double)rs[r].pss_bytes;
    wall[r] = rs[r].wall_ms;
  }
  summary s;
  memset(&s, 0, sizeof s);
  s.median = rs[0];
  s.cpu = bench_spread_of(cpu, runs);
  s.pss = bench_spread_of(pss, runs);
  s.wall = bench_spread_of(wall, runs);
  s.acquire_wall = bench_spread_of(acquire_wall, runs);
  s.median.acquire_wall_ms = s.acquire_wall.median;
  s.median.task_cpu_ms = s.cpu.median;
  s.median.pss_bytes = (int64_t)s.pss.median;
  s.median.wall_ms = s.wall.median;
  s.median.read_cpu_ms = bench_spread_of(read, runs).median;
  for (int f = 0; f < N_FIGURES; f++)
    for (int k = 0; k < N_KINDS; k++) {
      double v[64];
      for (int r = 0; r < runs; r++) v[r] = rs[r].per_process[f][k];
      s.per_process[f][k] = bench_spread_of(v, runs);
      s.median.per_process[f][k] = s.per_process[f][k].median;
    }
  for (int r = 1; r < runs; r++)
    if (rs[r].decodes > s.median.decodes) s.median.decodes = rs[r].decodes; /* the worst */
  return s;
}

/* The mode of a row: "off", "on", or "on-b" (on, bounds checks only). */
static const char *mode_name(const result *r) {
  if (!r->host_sharing) return "off";
  return r->validation == XCHG_VALIDATE_BOUNDS ? "on-b" : "on";
}

static void print_row(const summary *s) {
  const result *r = &s->median;
  char cpu[64], pss[64], acquire[64];
  snprintf(cpu, sizeof cpu, "%.1f [%.1f-%.1f]", s->cpu.median, s->cpu.min, s->cpu.max);
  snprintf(pss, sizeof pss, "%.1f [%.1f-%.1f]", s->pss.median / 1e6, s->pss.min / 1e6,
           s->pss.max / 1e6);
  snprintf(acquire, sizeof acquire, "%.1f [%.1f-%.1f]", s->acquire_wall.median, s->acquire_wall.min,
           s->acquire_wall.max);
  printf("%9d %7d %5d %-4s %7lld %9lld %24s %24s %10.1f %10.1f %10.1f %24s\n", r->processes,
         r->threads, r->tasks, mode_name(r), (long long)r->decodes, (long long)r->fallbacks, cpu,
         pss, (double)r->decoded_bytes / 1e6, (double)r->input_bytes / 1e6, r->wall_ms, acquire);
}

/* The task CPU beyond reading the values (which costs the same off and
 * on): decoding, writing or mapping the segment, waiting. */
static double beyond_reading(const summary *s) {
  return s->median.task_cpu_ms - s->median.read_cpu_ms;
}

/* The goals are about what P processes share: one process has nobody to
 * share with, so its line shows what the store costs it, without goals. */
static void print_goals(const summary *off, const summary *on) {
  double cpu_ratio = on->median.task_cpu_ms / off->median.task_cpu_ms;
  double budget = (double)(on->median.decoded_bytes + on->median.input_bytes);
  if (on->median.processes == 1)
    printf(
        "P=1: one process, nobody to share the decoded copy with, so no goal applies: host decodes "
        "%lld; what the store costs it: task CPU on/off %.3f; summed PSS on %.2f x (one copy + inputs), "
        "off %.2f x\n",
        (long long)on->median.decodes, cpu_ratio, (double)on->median.pss_bytes / budget,
        (double)off->median.pss_bytes / budget);
  else
    printf(
        "P=%d: host decodes %lld (goal 1); task CPU on/off %.3f (goal <= 0.06); summed PSS "
        "on %.2f x (one copy + inputs) (goal <= 1.2), off %.2f x\n",
        on->median.processes, (long long)on->median.decodes, cpu_ratio,
        (double)on->median.pss_bytes / budget, (double)off->median.pss_bytes / budget);
  printf(
      "     reading the values costs %.1f ms (off) / %.1f ms (on) of it; beyond reading, "
      "on/off %.3f\n",
      off->median.read_cpu_ms, on->median.read_cpu_ms, beyond_reading(on) / beyond_reading(off));
  for (int f = 0; f < N_FIGURES; f++) {
    const bench_spread *d_off = &off->per_process[f][DECODING],
                       *d_on = &on->per_process[f][DECODING];
    const bench_spread *m_on = &on->per_process[f][MAPPING];
    printf("     %s, per process: decoding %.1f [%.1f-%.1f] ms off, %.1f [%.1f-%.1f] ms on",
           figure_name[f], d_off->median, d_off->min, d_off->max, d_on->median, d_on->min,
           d_on->max);
    if (on->median.n_mapping > 0)
      printf("; mapping %.1f [%.1f-%.1f] ms: %.1f%% of a decoding process off (goal <= 6%%)",
             m_on->median, m_on->min, m_on->max, 100 * m_on->median / d_off->median);
    printf("\n");
  }
}

/* What checking the mapped segments' offsets and indices costs (on, the
 * default XCHG_VALIDATE_FULL, against on-b, bounds checks only): the
 * figures of a mapping process, which reads another's segment. */
static void print_check_cost(const summary *on, const summary *on_b) {
  if (on->median.n_mapping == 0 || on_b->median.n_mapping == 0) return;
  for (int f = 0; f < N_FIGURES; f++) {
    const bench_spread *full = &on->per_process[f][MAPPING],
                       *bounds = &on_b->per_process[f][MAPPING];
    printf(
        "     checking mapped segments, %s, per mapping process: %.1f [%.1f-%.1f] ms "
        "(on) against %.1f [%.1f-%.1f] ms (on-b, bounds only): +%.1f ms\n",
        figure_name[f], full->median, full->min, full->max, bounds->median, bounds->min,
        bounds->max, full->median - bounds->median);
  }
  printf("     slowest acquire %.1f ms (on) against %.1f ms (on-b)\n", on->median.acquire_wall_ms,
         on_b->median.acquire_wall_ms);
}

/* A per-process figure, null when no process was of that kind. */
static void print_json_ms(const char *name, int processes, double ms) {
  if (processes == 0)
    printf(",\"%s\":null", name);
  else
    printf(",\"%s\":%.3f", name, ms);
}

static void print_json_row(const summary *s, int first) {
  const result *r = &s->median;
  printf(
      "%s{\"processes\":%d,\"threads\":%d,\"tasks\":%d,\"host_sharing\":\"%s\","
      "\"validation\":\"%s\",\"decodes\":%lld,"
      "\"task_cpu_ms\":%.3f,\"pss_bytes\":%lld,\"decoded_bytes\":%lld,\"input_bytes\":%lld,"
      "\"wall_ms\":%.3f,\"host_fallbacks\":%lld,\"read_cpu_ms\":%.3f,\"task_cpu_ms_min\":%.3f,\"task_cpu_ms_max\":%.3f,"
      "\"pss_bytes_min\":%lld,\"pss_bytes_max\":%lld",
      first ? "" : ",", r->processes, r->threads, r->tasks, r->host_sharing ? "on" : "off",
      r->validation == XCHG_VALIDATE_BOUNDS ? "bounds" : "full", (long long)r->decodes,
      r->task_cpu_ms, (long long)r->pss_bytes, (long long)r->decoded_bytes,
      (long long)r->input_bytes, r->wall_ms, (long long)r->fallbacks, r->read_cpu_ms, s->cpu.min,
      s->cpu.max, (long long)s->pss.min, (long long)s->pss.max);
  printf(",\"acquire_wall_ms\":%.3f,\"acquire_wall_ms_min\":%.3f,\"acquire_wall_ms_max\":%.3f",
         s->acquire_wall.median, s->acquire_wall.min, s->acquire_wall.max);
  for (int f = 0; f < N_FIGURES; f++) {
    print_json_ms(figure_json[f][DECODING], r->processes - r->n_mapping,
                  r->per_process[f][DECODING]);
    print_json_ms(figure_json[f][MAPPING], r->n_mapping, r->per_process[f][MAPPING]);
  }
  printf("}");
}

/* ---- main ----------------------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: xchg bench host [--processes a,b,..] [--tasks N] [--threads T] [--rows R]\n"
          "                       [--runs K] [--dir D] [--validation full|bounds|both] [--json]\n"
          "  shape `broadcast`: P processes each run N tasks on T threads reading one broadcast,\n"
          "  the cache's host store off and on (runs alternate; medians of K runs).\n"
          "  Reported: decodes on the host, summed task CPU, peak summed PSS, one decoded\n"
          "  copy, the inputs, wall time; and the task CPU beyond reading the values (which\n"
          "  costs the same off and on) of one process: one that decoded, and one that\n"
          "  mapped the broadcast another process had decoded, with its share of the\n"
          "  first; the same for the CPU of acquire and release alone.  With the store\n"
          "  off every process decodes once already, so summed\n"
          "  task CPU on/off cannot fall below reading plus 1/P of a decode.\n"
          "  The slowest acquire of any task (wall time) and the fallbacks say what a\n"
          "  store that cannot take the broadcast costs (--dir D: the host directories\n"
          "  in D, e.g. a small tmpfs; default /dev/shm).  --validation: how every\n"
          "  process's cache checks what it reads (default full: a mapping process\n"
          "  checks the segment's offsets and indices); both adds a third mode, on-b,\n"
          "  the store on with bounds checks only, interleaved: what the check costs.\n"
          "  Defaults: processes 1,2,4; 16 tasks; 4 threads; 1,000,000 rows; 3 runs.\n");
}

/* The input as Spark ships it, and the checksums of its values. */
static xchg_buf *make_input(int64_t rows, shape_sums *want) {
  memset(want, 0, sizeof *want);
  xchg_buf *ipc = broadcast_write_ipc(rows, XCHG_BLOCK_NONE, want);
  if (!ipc) return NULL;
  xchg_stream_encode_options eo;
  xchg_stream_encode_options_init(&eo);
  eo.block_size = 32 * 1024;
  xchg_buf *lz4 = NULL;
  xchg_error err;
  if (xchg_stream_encode(XCHG_STREAM_LZ4_JAVA, &eo, xchg_buf_data(ipc), xchg_buf_size(ipc), &lz4,
                         &err) != XCHG_OK)
    fprintf(stderr, "xchg bench host: %s\n", err.message);
  xchg_buf_unref(ipc);
  return lz4;
}

int xchg_bench_host(int argc, char **argv) {
  static const struct option long_opts[] = {
      {"processes", 1, 0, 'p'},  {"tasks", 1, 0, 'n'}, {"threads", 1, 0, 't'}, {"rows", 1, 0, 'r'},
      {"runs", 1, 0, 'k'},       {"json", 0, 0, 'j'},  {"help", 0, 0, 'h'},    {"dir", 1, 0, 'd'},
      {"validation", 1, 0, 'v'}, {0, 0, 0, 0}};
  int processes[8] = {1, 2, 4}, n_processes = 3, tasks = 16, threads = 4, runs = 3, json = 0, opt;
  int64_t rows = SHAPE_BROADCAST_ROWS, v = 0;
  struct stat st;
  const char *parent_dir = stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp";
  int validation = XCHG_VALIDATE_FULL;
  bool ok = true;
  xc_options_begin();
  while (ok && (opt = xc_getopt(argc, argv, ":h", long_opts)) != -1) {
    switch (opt) {
      case 'p':
        n_processes =
            xc_list_option("bench host", "--processes", optarg, 1, MAX_PROCESSES, processes, 8);
        ok = n_processes > 0;
        break;
      case 'n':
        ok = xc_int_option("bench host", "--tasks", optarg, 1, BENCH_MAX_TASKS, &v), tasks = (int)v;
        break;
      case 't':
        ok = xc_int_option("bench host", "--threads", optarg, 1, BENCH_MAX_THREADS, &v),
        threads = (int)v;
        break;
      case 'r': ok = xc_int_option("bench host", "--rows", optarg, 1, BENCH_MAX_ROWS, &rows); break;
      case 'k':
        ok = xc_int_option("bench host", "--runs", optarg, 1, MAX_RUNS, &v), runs = (int)v;
        break;
      case 'j': json = 1; break;
      case 'd':
        if (*optarg == '\0') /* it would make the host directories at / */
          return xc_usage_error("bench host", "--dir must name a directory, not ''");
        parent_dir = optarg;
        break;
      case 'v':
        validation = strcmp(optarg, "full") == 0     ? XCHG_VALIDATE_FULL
                     : strcmp(optarg, "bounds") == 0 ? XCHG_VALIDATE_BOUNDS
                     : strcmp(optarg, "both") == 0   ? VALIDATION_BOTH
                                                     : -1;
        if (validation < 0)
          return xc_usage_error("bench host", "--validation must be full, bounds or both, not '%s'",
                                optarg);
        break;
      case 'h': usage(stdout); return 0;
      default: return xc_option_error("bench host", argv, long_opts, opt);
    }
  }
  if (!ok) return 2;
  if (optind < argc) return xc_usage_error("bench host", "unexpected argument '%s'", argv[optind]);
  if (!host_dir_usable(parent_dir)) return 1;
  config cfg;
  memset(&cfg, 0, sizeof cfg);
  xchg_buf *input = make_input(rows, &cfg.want);
  if (!input) return 1;
  cfg.input = input;
  cfg.tasks = tasks;
  cfg.threads = threads;
  cfg.parent_dir = parent_dir;
  if (!json) {
    printf("machine: %s\n", bench_machine());
    printf(
        "shape broadcast: %lld rows, lz4-java %.1f MB per process; %d tasks x %d threads per "
        "process; medians of %d runs [min-max]\n\n",
        (long long)rows, (double)xchg_buf_size(input) / 1e6, tasks, threads, runs);
    printf("%9s %7s %5s %-4s %7s %9s %24s %24s %10s %10s %10s %24s\n", "processes", "threads",
           "tasks", "host", "decodes", "fallbacks", "task CPU ms", "summed PSS MB", "decoded MB",
           "input MB", "wall ms", "slowest acquire ms");
  } else {
    printf(
        "{\"benchmark\":\"host\",\"shape\":\"broadcast\",\"rows\":%lld,\"machine\":\"%s\","
        "\"runs\":%d,\"results\":[",
        (long long)rows, bench_machine(), runs);
  }
  int rc = 0, first = 1;
  int n_modes = validation == VALIDATION_BOTH ? N_MODES : MODE_ON_BOUNDS;
  catch_stop_signals();
  result *rs = calloc((size_t)runs * N_MODES, sizeof *rs);
  for (int pi = 0; pi < n_processes && rc == 0 && rs; pi++) {
    cfg.processes = processes[pi];
    for (int r = 0; r < runs && rc == 0; r++)
      for (int mode = 0; mode < n_modes && rc == 0; mode++) {
        cfg.host_sharing = mode != MODE_OFF;
        cfg.validation = mode == MODE_ON_BOUNDS || validation == XCHG_VALIDATE_BOUNDS
                             ? XCHG_VALIDATE_BOUNDS
                             : XCHG_VALIDATE_FULL;
        rc = run(&cfg, &rs[mode * runs + r]);
      }
    if (rc != 0) break;
    summary sum[N_MODES];
    for (int mode = 0; mode < n_modes; mode++) sum[mode] = summarize(rs + mode * runs, runs);
    for (int mode = 0; mode < n_modes; mode++) {
      if (json)
        print_json_row(&sum[mode], first);
      else
        print_row(&sum[mode]);
      first = 0;
    }
    if (!json) print_goals(&sum[MODE_OFF], &sum[MODE_ON]);
    if (!json && n_modes == N_MODES) print_check_cost(&sum[MODE_ON], &sum[MODE_ON_BOUNDS]);
    fflush(stdout);
  }
  free(rs);
  xchg_buf_unref(input);
  die_of_stop_signal();
  if (json) printf("]}\n");
  if (rc != 0) fprintf(stderr, "xchg bench host: a run failed\n");
  return rc == 0 && rs ? 0 : 1;
}
