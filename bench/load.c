/* load.c — the FILE a benchmark reads (see load.h). */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint8_t *bench_load_file(const char *path, size_t *size, char *why, size_t why_size) {
  *size = 0;
  /* O_NONBLOCK: a FIFO's open would wait for a writer, for ever */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
  struct stat st;
  if (!f || fstat(fileno(f), &st) != 0) {
    snprintf(why, why_size, "cannot open it: %s", strerror(errno));
    if (f)
      fclose(f);
    else if (fd >= 0)
      close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) { /* a directory reads as nothing, a FIFO may never end */
    snprintf(why, why_size, "it is %s, not a regular file",
             S_ISDIR(st.st_mode) ? "a directory" : "a pipe, a device or a socket");
    fclose(f);
    return NULL;
  }
  size_t n = (size_t)st.st_size;
  uint8_t *data = malloc(n > 0 ? n : 1);
  if (!data) snprintf(why, why_size, "no memory for its %zu bytes", n);
  if (data && fread(data, 1, n, f) != n) {
    snprintf(why, why_size, "cannot read its %zu bytes: %s", n,
             ferror(f) ? strerror(errno) : "it is shorter than it was");
    free(data);
    data = NULL;
  }
  fclose(f);
  if (data) *size = n;
  return data;
}
