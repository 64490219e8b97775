/* tests/test_readme.c — the "Command line" section of README.md holds
 * true of `xchg` ($XCHG_CLI): everything is read from README.md itself, so
 * a README that drifts from the command fails here.
 *
 *  - every example session ("$ xchg ..." in a code block, then what it
 *    prints) is run in a directory holding Arrow's gold files of
 *    1.0.0-littleendian by their names, and broadcast.lz4 (the gold
 *    generated_dictionary.stream in lz4-java blocks of 32 KiB, as Spark
 *    writes them): it must exit 0 and print exactly the lines shown, a
 *    line "..." standing for any number of lines; a file an example names
 *    that is neither is a failure, and so is a README that names
 *    broadcast.lz4 without saying that this test writes it;
 *  - the synopsis (the code block of "xchg ..." lines): per command, the
 *    options it shows are exactly those of the usage lines of
 *    `xchg COMMAND --help`, and the benchmarks it lists are exactly those
 *    `xchg bench --help` lists, each with --json; `xchg --help` and
 *    `--version` work, and `xchg --help` names every shape of `xchg gen`;
 *  - every `xchg ...` the prose names exists: `xchg WORDS --help` exits 0;
 *  - every --option the section names is an option of some command or
 *    benchmark (in its --help);
 *  - every `build-test/test_NAME CASE` of the README selects a case of
 *    test_NAME (a name or a shell pattern that --list shows it has). */
#include <ctype.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/encoded.h"
#include "support/cli_run.h"
#include "support/testutil.h"
#include "xchg/stream.h"
#include "xchg/testing.h"

static const char *cli;
static char dir[] = "/tmp/xchg-readme-XXXXXX";
static tu_bytes all_help; /* every --help text, for the prose's options */

/* README.md of this source tree, NUL-terminated. */
static char *read_readme(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s", __FILE__); /* .../tests/test_readme.c */
  for (int up = 0; up < 2; up++) {
    char *slash = strrchr(path, '/');
    if (slash) *slash = '\0';
  }
  strncat(path, "/README.md", sizeof path - strlen(path) - 1);
  tu_bytes b = tu_read_bytes(path);
  TU_CHECK(b.data != NULL, "cannot read %s", path);
  if (b.data) tu_bytes_append(&b, "", 1);
  return (char *)b.data;
}

/* The text of "## Command line" up to the next "## " heading (in place). */
static char *command_line_section(char *readme) {
  char *start = strstr(readme, "\n## Command line\n");
  TU_CHECK(start != NULL, "README.md has no \"## Command line\" section");
  if (start == NULL) return NULL;
  start++;
  char *end = strstr(start + 3, "\n## ");
  if (end) end[1] = '\0';
  return start;
}

/* Runs `xchg args` in the examples' directory. */
static tu_cli_result run_in_dir(const char *args) {
  char cwd[4096];
  tu_cli_result r;
  bool moved = getcwd(cwd, sizeof cwd) != NULL && chdir(dir) == 0;
  bool ran = moved && tu_cli_run(cli, args, &r);
  TU_CHECK(!moved || chdir(cwd) == 0, "cannot change back to %s", cwd);
  if (!ran) {
    TU_CHECK(false, "cannot run xchg %s in %s", args, dir);
    r.out = strdup("");
    r.err = strdup("");
    r.exit_code = -2;
  }
  return r;
}

/* ---- the examples' directory ---------------------------------------------------------- */

