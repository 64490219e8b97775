/* types.c — rendering Arrow types, and reading ArrowSchema metadata. */
#include "cli/render/types.h"

#include "cli/render/values.h"

#include <string.h>

/* ---- readable type names ---------------------------------------------- */

static void name_children(xs *out, const struct ArrowSchema *schema, const ipc_schema_view *t);

static void name_field(xs *out, const struct ArrowSchema *child) {
  xv_name(out, child->name, ":,<>");
  xs_puts(out, ": ");
  xc_type_name(out, child);
  if (!(child->flags & ARROW_FLAG_NULLABLE)) xs_puts(out, " not null");
}

static void name_primitive(xs *out, const ipc_schema_view *t) {
  char name[96 + strlen(t->tz)]; /* a time zone of any length, whole */
  xs_puts(out, ipc_schema_view_name(t, name, sizeof name));
}

static void name_children(xs *out, const struct ArrowSchema *schema, const ipc_schema_view *t) {
  xs_putc(out, '<');
  for (int64_t i = 0; i < schema->n_children; i++) {
    if (i > 0) xs_puts(out, ", ");
    name_field(out, schema->children[i]);
    if (t->kind == IPC_KIND_UNION && i < t->n_type_ids) xs_printf(out, "=%d", t->type_ids[i]);
  }
  xs_putc(out, '>');
}

static const char *nested_name(const ipc_schema_view *t) {
  switch (t->kind) {
    case IPC_KIND_LIST: return t->large ? "large_list" : "list";
    case IPC_KIND_LIST_VIEW: return t->large ? "large_list_view" : "list_view";
    case IPC_KIND_FIXED_LIST: return "fixed_size_list";
    case IPC_KIND_STRUCT: return "struct";
    case IPC_KIND_MAP: return "map";
    case IPC_KIND_UNION: return t->dense ? "dense_union" : "sparse_union";
    case IPC_KIND_RUN_END: return "run_end_encoded";
    default: return NULL;
  }
}

/* A map's children are one "entries" struct; show it as map<key, value>. */
static void name_map(xs *out, const struct ArrowSchema *schema) {
  const struct ArrowSchema *entries = schema->n_children == 1 ? schema->children[0] : NULL;
  if (entries == NULL || entries->n_children != 2) {
    xs_puts(out, "map<?>");
    return;
  }
  xs_puts(out, "map<");
  xc_type_name(out, entries->children[0]);
  xs_puts(out, ", ");
  xc_type_name(out, entries->children[1]);
  if (!(entries->children[1]->flags & ARROW_FLAG_NULLABLE)) xs_puts(out, " not null");
  xs_puts(out, (schema->flags & ARROW_FLAG_MAP_KEYS_SORTED) ? ", keys_sorted>" : ">");
}

static void name_value_type(xs *out, const struct ArrowSchema *schema) {
  ipc_schema_view t;
  if (ipc_schema_view_parse(schema->format, &t, NULL) != XCHG_OK) {
    xs_printf(out, "unknown(\"%s\")", schema->format ? schema->format : "");
    return;
  }
  const char *nested = nested_name(&t);
  if (nested == NULL) {
    name_primitive(out, &t);
  } else if (t.kind == IPC_KIND_MAP) {
    name_map(out, schema);
  } else {
    xs_puts(out, nested);
    name_children(out, schema, &t);
    if (t.kind == IPC_KIND_FIXED_LIST) xs_printf(out, "[%lld]", (long long)t.width);
  }
}

void xc_type_name(xs *out, const struct ArrowSchema *schema) {
  if (schema->dictionary == NULL) {
    name_value_type(out, schema);
    return;
  }
  xs_puts(out, "dictionary<values=");
  xc_type_name(out, schema->dictionary);
  xs_puts(out, ", indices=");
  name_value_type(out, schema);
  if (schema->flags & ARROW_FLAG_DICTIONARY_ORDERED) xs_puts(out, ", ordered");
  xs_putc(out, '>');
}

/* ---- metadata ---------------------------------------------------------- */

static int32_t read_i32(const char *p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

void xc_meta_begin(xc_meta_iter *it, const char *metadata) {
  it->next = metadata;
  it->remaining = metadata ? read_i32(metadata) : 0;
  if (it->remaining < 0) it->remaining = 0;
  if (metadata) it->next += 4;
}

bool xc_meta_next(xc_meta_iter *it, const char **key, int32_t *key_len, const char **value,
                  int32_t *value_len) {
  if (it->remaining <= 0) return false;
  *key_len = read_i32(it->next);
  if (*key_len < 0) return false;
  *key = it->next + 4;
  it->next = *key + *key_len;
  *value_len = read_i32(it->next);
  if (*value_len < 0) return false;
  *value = it->next + 4;
  it->next = *value + *value_len;
  it->remaining--;
  return true;
}

const char *xc_meta_find(const char *metadata, const char *key, int32_t *len) {
  xc_meta_iter it;
  const char *k, *v;
  int32_t klen, vlen;
  size_t want = strlen(key);
  xc_meta_begin(&it, metadata);
  while (xc_meta_next(&it, &k, &klen, &v, &vlen)) {
    if ((size_t)klen == want && memcmp(k, key, want) == 0) {
      *len = vlen;
      return v;
    }
  }
  return NULL;
}
