/* main.c — the `xchg` executable: the CLI's commands and the benchmarks,
 * which sit above the CLI (bench/) and join its table here. */
#include "bench.h"
#include "cli/command.h"

int main(int argc, char **argv) { return xc_main(argc, argv, &xchg_bench_command, 1); }
