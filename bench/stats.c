/* stats.c — see stats.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"

#include "codec/helpers.h"

int64_t bench_now_ns(void) { return monotonic_ns(); }

int64_t bench_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void bench_start_thread(pthread_t *id, void *(*fn)(void *), void *arg, int k, int n) {
  if (pthread_create(id, NULL, fn, arg) == 0) return;
  fprintf(stderr, "xchg bench: could not start thread %d of %d\n", k, n);
  exit(1);
}

typedef struct timed_part {
  void (*fn)(void *part);
  void *part;
  pthread_barrier_t *go;
} timed_part;

static void *run_timed_part(void *arg) {
  timed_part *t = arg;
  pthread_barrier_wait(t->go);
  t->fn(t->part);
  return NULL;
}

int64_t bench_time_parts(int n, void (*fn)(void *part), void *parts, size_t part_size) {
  pthread_t *ids = malloc((size_t)n * sizeof *ids);
  timed_part *runs = malloc((size_t)n * sizeof *runs);
  if (!ids || !runs) {
    fprintf(stderr, "xchg bench: out of memory for %d threads\n", n);
    exit(1);
  }
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, (unsigned)n);
  for (int k = 0; k < n; k++) {
    runs[k] = (timed_part){fn, (char *)parts + (size_t)k * part_size, &go};
    if (k > 0) bench_start_thread(&ids[k], run_timed_part, &runs[k], k + 1, n);
  }
  pthread_barrier_wait(&go);
  int64_t start = bench_now_ns();
  fn(runs[0].part);
  for (int k = 1; k < n; k++) pthread_join(ids[k], NULL);
  int64_t ns = bench_now_ns() - start;
  pthread_barrier_destroy(&go);
  free(ids);
  free(runs);
  return ns;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

bench_spread bench_spread_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_double);
  return (bench_spread){n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
}

static int compare_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

bench_timing bench_summarize(int64_t *ns, int n) {
  qsort(ns, (size_t)n, sizeof *ns, compare_i64);
  double median = n % 2 ? (double)ns[n / 2] : ((double)ns[n / 2 - 1] + (double)ns[n / 2]) / 2;
  bench_timing t = {median / 1e6, (double)ns[0] / 1e6, (double)ns[n - 1] / 1e6};
  return t;
}

const char *bench_cost_text(char *buf, size_t size, double cost, double noise, const char *unit) {
  if (cost <= noise || cost <= 0)
    snprintf(buf, size, "within noise (+-%.2f %s)", noise, unit);
  else
    snprintf(buf, size, "%.2f %s", cost, unit);
  return buf;
}

const char *bench_speed_text(char *buf, size_t size, double ms, double base_ms) {
  if (ms <= base_ms)
    snprintf(buf, size, "%.2fx faster", base_ms / ms);
  else
    snprintf(buf, size, "%.2fx slower", ms / base_ms);
  return buf;
}

double bench_noise(double a_min, double a_max, double b_min, double b_max) {
  return (a_max - a_min) / 2 + (b_max - b_min) / 2;
}

int bench_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

const char *bench_machine(void) {
  static char line[256];
  char model[160] = "unknown CPU";
  FILE *f = fopen("/proc/cpuinfo", "r");
  char buf[512];
  while (f && fgets(buf, sizeof buf, f)) {
    char *colon = strchr(buf, ':');
    if (strncmp(buf, "model name", 10) == 0 && colon) {
      snprintf(model, sizeof model, "%s", colon + 2);
      model[strcspn(model, "\n")] = '\0';
      break;
    }
  }
  if (f) fclose(f);
  snprintf(line, sizeof line, "%d cores, %s", bench_cores(), model);
  return line;
}