static bool make_examples_dir(const char *gold) {
  if (mkdtemp(dir) == NULL) {
    TU_CHECK(false, "mkdtemp");
    return false;
  }
  if (tu_run("ln -s '%s'/* '%s'/", gold, dir) != 0) {
    TU_CHECK(false, "cannot link the gold files of %s into %s", gold, dir);
    return false;
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/generated_dictionary.stream", gold);
  tu_bytes ipc = tu_read_bytes(path);
  tu_bytes lz4 = {0}; /* the default options: Spark's 32 KiB blocks */
  bool ok = ipc.data && tu_append_encoded(&lz4, XCHG_STREAM_LZ4_JAVA, NULL, ipc.data, ipc.size);
  TU_CHECK(ok, "cannot wrap %s in lz4-java", path);
  snprintf(path, sizeof path, "%s/broadcast.lz4", dir);
  ok = ok && tu_write_file(path, lz4.data, lz4.size) == 0;
  free(lz4.data);
  free(ipc.data);
  return ok;
}

/* Each word of an example that is not an option must be a file of the
 * directory (or a value of the option before it). */
static void check_example_files(const char *args) {
  char copy[2048];
  snprintf(copy, sizeof copy, "%s", args);
  bool after_valued_option = false, first = true;
  for (char *w = strtok(copy, " "); w; w = strtok(NULL, " ")) {
    bool option = w[0] == '-' && w[1] != '\0';
    if (!option && !after_valued_option && !first && strcmp(w, "-") != 0) {
      char path[4400];
      snprintf(path, sizeof path, "%s/%s", dir, w);
      TU_CHECK(access(path, R_OK) == 0,
               "the README's example `xchg %s` names %s, which is neither a gold file nor "
               "one this test makes",
               args, w);
    }
    /* Options that take a value, as the examples use them. */
    after_valued_option = option && (strcmp(w, "--columns") == 0 || strcmp(w, "--limit") == 0 ||
                                     strcmp(w, "--format") == 0 || strcmp(w, "--head") == 0);
    first = false;
  }
}

/* ---- example sessions ---------------------------------------------------------------- */

/* Whether the output lines match the expected ones, "..." matching any
 * number of lines. */
static bool lines_match(char **got, int n_got, char **want, int n_want) {
  if (n_want == 0) return n_got == 0;
  if (strcmp(want[0], "...") == 0) {
    for (int skip = 0; skip <= n_got; skip++)
      if (lines_match(got + skip, n_got - skip, want + 1, n_want - 1)) return true;
    return false;
  }
  return n_got > 0 && strcmp(got[0], want[0]) == 0 &&
         lines_match(got + 1, n_got - 1, want + 1, n_want - 1);
}

static int split(char *text, char **lines, int max) {
  int n = 0;
  for (char *p = text; *p && n < max;) {
    char *end = strchr(p, '\n');
    lines[n++] = p;
    if (end == NULL) break;
    *end = '\0';
    p = end + 1;
  }
  return n;
}

static void run_session(const char *command, char **want, int n_want) {
  const char *args = command + strlen("$ xchg ");
  check_example_files(args);
  tu_cli_result r = run_in_dir(args);
  TU_CHECK(r.exit_code == 0 && r.err[0] == '\0', "README example `xchg %s`: exit %d: %.400s", args,
           r.exit_code, r.err);
  char *got[4096];
  int n_got = split(r.out, got, 4096);
  bool same = lines_match(got, n_got, want, n_want);
  TU_CHECK(same, "README example `xchg %s` prints what the README does not show:", args);
  if (!same) {
    for (int i = 0; i < n_got; i++) fprintf(stderr, "  got:  %s\n", got[i]);
    for (int i = 0; i < n_want; i++) fprintf(stderr, "  want: %s\n", want[i]);
  }
  tu_cli_result_free(&r);
}

/* A block of "$ xchg ..." lines, each followed by its output. */
static int check_sessions(char **lines, int n) {
  int sessions = 0;
  for (int i = 0; i < n;) {
    if (strncmp(lines[i], "$ xchg ", 7) != 0) {
      TU_CHECK(false, "README example line outside a session: %s", lines[i]);
      i++;
      continue;
    }
    int end = i + 1;
    while (end < n && strncmp(lines[end], "$ ", 2) != 0) end++;
    run_session(lines[i], lines + i + 1, end - i - 1);
    sessions++;
    i = end;
  }
  return sessions;
}

/* ---- the synopsis ----------------------------------------------------------------------- */

typedef struct word_set {
  char words[128][40];
  int n;
} word_set;

static void add_word(word_set *s, const char *w, size_t len) {
  if (len >= sizeof s->words[0]) len = sizeof s->words[0] - 1;
  for (int i = 0; i < s->n; i++)
    if (strlen(s->words[i]) == len && strncmp(s->words[i], w, len) == 0) return;
  if (s->n < 128) {
    memcpy(s->words[s->n], w, len);
    s->words[s->n++][len] = '\0';
  }
}

static bool has_word(const word_set *s, const char *w) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->words[i], w) == 0) return true;
  return false;
}

static bool option_char(char c) {
  return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-';
}

/* The --options of text. */
static void options_of(const char *text, word_set *out) {
  for (const char *p = text; (p = strstr(p, "--")) != NULL;) {
    const char *q = p + 2;
    bool starts = islower((unsigned char)*q) && (p == text || !option_char(p[-1]));
    while (option_char(*q)) q++;
    if (starts) add_word(out, p, (size_t)(q - p));
    p = q;
  }
}

