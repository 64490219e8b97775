/* bench.h — `xchg bench <name> [args]`: benchmarks linked into the xchg executable.
 *
 * Each benchmark is a function int xchg_bench_<name>(int argc, char **argv)
 * in bench/bench_<name>.c (argv[0] is the benchmark's name), listed by one
 * line in XCHG_BENCHMARKS in bench/bench_main.c.  It returns a process exit
 * code.  The benchmarks sit above the CLI: this library (xchg_bench) uses
 * libxchg and src/gen, and joins the CLI's command table as one more
 * command (src/app/main.c). */
#ifndef XCHG_BENCH_H
#define XCHG_BENCH_H

#include "cli/command.h"

/* The ranges the benchmarks accept (what fits their tables and memory). */
#define BENCH_MAX_ROWS 1000000000
#define BENCH_MAX_RUNS 1000
#define BENCH_MAX_THREADS 256
#define BENCH_MAX_TASKS 100000

/* `xchg bench`: runs the benchmark named argv[1] (argv[0] is "bench");
 * with no name or an unknown one, lists the benchmarks. */
extern const xc_command xchg_bench_command;

#endif
