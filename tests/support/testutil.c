/* testutil.c — see testutil.h. */
#include "support/testutil.h"

#include "xchg/buf.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static atomic_int passed, failed;

int tu_passed_count(void) { return atomic_load(&passed); }
int tu_failed_count(void) { return atomic_load(&failed); }

void tu_pass(void) { atomic_fetch_add(&passed, 1); }

void tu_fail_at(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  atomic_fetch_add(&failed, 1);
  char msg[4096];
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* One call, so that lines from several threads do not interleave. */
  printf("FAIL %s:%d: %s\n", file, line, msg);
  fflush(stdout);
}

void tu_fail(const char *what, const char *msg) {
  atomic_fetch_add(&failed, 1);
  printf("FAIL %s: %s\n", what, msg);
  fflush(stdout);
}

void tu_case(const char *what, int rc, const char *msg) {
  if (rc != 0) {
    tu_fail(what, msg);
    return;
  }
  tu_pass();
  printf("ok   %s\n", what);
}

void tu_section(const char *name, int failed_before) {
  int failed_here = tu_failed_count() - failed_before;
  if (failed_here) {
    printf("FAIL %s: %d failed check(s)\n", name, failed_here);
    return;
  }
  tu_pass();
  printf("ok   %s\n", name);
}

int tu_failf(char *msg, size_t msgsz, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, msgsz, fmt, ap);
  va_end(ap);
  return -1;
}

int tu_finish(const char *name) {
  int p = tu_passed_count(), f = tu_failed_count();
  if (p + f == 0) printf("FAIL %s: no check ran\n", name);
  printf("%s: %d passed, %d failed\n", name, p, f);
  return f > 0 || p + f == 0 ? 1 : 0;
}

void tu_bytes_append(tu_bytes *b, const void *p, size_t n) {
  uint8_t *grown = realloc(b->data, b->size + n + 1);
  if (grown == NULL) {
    fprintf(stderr, "FAIL: out of memory growing a %zu-byte test buffer\n", b->size);
    abort();
  }
  b->data = grown;
  if (n > 0) memcpy(b->data + b->size, p, n);
  b->size += n;
}

uint8_t *tu_read_file(const char *path, size_t *size) {
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  uint8_t *data = NULL;
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) data = malloc(n > 0 ? (size_t)n : 1);
  if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  if (data == NULL) return NULL;
  *size = (size_t)n;
  return data;
}

tu_bytes tu_read_bytes(const char *path) {
  tu_bytes b;
  b.data = tu_read_file(path, &b.size);
  return b;
}

int tu_write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return -1;
  size_t written = fwrite(p, 1, n, f);
  return fclose(f) == 0 && written == n ? 0 : -1;
}

int tu_has_suffix(const char *s, const char *suffix) {
  size_t ls = strlen(s), lx = strlen(suffix);
  return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

void tu_walk(const char *dir, const char *suffix, tu_file_fn fn, void *ctx) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    /* stat, not d_type: some file systems leave d_type DT_UNKNOWN. */
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) tu_walk(path, suffix, fn, ctx);
    else if (suffix == NULL || tu_has_suffix(e->d_name, suffix)) fn(path, ctx);
  }
  closedir(d);
}

int64_t tu_live_bytes(void) {
  xchg_buf_metrics m;
  xchg_buf_get_metrics(&m);
  return m.live_bytes;
}

uint64_t tu_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int tu_run(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *cmd = n < 0 ? NULL : malloc((size_t)n + 1);
  if (cmd == NULL) return -1;
  va_start(ap, fmt);
  vsnprintf(cmd, (size_t)n + 1, fmt, ap);
  va_end(ap);
  int rc = system(cmd);
  free(cmd);
  return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}