/* The usage lines of `xchg args --help`: from the start to the first blank
 * line; NULL (a failed check) when it does not run. */
static char *usage_of(const char *args) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s --help", args);
  tu_cli_result r = run_in_dir(cmd);
  TU_CHECK(r.exit_code == 0 && strncmp(r.out, "usage: xchg", 11) == 0, "`xchg %s`: exit %d, %.200s",
           cmd, r.exit_code, r.out);
  tu_bytes_append(&all_help, r.out, strlen(r.out));
  char *blank = strstr(r.out, "\n\n");
  if (blank) blank[1] = '\0';
  free(r.err);
  return r.exit_code == 0 ? r.out : (free(r.out), NULL);
}

static void compare_options(const char *what, const word_set *readme, const word_set *help) {
  for (int i = 0; i < readme->n; i++)
    TU_CHECK(has_word(help, readme->words[i]),
             "README synopsis of %s shows %s, which its --help usage does not", what,
             readme->words[i]);
  for (int i = 0; i < help->n; i++)
    TU_CHECK(has_word(readme, help->words[i]),
             "README synopsis of %s lacks %s, which its --help usage has", what, help->words[i]);
}

/* The benchmarks `xchg bench --help` lists ("  name  description"). */
static void listed_benchmarks(word_set *out) {
  char *usage = usage_of("bench");
  tu_cli_result r = run_in_dir("bench --help");
  free(usage);
  char *list = strstr(r.out, "benchmarks:\n");
  for (char *p = list ? list + 12 : NULL; p && *p == ' ';) {
    while (*p == ' ') p++;
    size_t len = strcspn(p, " \n");
    add_word(out, p, len);
    p = strchr(p, '\n');
    if (p) p++;
  }
  tu_cli_result_free(&r);
}

static void check_bench_line(const char *line) {
  word_set readme = {.n = 0}, listed = {.n = 0};
  const char *names = line + strlen("xchg bench ");
  for (const char *p = names; *p && *p != ' ';) {
    size_t len = strcspn(p, "| ");
    add_word(&readme, p, len);
    p += len + (p[len] == '|');
  }
  listed_benchmarks(&listed);
  TU_CHECK(listed.n > 0, "`xchg bench --help` lists no benchmarks");
  for (int i = 0; i < readme.n; i++)
    TU_CHECK(has_word(&listed, readme.words[i]),
             "README synopsis names benchmark %s, which `xchg bench --help` "
             "does not list",
             readme.words[i]);
  for (int i = 0; i < listed.n; i++) {
    TU_CHECK(has_word(&readme, listed.words[i]), "README synopsis lacks benchmark %s",
             listed.words[i]);
    char args[128];
    snprintf(args, sizeof args, "bench %s", listed.words[i]);
    char *usage = usage_of(args);
    TU_CHECK(usage == NULL || strstr(usage, "--json") != NULL,
             "`xchg bench %s --help` has no --json", listed.words[i]);
    free(usage);
  }
}

/* Whether text[0..text_len) holds the word w[0..len), not inside a longer
 * one. */
static bool holds_word(const char *text, size_t text_len, const char *w, size_t len) {
  for (size_t i = 0; i + len <= text_len; i++)
    if (memcmp(text + i, w, len) == 0 && (i == 0 || !isalnum((unsigned char)text[i - 1])) &&
        (i + len == text_len || !isalnum((unsigned char)text[i + len])))
      return true;
  return false;
}

/* Every shape the synopsis gives `xchg gen` ("xchg gen cache|broadcast|rows
 * OUT", "xchg gen shuffle OUT") is named on gen's line of `xchg --help`. */
static void check_gen_shapes(char **lines, int n, const char *help) {
  const char *gen = strstr(help, "\n  gen ");
  TU_CHECK(gen != NULL, "`xchg --help` has no line for gen");
  if (gen == NULL) return;
  gen++;
  size_t gen_len = strcspn(gen, "\n");
  for (int i = 0; i < n; i++) {
    if (strncmp(lines[i], "xchg gen ", 9) != 0) continue;
    for (const char *w = lines[i] + 9; *w != ' ' && *w != '\0';) {
      size_t len = strcspn(w, "| ");
      TU_CHECK(holds_word(gen, gen_len, w, len),
               "`xchg --help` does not name gen's shape %.*s: %.*s", (int)len, w, (int)gen_len,
               gen);
      w += len + (w[len] == '|');
    }
  }
}

