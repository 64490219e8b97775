/* fuzz/fuzz_cli.c — the `xchg` tool's reading commands over a hostile file.
 *
 * The bytes are a file (a memfd, named by its /proc path) given to `xchg
 * cat` in each output format and to `xchg inspect`, as a user gives one,
 * and to both with --allow-missing-eos: the tool's own layers — the codec
 * and framing detection, several IPC streams one after another (split
 * where they lack their markers, plain or in a codec's decoded bytes),
 * Comet blocks through the shuffle reader, the rendering of every value of
 * every type — run on top of the library's, which the other targets fuzz
 * alone.  A command must fail with its exit code, never crash; what it
 * prints to standard output is dropped (its errors go to standard error:
 * run with -close_fd_mask=2 to drop them too). */
#define _GNU_SOURCE /* memfd_create */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/command.h"
#include "fuzz_common.h"

static void run(const char *const *args) {
  char *argv[8] = {"xchg"};
  int argc = 1;
  while (args[argc - 1] != NULL && argc < 7) argv[argc] = (char *)args[argc - 1], argc++;
  argv[argc] = NULL;
  (void)xc_main(argc, argv, NULL, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("fuzz_cli", 0), out = dup(1), null = open("/dev/null", O_WRONLY);
  if (fd >= 0 && out >= 0 && null >= 0 && write(fd, data, size) == (ssize_t)size) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int64_t live = xchg_buf_live_count();
    fflush(stdout);
    dup2(null, 1);
    run((const char *const[]){"cat", path, "--format", "csv", NULL});
    run((const char *const[]){"cat", path, "--format", "json", NULL});
    run((const char *const[]){"cat", path, "--format", "arrow-json", "--columns", "#0", NULL});
    run((const char *const[]){"inspect", path, NULL});
    run((const char *const[]){"cat", path, "--allow-missing-eos", NULL});
    run((const char *const[]){"inspect", path, "--allow-missing-eos", NULL});
    fflush(stdout);
    dup2(out, 1);
    fuzz_check_no_leak(live, "xchg cat and inspect");
  }
  if (null >= 0) close(null);
  if (out >= 0) close(out);
  if (fd >= 0) close(fd);
  return 0;
}
