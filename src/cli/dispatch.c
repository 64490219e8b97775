/* dispatch.c — `xchg <command> [args]`: finds the command and runs it
 * (command.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/command.h"
#include "cli/output.h"

static const xc_command commands[] = {
    {"inspect",
     "sum up an Arrow IPC input (rows, bytes per column, schema, messages) or row stream",
     xc_cmd_inspect},
    {"cat", "print the rows of an Arrow IPC file or stream as CSV, JSON or Arrow JSON", xc_cmd_cat},
    {"convert", "re-encode an Arrow IPC input (format, codec, batch size)", xc_cmd_convert},
    {"gen", "write a benchmark shape of SHAPES.md (cache, broadcast, rows, shuffle)", xc_cmd_gen},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

/* The commands xc_main knows: the CLI's own, then the extra ones. */
typedef struct command_table {
  const xc_command *extra;
  size_t n_extra;
} command_table;

static const xc_command *command_at(const command_table *t, size_t i) {
  return i < N_COMMANDS ? &commands[i] : &t->extra[i - N_COMMANDS];
}

static void print_usage(FILE *out, const command_table *t) {
  fprintf(out,
          "usage: xchg <command> [args]\n"
          "       xchg --help | --version | help [<command>]\n\n"
          "Reads Arrow IPC data (the stream and file formats, with LZ4/ZSTD body\n"
          "compression) from a file, or from standard input when FILE is '-'.\n\n"
          "commands:\n");
  for (size_t i = 0; i < N_COMMANDS + t->n_extra; i++)
    fprintf(out, "  %-8s %s\n", command_at(t, i)->name, command_at(t, i)->summary);
  fprintf(out,
          "\nRun 'xchg help <command>' (or 'xchg <command> --help') for the options of\n"
          "a command.  Every command takes '--option value' or '--option=value'\n"
          "anywhere among its operands, a unique prefix of an option, and '--' to\n"
          "end the options (an input named '-x.arrows': xchg cat -- -x.arrows).\n\n"
          "XCHG_THREADS=N: the threads that decode (convert, and shuffle blocks in cat\n"
          "and inspect) and format rows (0 to 4096; unset or 0, one per core); the\n"
          "output is the same on any number.\n");
}

/* What the commands print through stdio (--help texts, --version, the
 * benchmarks' reports) is not checked as it is written: a write that failed
 * there (a full disk, a closed pipe) must still fail the command, so what
 * is buffered is flushed here and a failure reported, once, for a command
 * that otherwise succeeded (one that failed has said why already).  errno
 * is the failed write's, whether it was this flush or an earlier one. */
static int finish_stdout(int rc) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
  if (rc != XC_EXIT_OK) return rc;
  return xc_write_error("-", errno != 0 ? errno : EIO);
}

/* `xchg help COMMAND [WORDS]` (or `xchg --help ...`): the command's own
 * help, as `xchg COMMAND [WORDS] --help` prints it (`xchg help bench
 * decode`: that benchmark's); options among the words are left out. */
static int help_for(int argc, char **argv, const command_table *table) {
  for (size_t i = 0; i < N_COMMANDS + table->n_extra; i++) {
    const xc_command *c = command_at(table, i);
    if (strcmp(argv[2], c->name) != 0) continue;
    char *words[8] = {argv[2]};
    int n = 1;
    for (int k = 3; k < argc && n < 6; k++) /* the subcommands, not options */
      if (argv[k][0] != '-') words[n++] = argv[k];
    words[n++] = "--help";
    words[n] = NULL;
    return c->run(n, words);
  }
  fprintf(stderr, "xchg: no help for '%s': there is no such command\n\n", argv[2]);
  print_usage(stderr, table);
  return XC_EXIT_USAGE;
}

static int run(int argc, char **argv, const command_table *table) {
  if (xc_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
    if (argc > 2) return help_for(argc, argv, table);
    print_usage(stdout, table);
    return XC_EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
    printf("xchg %s\n", xchg_version_string());
    return XC_EXIT_OK;
  }
  int threads;
  xchg_error err;
  if (xchg_pool_parse_env(&threads, &err) != XCHG_OK) { /* refused rather than ignored */
    fprintf(stderr, "xchg: %s\n", err.message);
    return XC_EXIT_USAGE;
  }
  for (size_t i = 0; i < N_COMMANDS + table->n_extra; i++) {
    const xc_command *c = command_at(table, i);
    if (strcmp(argv[1], c->name) == 0) return c->run(argc - 1, argv + 1);
  }
  fprintf(stderr, "xchg: unknown command '%s'\n\n", argv[1]);
  print_usage(stderr, table);
  return XC_EXIT_USAGE;
}

/* A standard descriptor the command was started without (`xchg ... >&-`)
 * would be the number the next open gets: `gen OUT --sums` wrote its sums
 * into OUT.  Each closed one is held by /dev/null opened the other way
 * round (standard input for writing, the others for reading), so that
 * using it fails with EBADF, as it would closed, and says so. */
static void hold_standard_fds(void) {
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    int held = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
    if (held >= 0 && held != fd) close(held); /* a lower one was closed too: taken in turn */
  }
}

int xc_main(int argc, char **argv, const xc_command *extra, size_t n_extra) {
  const command_table table = {extra, n_extra};
  hold_standard_fds();
  xc_catch_cut_inputs();
  if (argc < 2) {
    print_usage(stderr, &table);
    return XC_EXIT_USAGE;
  }
  return finish_stdout(run(argc, argv, &table));
}