/* The synopsis: "xchg COMMAND ..." lines (several may share a command). */
static void check_synopsis(char **lines, int n) {
  static const char *const commands[] = {"inspect", "cat", "convert", "gen"};
  bool seen_bench = false, seen_help = false;
  for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++) {
    word_set readme = {.n = 0}, help = {.n = 0};
    char key[64];
    snprintf(key, sizeof key, "xchg %s ", commands[c]);
    for (int i = 0; i < n; i++)
      if (strncmp(lines[i], key, strlen(key)) == 0) options_of(lines[i], &readme);
    TU_CHECK(readme.n > 0, "README synopsis has no line for xchg %s", commands[c]);
    char *usage = usage_of(commands[c]);
    if (usage) options_of(usage, &help);
    free(usage);
    compare_options(commands[c], &readme, &help);
  }
  for (int i = 0; i < n; i++) {
    if (strncmp(lines[i], "xchg bench ", 11) == 0) {
      check_bench_line(lines[i]);
      seen_bench = true;
    } else if (strncmp(lines[i], "xchg --help", 11) == 0) {
      tu_cli_result a = run_in_dir("--help"), b = run_in_dir("--version");
      TU_CHECK(a.exit_code == 0 && b.exit_code == 0 && strncmp(b.out, "xchg ", 5) == 0,
               "xchg --help: exit %d; --version: exit %d", a.exit_code, b.exit_code);
      check_gen_shapes(lines, n, a.out);
      tu_bytes_append(&all_help, a.out, strlen(a.out)); /* --version is the top level's */
      tu_cli_result_free(&a);
      tu_cli_result_free(&b);
      seen_help = true;
    }
  }
  TU_CHECK(seen_bench && seen_help, "README synopsis lacks the bench or the --help line");
}

/* ---- the prose ------------------------------------------------------------------------- */

/* Every `xchg ...` span outside code blocks names a command that exists;
 * every --option of the section is one of some --help. */
static void check_prose(const char *section) {
  int spans = 0;
  for (const char *p = section; (p = strstr(p, "`xchg ")) != NULL; p++) {
    if (p[1] == '`' || (p > section && p[-1] == '`')) continue; /* a code fence */
    const char *end = strchr(p + 1, '`');
    if (end == NULL) break;
    char words[256] = "";
    size_t at = 0;
    for (const char *w = p + 6; w < end && at + 40 < sizeof words;) {
      size_t len = strcspn(w, " `");
      if (len == 0 || !islower((unsigned char)w[0])) break;
      at += (size_t)snprintf(words + at, sizeof words - at, "%s%.*s", at ? " " : "", (int)len, w);
      w += len + (w[len] == ' ');
    }
    char *usage = usage_of(words);
    free(usage);
    spans++;
  }
  TU_CHECK(spans > 0, "no `xchg ...` in the section's prose");
  word_set named = {.n = 0};
  options_of(section, &named);
  tu_bytes_append(&all_help, "", 1);
  for (int i = 0; i < named.n; i++) {
    char *found = (char *)all_help.data;
    bool known = false;
    size_t len = strlen(named.words[i]);
    while (!known && (found = strstr(found, named.words[i])) != NULL) {
      known = !option_char(found[len]);
      found += len;
    }
    TU_CHECK(known, "the README names %s, which no command's --help has", named.words[i]);
  }
  printf("readme: %d named commands, %d options checked\n", spans, named.n);
}

/* broadcast.lz4 is no gold file: the README must say where it comes from
 * where it names it, or a reader running the example finds no such file. */
static void check_made_files_explained(const char *section) {
  const char *named = strstr(section, "`broadcast.lz4`");
  const char *said = named ? strstr(named, "`ctest -R readme`") : NULL;
  const char *verb = said ? said + strlen("`ctest -R readme`") : NULL;
  while (verb && isspace((unsigned char)*verb)) verb++; /* the line may break there */
  TU_CHECK(said != NULL && said - named < 300 && strncmp(verb, "writes it", 9) == 0,
           "the README names broadcast.lz4 without saying that it is no gold file and that "
           "`ctest -R readme` writes it");
}

/* The README's command line section: every example session run, its
 * synopsis against the --help texts, the options its prose names. */
