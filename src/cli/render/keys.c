/* keys.c — see keys.h.  The fields are sorted by name (and position):
 * those sharing a name are then neighbours, in field order.  A key NAME_K
 * given to one name can never be one given to another (what follows
 * NAME's last character is "_" and digits only), so only the fields' own
 * names need to be skipped, by a binary search. */
#include "cli/render/keys.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct named {
  const char *name;
  int64_t index;
} named;

static int by_name_then_index(const void *a, const void *b) {
  const named *x = a, *y = b;
  int order = strcmp(x->name, y->name);
  return order != 0 ? order : (x->index > y->index) - (x->index < y->index);
}

static int by_name(const void *key, const void *entry) {
  return strcmp(key, ((const named *)entry)->name);
}

static bool some_field_named(const named *sorted, int64_t n, const char *name) {
  return bsearch(name, sorted, (size_t)n, sizeof *sorted, by_name) != NULL;
}

/* NAME_K with K from *next up, the first that no field is named; *next
 * moves past it. */
static char *renamed(const named *sorted, int64_t n, const char *name, long long *next) {
  size_t size = strlen(name) + 24;
  char *key = malloc(size);
  while (key != NULL) {
    snprintf(key, size, "%s_%lld", name, (*next)++);
    if (!some_field_named(sorted, n, key)) break;
  }
  return key;
}

static xchg_status rename_repeats(const named *sorted, int64_t n, char **keys, xchg_error *err) {
  long long next = 2;
  for (int64_t i = 0; i < n; i++) {
    bool repeat = i > 0 && strcmp(sorted[i - 1].name, sorted[i].name) == 0;
    if (!repeat) next = 2;
    char *key = repeat ? renamed(sorted, n, sorted[i].name, &next) : strdup(sorted[i].name);
    if (key == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    keys[sorted[i].index] = key;
  }
  return XCHG_OK;
}

xchg_status xc_unique_keys(const char *const *names, int64_t n, char ***out, xchg_error *err) {
  *out = NULL;
  if (n < 2) return XCHG_OK;
  named *sorted = malloc((size_t)n * sizeof *sorted);
  if (sorted == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (int64_t c = 0; c < n; c++) sorted[c] = (named){names[c] != NULL ? names[c] : "", c};
  qsort(sorted, (size_t)n, sizeof *sorted, by_name_then_index);
  bool repeats = false;
  for (int64_t i = 1; i < n && !repeats; i++)
    repeats = strcmp(sorted[i - 1].name, sorted[i].name) == 0;
  xchg_status st = XCHG_OK;
  if (repeats) {
    char **keys = calloc((size_t)n, sizeof *keys);
    st = keys != NULL ? rename_repeats(sorted, n, keys, err)
                      : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    if (st == XCHG_OK)
      *out = keys;
    else
      xc_keys_free(keys, n);
  }
  free(sorted);
  return st;
}

void xc_keys_free(char **keys, int64_t n) {
  for (int64_t c = 0; keys != NULL && c < n; c++) free(keys[c]);
  free(keys);
}
