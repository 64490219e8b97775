/* tests/test_arrowjs_json.c — `xchg cat --format arrow-json` judged by
 * another implementation's reader of Arrow's integration JSON: Apache Arrow
 * JS (apache-arrow 21.2.0, tests/interop/arrowjs/json.mjs), which builds its
 * arrays from the JSON's buffers as its integration tests do.
 *
 *  1. shuffle.mjs writes its cases (every type apache-arrow writes, half
 *     floats among them; all-null, no-null and random nulls; odd row counts,
 *     empty and bare batches, sliced batches, compressed bodies, shared
 *     dictionaries, no columns), each as IPC streams one after another, and
 *     the rows apache-arrow reads from them;
 *     json.mjs --write adds values those random ones are unlikely to hold:
 *     dictionaries inside a list and a struct, half floats of every class
 *     (NaN with a payload, -0, infinity, subnormal), 64-bit extremes,
 *     intervals of nanoseconds past 2^53;
 *  2. `xchg cat --format arrow-json` prints each case whole, and its first
 *     LIMIT rows (--limit, which cuts a batch short: list children, union
 *     children and offsets of part of a batch);
 *  3. json.mjs reads each JSON with apache-arrow's own integration JSON
 *     reader, and its rows must be the blocks', value by value and bit for
 *     bit (a float32 or float64 NaN is any NaN: JSON writes it as a word;
 *     decimal256, which apache-arrow reads from JSON as 128-bit, is left to
 *     the gold files).  MONTH_DAY_NANO nanoseconds are quoted before
 *     JSON.parse, which would round them past 2^53 (see json.mjs).
 *
 * The case whose dictionaries are replaced between blocks is not printed:
 * arrow-json refuses it (one dictionary per id; tests/test_cli.c).
 *
 * Node and the npm package are required: without them the test FAILS,
 * saying to run scripts/setup.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/interop.h"
#include "support/testutil.h"

#define CASES 9       /* shuffle.mjs's */
#define EXTRA_CASES 2 /* json.mjs --write's */
#define LIMIT 100     /* inside a later batch of each shuffle.mjs case (its seed's) */

static char dir[] = "/tmp/xchg-jsonjs-XXXXXX";

/* The first word of each line of list, after the n names already read. */
static int read_case_names(const char *list, char names[][64], int n) {
  FILE *f = fopen(list, "r");
  while (f && n < CASES + EXTRA_CASES + 1 && fscanf(f, "%63s%*[^\n]", names[n]) == 1) n++;
  if (f) fclose(f);
  return n;
}

/* One case printed by xchg (limit < 0: whole) and read back by apache-arrow. */
static void check_case(const char *js, const char *name, int limit) {
  char opt[32] = "", arg[32] = "", suffix[32] = "";
  if (limit >= 0) {
    snprintf(opt, sizeof opt, " --limit %d", limit);
    snprintf(arg, sizeof arg, "%d", limit);
    snprintf(suffix, sizeof suffix, ".limit%d", limit);
  }
  TU_CHECK(tu_run("'%s' cat --format arrow-json %s '%s/%s.ipc' > '%s/%s%s.json' && cd '%s' && "
                  "node json.mjs --check '%s' '%s' '%s/%s%s.json' %s",
                  tu_cli_path(), opt, dir, name, dir, name, suffix, js, dir, name, dir, name,
                  suffix, arg) == 0,
           "%s: apache-arrow reads other rows from xchg cat --format arrow-json%s (above; files "
           "in %s)",
           name, opt, dir);
}

static void apache_arrow_reads_arrow_json(void) {
  char msg[4096], list[4400];
  if (!TU_CHECK(tu_interop_ready("arrowjs", "apache-arrow", msg, sizeof msg) == 0,
                "apache-arrow interop: %s", msg))
    return;
  if (!TU_CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", dir)) return;
  const char *js = tu_interop_dir("arrowjs");
  snprintf(list, sizeof list, "%s/cases.txt", dir);
  char names[CASES + EXTRA_CASES + 1][64];
  int n = tu_run("cd '%s' && node shuffle.mjs '%s' > '%s'", js, dir, list) == 0
              ? read_case_names(list, names, 0)
              : -1;
  TU_CHECK(n == CASES, "node shuffle.mjs %s gave %d cases, expected %d", dir, n, CASES);
  if (n < 0) return;
  snprintf(list, sizeof list, "%s/extra.txt", dir);
  int m = tu_run("cd '%s' && node json.mjs --write '%s' > '%s'", js, dir, list) == 0
              ? read_case_names(list, names, n)
              : -1;
  TU_CHECK(m == n + EXTRA_CASES, "node json.mjs --write %s gave %d cases, expected %d", dir, m - n,
           EXTRA_CASES);
  n = m < 0 ? n : m;
  for (int i = 0; i < n; i++) {
    if (strcmp(names[i], "dict_replaced") == 0) continue;
    check_case(js, names[i], -1);
    check_case(js, names[i], LIMIT);
  }
  if (tu_failed_count() == 0) tu_run("rm -rf '%s'", dir);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"apache_arrow_reads_arrow_json", apache_arrow_reads_arrow_json}};
  return TU_MAIN(argc, argv, "arrowjs_json", cases);
}
