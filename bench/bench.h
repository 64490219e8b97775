/* bench.h — `xchg bench <name> [args]`: benchmarks built into the CLI.
 *
 * Each benchmark is a function int xchg_bench_<name>(int argc, char **argv)
 * in bench/<name>.c (argv[0] is the benchmark's name), listed by one line in
 * XCHG_BENCHMARKS in bench/bench_main.c.  It returns a process exit code. */
#ifndef XCHG_BENCH_H
#define XCHG_BENCH_H

/* Runs the benchmark named argv[1] (argv[0] is "bench"); with no name or an
 * unknown one, lists the benchmarks. */
int xchg_bench_main(int argc, char **argv);

#endif
