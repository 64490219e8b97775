/* dictionary.c — see dictionary.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/dictionary.h"
#include "ipc/format.h"

static ipc_dictionary *find(const ipc_dictionaries *d, int64_t id) {
  for (int64_t i = 0; i < d->count; i++)
    if (d->items[i].id == id) return &d->items[i];
  return NULL;
}

xchg_status ipc_dictionaries_declare(ipc_dictionaries *d, const ipc_field *field, xchg_error *err) {
  ipc_dictionary *known = find(d, field->dict_id);
  if (known) {
    if (strcmp(known->field->format, field->format) != 0)
      return xchg_errorf(err, XCHG_EFORMAT,
                         "fields '%s' (%s) and '%s' (%s) share dictionary %lld "
                         "with different value types",
                         known->field->path, known->field->format, field->path, field->format,
                         (long long)field->dict_id);
    return XCHG_OK;
  }
  ipc_dictionary *items = realloc(d->items, (size_t)(d->count + 1) * sizeof *items);
  if (!items) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  d->items = items;
  d->items[d->count++] = (ipc_dictionary){field->dict_id, field, NULL, 1};
  return XCHG_OK;
}

const ipc_field *ipc_dictionaries_field(const ipc_dictionaries *d, int64_t id) {
  ipc_dictionary *e = find(d, id);
  return e ? e->field : NULL;
}

ipc_array *ipc_dictionaries_lookup(void *d, int64_t id) {
  ipc_dictionary *e = find(d, id);
  return e ? e->values : NULL;
}

/* The bytes of a's buffers and its children's; a nested dictionary is a
 * dictionary of its own, counted against the cap on its own. */
static int64_t array_bytes(const ipc_array *a) {
  int64_t n = 0;
  for (int64_t i = 0; i < a->n_buffers; i++) n += (int64_t)ipc_array_size(a, i);
  for (int64_t i = 0; i < a->n_children; i++) n += array_bytes(a->children[i]);
  return n;
}

xchg_status ipc_dictionaries_update(ipc_dictionaries *d, int64_t id, ipc_array *values, int delta,
                                    int64_t max_bytes, xchg_error *err) {
  ipc_dictionary *e = find(d, id);
  if (!e) return xchg_errorf(err, XCHG_EFORMAT, "unknown dictionary id %lld", (long long)id);
  int64_t kept = delta && e->values ? array_bytes(e->values) : 0, added = array_bytes(values);
  if (added > max_bytes - kept) {
    char growth[64] = "";
    if (kept) snprintf(growth, sizeof growth, " with a delta of %lld", (long long)added);
    return xchg_errorf(err, XCHG_ELIMIT,
                       "dictionary %lld would hold %lld bytes%s, more than "
                       "max_dictionary_bytes %lld",
                       (long long)id, (long long)(kept + added), growth, (long long)max_bytes);
  }
  ipc_array *next = NULL;
  if (delta && e->values) {
    xchg_status st = ipc_array_concat(e->field, 1, e->values, values, &next, err);
    if (st != XCHG_OK) {
      xchg_error_prefix(err, "delta of dictionary %lld: ", (long long)id);
      return st;
    }
  } else {
    next = ipc_array_ref(values);
  }
  ipc_array_unref(e->values);
  e->values = next;
  return XCHG_OK;
}

void ipc_dictionaries_free(ipc_dictionaries *d) {
  for (int64_t i = 0; i < d->count; i++) ipc_array_unref(d->items[i].values);
  free(d->items);
  d->items = NULL;
  d->count = 0;
}

static xchg_status mark_used(void *ctx, const ipc_field *field, xchg_error *err) {
  (void)err;
  ipc_dictionary *e = find(ctx, field->dict_id);
  if (e) {
    e->used = 1;
    e->field = field; /* a selected field: its value type is decoded whole */
  }
  return XCHG_OK;
}

xchg_status ipc_dictionaries_mark_used(ipc_dictionaries *d, const ipc_schema *schema,
                                       xchg_error *err) {
  for (int64_t i = 0; i < d->count; i++) d->items[i].used = 0;
  return ipc_schema_visit_dictionaries(schema, 1, mark_used, d, err);
}

int ipc_dictionaries_used(const ipc_dictionaries *d, int64_t id) {
  ipc_dictionary *e = find(d, id);
  return e && e->used;
}

xchg_status ipc_dictionary_batch_read(const ipc_dictionaries *d, const fb_table *header,
                                      int64_t index, int64_t offset, ipc_dictionary_batch *out,
                                      xchg_error *err) {
  uint8_t delta;
  if (fb_i64(header, DICTBATCH_ID, 0, &out->id) < 0 ||
      fb_u8(header, DICTBATCH_DELTA, 0, &delta) < 0 ||
      fb_table_field(header, DICTBATCH_DATA, &out->data) <= 0)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: invalid DictionaryBatch",
                       (long long)index, (long long)offset);
  out->delta = delta != 0;
  out->field = ipc_dictionaries_field(d, out->id);
  if (!out->field)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "message %lld at byte %lld: dictionary id %lld is not "
                       "used by any field of the schema",
                       (long long)index, (long long)offset, (long long)out->id);
  return XCHG_OK;
}

xchg_status ipc_dictionary_batch_apply(ipc_dictionaries *d, const ipc_dictionary_batch *b,
                                       const ipc_decode_ctx *ctx, const ipc_body *body,
                                       int64_t max_bytes, int64_t index, int64_t offset,
                                       xchg_error *err) {
  ipc_array *root = NULL;
  xchg_status st = ipc_decode_batch(ctx, &b->data, body, b->field, 1, 1, &root, err);
  if (st != XCHG_OK) return st;
  st = ipc_dictionaries_update(d, b->id, root->children[0], b->delta, max_bytes, err);
  ipc_array_unref(root);
  if (st != XCHG_OK)
    xchg_error_prefix(err, "message %lld at byte %lld: ", (long long)index, (long long)offset);
  return st;
}
