/* stats.h — what every benchmark needs: a clock, repeated timings summed
 * up as median / min / max, and a line about the machine.
 *
 * SHAPES.md asks for the median of at least 5 runs after 1 warm-up, with
 * the min–max beside it, and for the machine (nproc, CPU model) to be
 * printed with every figure. */
#ifndef XCHG_BENCH_STATS_H
#define XCHG_BENCH_STATS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_RUNS 5

int64_t bench_now_ns(void);
/* CPU time of the calling process, in nanoseconds. */
int64_t bench_cpu_ns(void);

/* pthread_create of fn(arg) as thread k (1-based) of n; a thread that
 * cannot be started ends the process, saying so: a run one thread short
 * would never open the barrier its threads meet at, or would time fewer
 * threads than it says, and joining a thread never made is undefined. */
void bench_start_thread(pthread_t *id, void *(*fn)(void *), void *arg, int k, int n);

/* Runs fn on n parts at once, one thread each (the caller's runs part 0),
 * part k being the part_size bytes at parts + k * part_size, and returns
 * the time from the moment all n have started to the end of the slowest:
 * what a limit on n threads takes, thread start-up left out. */
int64_t bench_time_parts(int n, void (*fn)(void *part), void *parts, size_t part_size);

typedef struct bench_timing {
  double median_ms, min_ms, max_ms;
} bench_timing;

/* Summarises n timings given in nanoseconds (n >= 1; the array is sorted). */
bench_timing bench_summarize(int64_t *ns, int n);

/* The median, min and max of n values of any unit (n >= 1; the array is
 * sorted): bench_summarize's summary, for figures that are not timings. */
typedef struct bench_spread {
  double median, min, max;
} bench_spread;
bench_spread bench_spread_of(double *v, int n);

/* A cost (a difference of two medians) as text into buf: "3.25 ns/row",
 * or, when it is no larger than noise (the spread of the timings it comes
 * from: on a loaded host it can even come out negative), "within noise
 * (+-0.40 ns/row)": a negative cost is never printed. */
const char *bench_cost_text(char *buf, size_t size, double cost, double noise, const char *unit);

/* How the time ms compares with the baseline base_ms, as text into buf:
 * "1.85x faster" (base_ms / ms) or, when ms is the longer, "1.20x slower"
 * (ms / base_ms): a ratio below 1 is never printed. */
const char *bench_speed_text(char *buf, size_t size, double ms, double base_ms);

/* The noise of a difference of the medians of a and b: half of each
 * one's min-max spread, added. */
double bench_noise(double a_min, double a_max, double b_min, double b_max);

/* "2 cores, Intel(R) Xeon(R) ..." */
const char *bench_machine(void);
int bench_cores(void);

#endif
