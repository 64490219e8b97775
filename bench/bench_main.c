/* bench_main.c — the table of benchmarks and `xchg bench` dispatch. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

/* The benchmarks: add one line X(name, "what it measures") per benchmark,
 * for a function int xchg_bench_<name>(int argc, char **argv). */
#define XCHG_BENCHMARKS(X) /* e.g. X(rows, "decode rows of a shape") */                      \
  X(rows, "rows out of a compressed stream, ns/row (shape 3)")                               \
  X(decode, "Arrow IPC decode, full and narrow, vs the bare codec (shape 1)")                \
  X(write, "Arrow IPC writer MB/s per codec, 1 thread and all cores, vs memcpy")             \
  X(broadcast, "N tasks reading one broadcast, shared decode cache off/on/retain (shape 2)") \
  X(cat, "xchg cat --format csv|json of shape 1 vs nodejs-polars writeCSV")                  \
  X(host, "P processes reading one broadcast, the cache's host store off/on (shape 2)")      \
  X(shuffle,                                                                                 \
    "many small shuffle blocks into target-size batches, vs memcpy and the codec (shape 4)")

#define XCHG_BENCH_DECLARE(name, description) int xchg_bench_##name(int argc, char **argv);
#define XCHG_BENCH_ENTRY(name, description) {#name, description, xchg_bench_##name},

XCHG_BENCHMARKS(XCHG_BENCH_DECLARE)

typedef struct benchmark {
  const char *name;
  const char *description;
  int (*run)(int argc, char **argv);
} benchmark;

/* Ends with an empty entry, so that an empty list still compiles. */
static const benchmark benchmarks[] = {XCHG_BENCHMARKS(XCHG_BENCH_ENTRY){NULL, NULL, NULL}};

static void list_benchmarks(FILE *out) {
  fprintf(out, "usage: xchg bench <name> [args]\n\nbenchmarks:\n");
  if (benchmarks[0].name == NULL) fprintf(out, "  (none yet)\n");
  for (const benchmark *b = benchmarks; b->name != NULL; b++)
    fprintf(out, "  %-12s %s\n", b->name, b->description);
}

static int bench_main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    list_benchmarks(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const benchmark *b = benchmarks; b->name != NULL; b++)
    if (strcmp(argv[1], b->name) == 0) return b->run(argc - 1, argv + 1);
  fprintf(stderr, "xchg bench: unknown benchmark '%s'\n\n", argv[1]);
  list_benchmarks(stderr);
  return 2;
}

const xc_command xchg_bench_command = {"bench", "run a named benchmark ('xchg bench' lists them)",
                                       bench_main};
