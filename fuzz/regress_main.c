/* fuzz/regress_main.c — runs a fuzz target over files, without libFuzzer.
 *
 *   fuzz_regress_NAME DIR_OR_FILE...
 *
 * Every file under the arguments (recursively) is copied into a buffer of
 * exactly its size, so that under AddressSanitizer a read past the end is
 * reported, and handed to LLVMFuzzerTestOneInput.  A crash or sanitizer
 * report fails the test; otherwise one summary line is printed.  Missing
 * arguments are skipped, but finding no input at all is a failure. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int64_t inputs;

static void run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = malloc(n > 0 ? (size_t)n : 1);
  if (data == NULL || (n > 0 && fread(data, 1, (size_t)n, f) != (size_t)n)) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  fclose(f);
  LLVMFuzzerTestOneInput(data, (size_t)n);
  free(data);
  inputs++;
}

static void run_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    run_file(path);
    return;
  }
  DIR *d = opendir(path);
  if (d == NULL) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char child[4096];
    snprintf(child, sizeof child, "%s/%s", path, e->d_name);
    run_path(child);
  }
  closedir(d);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) run_path(argv[i]);
  const char *name = strrchr(argv[0], '/');
  printf("%s: %" PRId64 " inputs, %" PRId64 " errors returned, crashes = 0\n",
         name ? name + 1 : argv[0], inputs, fuzz_errors_returned);
  if (inputs == 0) {
    fprintf(stderr, "no input found\n");
    return 1;
  }
  return 0;
}