static void examples_and_prose(void) {
  char gold[4096];
  tu_testdata_path(gold, sizeof gold, "arrow-gold/1.0.0-littleendian");
  char *readme = read_readme();
  char *section = readme ? command_line_section(readme) : NULL;
  if (section == NULL || !make_examples_dir(gold)) {
    free(readme);
    return;
  }
  char *text = strdup(section); /* blocks are cut up in place; the prose reads the copy */
  int sessions = 0, synopses = 0;
  for (char *p = section; (p = strstr(p, "```\n")) != NULL;) {
    char *body = p + 4, *close = strstr(body, "\n```");
    if (close == NULL) break;
    *close = '\0';
    char *lines[512];
    int n = split(body, lines, 512);
    if (n > 0 && strncmp(lines[0], "$ xchg ", 7) == 0) {
      sessions += check_sessions(lines, n);
    } else if (n > 0 && strncmp(lines[0], "xchg ", 5) == 0) {
      check_synopsis(lines, n);
      synopses++;
    }
    p = close + 4;
  }
  TU_CHECK(sessions >= 3 && synopses == 1, "%d example sessions and %d synopses in the README",
           sessions, synopses);
  printf("readme: %d example sessions run\n", sessions);
  check_prose(text);
  check_made_files_explained(text);
  free(text);
  free(readme);
  free(all_help.data);
  tu_run("rm -rf '%s'", dir);
}

/* ---- the test binaries it runs -------------------------------------------------------- */

/* What `build-test/TEST --list` prints (TEST beside this test's binary),
 * NUL-terminated, or NULL. */
static char *case_list(const char *test) {
  char self[4096], cmd[4400];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  char *slash = n > 0 ? (self[n] = '\0', strrchr(self, '/')) : NULL;
  if (slash == NULL) return NULL;
  *slash = '\0';
  snprintf(cmd, sizeof cmd, "'%s/%s' --list", self, test);
  FILE *p = popen(cmd, "r");
  tu_bytes out = {0};
  char chunk[4096];
  for (size_t got; p != NULL && (got = fread(chunk, 1, sizeof chunk, p)) > 0;)
    tu_bytes_append(&out, chunk, got);
  bool ok = p != NULL && pclose(p) == 0;
  tu_bytes_append(&out, "", 1);
  if (!ok) free(out.data);
  return ok ? (char *)out.data : NULL;
}

/* Whether a line of list matches the shell pattern. */
static bool selects_a_case(const char *list, const char *pattern) {
  char *names = strdup(list), *save = NULL;
  bool found = false;
  for (char *name = strtok_r(names, "\n", &save); name != NULL && !found;
       name = strtok_r(NULL, "\n", &save))
    found = fnmatch(pattern, name, 0) == 0;
  free(names);
  return found;
}

/* Every `build-test/test_NAME CASE...` the README shows selects a case of
 * test_NAME: a name it has, or a shell pattern that matches one. */
static void test_commands(void) {
  char *readme = read_readme();
  int spans = 0;
  for (const char *p = readme; p != NULL && (p = strstr(p, "`build-test/test_")) != NULL; p++) {
    const char *end = strchr(p + 1, '`');
    if (end == NULL) break;
    char span[512];
    snprintf(span, sizeof span, "%.*s", (int)(end - p - 12), p + 12); /* after `build-test/ */
    char *save = NULL, *test = strtok_r(span, " ", &save);
    char *list = case_list(test);
    TU_CHECK(list != NULL, "README runs build-test/%s, which does not list its cases", test);
    for (char *arg; list != NULL && (arg = strtok_r(NULL, " ", &save)) != NULL;) {
      if (arg[0] == '-') continue;
      size_t len = strlen(arg);
      if (len >= 2 && arg[0] == '\'' && arg[len - 1] == '\'') arg[len - 1] = '\0', arg++;
      TU_CHECK(selects_a_case(list, arg), "README runs build-test/%s %s, which selects no case",
               test, arg);
    }
    free(list);
    spans++;
  }
  TU_CHECK(spans >= 2, "README shows %d `build-test/test_...` commands", spans);
  free(readme);
}

int main(int argc, char **argv) {
  cli = tu_cli_path();
  static const tu_case cases[] = {{"examples_and_prose", examples_and_prose},
                                  {"test_commands", test_commands}};
  return TU_MAIN(argc, argv, "readme", cases);
}
