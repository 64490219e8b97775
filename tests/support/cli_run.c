/* tests/support/cli_run.c — see cli_run.h. */
#include "support/cli_run.h"

#include <stdarg.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/testutil.h"

void tu_cli_result_free(tu_cli_result *r) {
  free(r->out);
  free(r->err);
}

static char *read_stream(FILE *f, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  if (buf == NULL) return NULL;
  size_t got;
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n - 1 == 0) {
      char *grown = realloc(buf, cap * 2);
      if (grown == NULL) {
        free(buf);
        return NULL;
      }
      buf = grown;
      cap *= 2;
    }
  }
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

/* Runs the shell command `feed 'cli' args`, standard error kept. */
static bool run_command(const char *feed, const char *cli, const char *args, tu_cli_result *r) {
  memset(r, 0, sizeof *r);
  char err_path[] = "/tmp/test_cli_stderr_XXXXXX";
  int fd = mkstemp(err_path);
  if (fd < 0) return false;
  close(fd);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "%s'%s' %s 2>'%s'", feed, cli, args, err_path);
  FILE *p = popen(cmd, "r");
  if (p == NULL) {
    unlink(err_path);
    return false;
  }
  r->out = read_stream(p, &r->out_len);
  int status = pclose(p);
  r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  FILE *e = fopen(err_path, "r");
  if (e != NULL) {
    r->err = read_stream(e, NULL);
    fclose(e);
  }
  unlink(err_path);
  if (r->err == NULL) r->err = strdup("");
  return r->out != NULL && r->err != NULL;
}

bool tu_cli_run(const char *cli, const char *args, tu_cli_result *r) {
  return run_command("", cli, args, r);
}

bool tu_cli_run_piped(const char *cli, const char *input, const char *args, tu_cli_result *r) {
  char feed[4200];
  snprintf(feed, sizeof feed, "cat '%s' | ", input);
  return run_command(feed, cli, args, r);
}

static tu_cli_result run_formatted(const char *cli, const char *input, const char *fmt,
                                   va_list ap) {
  char args[8192];
  vsnprintf(args, sizeof args, fmt, ap);
  tu_cli_result r;
  if (!(input != NULL ? tu_cli_run_piped(cli, input, args, &r) : tu_cli_run(cli, args, &r))) {
    TU_CHECK(false, "cannot run xchg %s", args);
    r = (tu_cli_result){strdup(""), 0, strdup(""), -2};
  }
  return r;
}

tu_cli_result tu_cli_runf(const char *cli, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tu_cli_result r = run_formatted(cli, NULL, fmt, ap);
  va_end(ap);
  return r;
}

tu_cli_result tu_cli_piped_runf(const char *cli, const char *input, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tu_cli_result r = run_formatted(cli, input, fmt, ap);
  va_end(ap);
  return r;
}
