/* main.c — `xchg <command> [args]`: finds the command and runs it. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli/cli.h"
#include "cli/cmd_writer.h"

typedef struct command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
    {"inspect", "sum up an Arrow IPC input (rows, bytes per column, schema, messages) or row stream",
     xc_cmd_inspect},
    {"cat", "print the rows of an Arrow IPC file or stream as CSV, JSON or Arrow JSON", xc_cmd_cat},
    {"convert", "re-encode an Arrow IPC input (format, codec, batch size)", xc_cmd_convert},
    {"gen", "write a benchmark shape of SHAPES.md (cache, broadcast, rows)", xc_cmd_gen},
    {"bench", "run a named benchmark ('xchg bench' lists them)", xchg_bench_main},
};

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: xchg <command> [args]\n"
          "       xchg --help | --version\n\n"
          "Reads Arrow IPC data (the stream and file formats, with LZ4/ZSTD body\n"
          "compression) from a file, or from standard input when FILE is '-'.\n\n"
          "commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nRun 'xchg <command> --help' for the options of a command.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_usage(stderr);
    return XC_EXIT_USAGE;
  }
  if (xc_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
    print_usage(stdout);
    return XC_EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
    printf("xchg %s\n", XCHG_VERSION_STRING);
    return XC_EXIT_OK;
  }
  int threads;
  xchg_error err;
  if (xchg_pool_parse_env(&threads, &err) != XCHG_OK) { /* refused rather than ignored */
    fprintf(stderr, "xchg: %s\n", err.message);
    return XC_EXIT_USAGE;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "xchg: unknown command '%s'\n\n", argv[1]);
  print_usage(stderr);
  return XC_EXIT_USAGE;
}
