/* tests/support/interop.c — see interop.h. */
#include "support/interop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/testutil.h"

const char *tu_interop_dir(const char *project) {
  static char path[4096];
  snprintf(path, sizeof path, "%s", __FILE__); /* .../tests/support/interop.c */
  for (int up = 0; up < 2; up++) {
    char *slash = strrchr(path, '/');
    if (slash) *slash = '\0';
  }
  size_t at = strlen(path);
  snprintf(path + at, sizeof path - at, "/interop/%s", project);
  return path;
}

int tu_interop_ready(const char *project, const char *package, char *msg, size_t msgsz) {
  char path[4400];
  struct stat st;
  const char *dir = tu_interop_dir(project);
  if (tu_run("node --version >/dev/null 2>&1") != 0)
    return tu_errorf(msg, msgsz, "node is not on PATH (run scripts/setup.sh)");
  snprintf(path, sizeof path, "%s/node_modules/%s/package.json", dir, package);
  if (stat(path, &st) != 0)
    return tu_errorf(msg, msgsz,
                     "%s is not installed in %s (run scripts/setup.sh, or npm ci there)", package,
                     dir);
  return 0;
}
