/* same_schema.c — whether the IPC streams of one input have the same schema,
 * and when not, what differs, for the commands that make one table of them
 * (cat, convert). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/strbuf.h"
#include "cli/types.h"

static bool same_text(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

static bool same_metadata(const char *a, const char *b) {
  xc_meta_iter ia, ib;
  xc_meta_begin(&ia, a);
  xc_meta_begin(&ib, b);
  const char *ka, *va, *kb, *vb;
  int32_t kla, vla, klb, vlb;
  for (;;) {
    bool more_a = xc_meta_next(&ia, &ka, &kla, &va, &vla), more_b = xc_meta_next(&ib, &kb, &klb, &vb, &vlb);
    if (more_a != more_b) return false;
    if (!more_a) return true;
    if (kla != klb || vla != vlb || memcmp(ka, kb, (size_t)kla) != 0 || memcmp(va, vb, (size_t)vla) != 0)
      return false;
  }
}

/* "int64 in the first IPC stream, utf8 here" */
static void both_types(xs *why, const struct ArrowSchema *first, const struct ArrowSchema *here) {
  xs_puts(why, "type ");
  xc_type_name(why, first);
  xs_puts(why, " in the first IPC stream, ");
  xc_type_name(why, here);
  xs_puts(why, " here");
}

static const char *nullability(const struct ArrowSchema *s) {
  return (s->flags & ARROW_FLAG_NULLABLE) ? "nullable" : "not null";
}

/* "column 2 \"s\"", and below it "field \"s.f\" of column 2". */
static void field_label(xs *label, int64_t column, xs *path, bool nested) {
  xs_clear(label);
  if (nested) xs_printf(label, "field \"%s\" of column %lld", xs_cstr(path), (long long)column);
  else xs_printf(label, "column %lld \"%s\"", (long long)column, xs_cstr(path));
}

/* The first difference between a field of the first IPC stream and the
 * same field here (path: its dotted name), as "<label>: <what>" in why;
 * false when there is one. */
static bool same_field(const struct ArrowSchema *a, const struct ArrowSchema *b, int64_t column, xs *path,
                       bool nested, xs *why) {
  xs label_text;
  xs_init(&label_text, NULL);
  field_label(&label_text, column, path, nested);
  const char *label = xs_cstr(&label_text);
  bool same = false;
  if (!same_text(a->name, b->name)) {
    xs_printf(why, "%s: named \"%s\" in the first IPC stream, \"%s\" here", label, a->name ? a->name : "",
              b->name ? b->name : "");
  } else if (!same_text(a->format, b->format) || (a->dictionary == NULL) != (b->dictionary == NULL) ||
             a->n_children != b->n_children ||
             (a->dictionary != NULL && (!same_text(a->dictionary->format, b->dictionary->format) ||
                                        a->dictionary->n_children != b->dictionary->n_children))) {
    xs_printf(why, "%s: ", label);
    both_types(why, a, b);
  } else if ((a->flags & ARROW_FLAG_NULLABLE) != (b->flags & ARROW_FLAG_NULLABLE)) {
    xs_printf(why, "%s: %s in the first IPC stream, %s here", label, nullability(a), nullability(b));
  } else if (a->flags != b->flags) {
    xs_printf(why, "%s: ", label);
    both_types(why, a, b); /* ordered dictionary, sorted map keys: the type names say them */
  } else if (!same_metadata(a->metadata, b->metadata)) {
    xs_printf(why, "%s: its metadata differs", label);
  } else {
    const struct ArrowSchema *av = a->dictionary ? a->dictionary : a, *bv = b->dictionary ? b->dictionary : b;
    size_t len = path->len;
    same = true;
    for (int64_t c = 0; c < av->n_children && same; c++) {
      xs_printf(path, ".%s", av->children[c]->name ? av->children[c]->name : "");
      same = same_field(av->children[c], bv->children[c], column, path, true, why);
      path->len = len;
    }
  }
  xs_free(&label_text);
  return same;
}

bool xc_same_schema(const struct ArrowSchema *first, const struct ArrowSchema *here, xs *why) {
  if (first->n_children != here->n_children) {
    xs_printf(why, "%lld columns in the first IPC stream, %lld here", (long long)first->n_children,
              (long long)here->n_children);
    return false;
  }
  if (!same_metadata(first->metadata, here->metadata)) {
    xs_puts(why, "the schema's metadata differs from the first IPC stream's");
    return false;
  }
  xs path;
  xs_init(&path, NULL);
  bool same = true;
  for (int64_t c = 0; c < first->n_children && same; c++) {
    xs_clear(&path);
    xs_puts(&path, first->children[c]->name ? first->children[c]->name : "");
    same = same_field(first->children[c], here->children[c], c, &path, false, why);
  }
  xs_free(&path);
  return same;
}
