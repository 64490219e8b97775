/* test_bench_host.c — `xchg bench host --json` on a small broadcast: the
 * command succeeds (every task of every process matched its checksums),
 * prints the documented fields, and its figures follow the host store's
 * rules: off, one decode per process; on, one on the host; the inputs are
 * one copy per process; one decoded copy the same size either way. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/testutil.h"

static json_int_t field(json_t *r, const char *name) {
  json_t *v = json_object_get(r, name);
  TU_CHECK(json_is_integer(v), "field %s missing or not an integer", name);
  return json_integer_value(v);
}

static void quick_json(void) {
  const char *cli = tu_cli_path();
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "'%s' bench host --rows 20000 --processes 1,3 --tasks 4 --threads 2 "
           "--runs 1 --json",
           cli);
  FILE *p = popen(cmd, "r");
  json_error_t jerr;
  json_t *doc = p ? json_loadf(p, JSON_DISABLE_EOF_CHECK, &jerr) : NULL;
  int status = p ? pclose(p) : -1;
  TU_CHECK(status == 0 && doc, "%s: exit status %d, JSON: %s", cmd, status, doc ? "ok" : jerr.text);
  json_t *results = json_object_get(doc, "results");
  TU_CHECK(json_array_size(results) == 4, "%zu results, want 4", json_array_size(results));
  json_int_t decoded = -1, input_one = -1;
  size_t i;
  json_t *r;
  json_array_foreach(results, i, r) {
    const char *mode = json_string_value(json_object_get(r, "host_sharing"));
    json_int_t procs = field(r, "processes"), decodes = field(r, "decodes");
    int on = mode && strcmp(mode, "on") == 0;
    TU_CHECK(mode && (on || strcmp(mode, "off") == 0), "result %zu: host_sharing %s", i, mode);
    TU_CHECK(field(r, "threads") == 2 && field(r, "tasks") == 4, "result %zu: threads/tasks", i);
    TU_CHECK(json_is_number(json_object_get(r, "task_cpu_ms")) &&
                 json_is_number(json_object_get(r, "wall_ms")),
             "result %zu: task_cpu_ms / wall_ms missing", i);
    TU_CHECK(decodes == (on ? 1 : procs), "result %zu: %lld processes, host %s, %lld decodes", i,
             (long long)procs, mode, (long long)decodes);
    TU_CHECK(field(r, "pss_bytes") > 0, "result %zu: no PSS", i);
    if (decoded < 0)
      decoded = field(r, "decoded_bytes"), input_one = field(r, "input_bytes") / procs;
    TU_CHECK(field(r, "decoded_bytes") == decoded && decoded > 0,
             "result %zu: one decoded copy of %lld bytes, %lld before", i,
             (long long)field(r, "decoded_bytes"), (long long)decoded);
    TU_CHECK(field(r, "input_bytes") == input_one * procs, "result %zu: inputs not one per process",
             i);
    /* Per process: a decoding process always (every process, off); a
     * mapping one only when the store is on and another process decoded. */
    int mapping = on && procs > 1;
    json_t *acq = json_object_get(r, "decoding_process_acquire_ms");
    TU_CHECK(json_is_number(acq) && json_number_value(acq) > 0 &&
                 json_is_number(json_object_get(r, "decoding_process_beyond_read_ms")),
             "result %zu: no decoding process figures", i);
    json_t *m_acq = json_object_get(r, "mapping_process_acquire_ms");
    json_t *m_beyond = json_object_get(r, "mapping_process_beyond_read_ms");
    TU_CHECK(mapping
                 ? json_is_number(m_acq) && json_number_value(m_acq) > 0 && json_is_number(m_beyond)
                 : json_is_null(m_acq) && json_is_null(m_beyond),
             "result %zu: %lld processes, host %s: mapping process figures %s", i, (long long)procs,
             mode, mapping ? "missing" : "where no process mapped");
  }
  json_decref(doc);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"quick_json", quick_json}};
  return TU_MAIN(argc, argv, "bench_host", cases);
}
