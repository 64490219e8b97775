/* test_bench_broadcast.c — `xchg bench broadcast --quick --json` as CI
 * runs it: the command succeeds (every task's checksum matched), prints the
 * documented JSON, and its decode counts follow the cache's rules: sharing
 * off decodes once per task, retention once in all, sharing on no more
 * than off. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/testutil.h"

static void quick_json(void) {
  const char *cli = tu_cli_path();
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' bench broadcast --quick --rows 30000 --json", cli);
  FILE *p = popen(cmd, "r");
  if (!p) {
    TU_CHECK(0, "%s: cannot run it", cmd);
    return;
  }
  json_error_t jerr;
  /* Read to the end: stopping at the document's last brace closed the pipe
   * before the command wrote its last newline when a 4 KiB write ended
   * between the two, and the command died of SIGPIPE (exit 141). */
  json_t *doc = json_loadf(p, 0, &jerr);
  int status = pclose(p);
  TU_CHECK(status == 0 && doc, "%s: exit status %d, JSON: %s", cmd, status, doc ? "ok" : jerr.text);
  if (!doc) return;
  int rows = 0, seen[3] = {0, 0, 0};
  static const char *const modes[3] = {"off", "on", "retain"};
  json_t *results = json_object_get(doc, "results");
  size_t i;
  json_t *r;
  json_array_foreach(results, i, r) {
    const char *sharing = json_string_value(json_object_get(r, "sharing"));
    json_int_t tasks = json_integer_value(json_object_get(r, "tasks"));
    json_int_t decodes = json_integer_value(json_object_get(r, "decodes"));
    int fields = json_is_integer(json_object_get(r, "threads")) &&
                 json_is_number(json_object_get(r, "wall_ms")) &&
                 json_is_number(json_object_get(r, "task_cpu_ms")) &&
                 json_is_integer(json_object_get(r, "peak_rss_bytes"));
    int mode = -1;
    for (int m = 0; m < 3; m++)
      if (sharing && strcmp(sharing, modes[m]) == 0) mode = m;
    TU_CHECK(fields && mode >= 0 && tasks > 0, "result %zu: missing or bad fields", i);
    if (!fields || mode < 0 || tasks <= 0) continue;
    seen[mode]++;
    rows++;
    TU_CHECK((mode != 0 || decodes == tasks) && (mode != 1 || (decodes >= 1 && decodes <= tasks)) &&
                 (mode != 2 || decodes == 1),
             "result %zu: sharing %s, %lld tasks, %lld decodes", i, sharing, (long long)tasks,
             (long long)decodes);
  }
  TU_CHECK(rows > 0 && seen[0] && seen[1] && seen[2], "results incomplete (%d rows)", rows);
  json_decref(doc);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"quick_json", quick_json}};
  return TU_MAIN(argc, argv, "bench_broadcast", cases);
}
