/* tests/support/column_sums.c — see column_sums.h. */
#include "support/column_sums.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bit_of(const void *bits, int64_t i) {
  return (((const uint8_t *)bits)[i >> 3] >> (i & 7)) & 1;
}

int tu_column_sum(const struct ArrowSchema *s, const struct ArrowArray *a, uint64_t *sum,
                  int64_t *nulls) {
  const char *f = s->format;
  const uint8_t *values = a->n_buffers > 1 ? a->buffers[1] : NULL;
  for (int64_t i = 0; i < a->length; i++) {
    int64_t p = a->offset + i;
    if (a->buffers[0] && a->null_count != 0 && !bit_of(a->buffers[0], p)) {
      (*nulls)++;
      continue;
    }
    if (!strcmp(f, "l") || !strcmp(f, "g")) {
      uint64_t v;
      memcpy(&v, values + 8 * p, 8);
      *sum += v;
    } else if (!strcmp(f, "i")) {
      int32_t v;
      memcpy(&v, values + 4 * p, 4);
      *sum += (uint64_t)(int64_t)v;
    } else if (!strcmp(f, "b")) {
      *sum += (uint64_t)bit_of(values, p);
    } else if (!strcmp(f, "u") || !strcmp(f, "U")) {
      int64_t start, end;
      if (f[0] == 'u') {
        int32_t s32[2];
        memcpy(s32, values + 4 * p, 8);
        start = s32[0], end = s32[1];
      } else {
        memcpy(&start, values + 8 * p, 8);
        memcpy(&end, values + 8 * p + 8, 8);
      }
      for (int64_t k = start; k < end; k++) *sum += ((const uint8_t *)a->buffers[2])[k];
    } else if (!strcmp(f, "vu")) {
      const uint8_t *v = values + 16 * p;
      int32_t len, buf, off;
      memcpy(&len, v, 4);
      const uint8_t *data = v + 4;
      if (len > 12) {
        memcpy(&buf, v + 8, 4);
        memcpy(&off, v + 12, 4);
        data = (const uint8_t *)a->buffers[2 + buf] + off;
      }
      for (int32_t k = 0; k < len; k++) *sum += data[k];
    } else {
      return -1;
    }
  }
  return 0;
}

/* A decimal string as uint64 (the sums are written as strings: JSON
 * numbers lose bits above 2^53). */
static int decimal_u64(json_t *v, uint64_t *out) {
  const char *s = json_string_value(v);
  if (s == NULL) return -1;
  *out = strtoull(s, NULL, 10);
  return 0;
}

int tu_sums_from_json(json_t *doc, tu_sums *out) {
  memset(out, 0, sizeof *out);
  if (!json_is_object(doc)) return -1;
  out->rows = json_integer_value(json_object_get(doc, "rows"));
  const char *key;
  json_t *v;
  json_object_foreach(json_object_get(doc, "columns"), key, v) {
    if (out->n == TU_SUMS_MAX_COLUMNS) return -1;
    tu_column_sums *c = &out->cols[out->n++];
    snprintf(c->name, sizeof c->name, "%s", key);
    if (decimal_u64(json_object_get(v, "sum"), &c->sum) != 0) return -1;
    c->nulls = json_integer_value(json_object_get(v, "nulls"));
  }
  json_t *payload = json_object_get(doc, "payload_byte_sum");
  if (payload != NULL && decimal_u64(payload, &out->payload) != 0) return -1;
  return 0;
}

int tu_sums_load(const char *path, tu_sums *out) {
  json_error_t jerr;
  json_t *doc = json_load_file(path, 0, &jerr);
  int rc = doc ? tu_sums_from_json(doc, out) : -1;
  json_decref(doc);
  return rc;
}

/* Adds one batch's columns to out. */
static int add_batch(const struct ArrowSchema *schema, const struct ArrowArray *batch, tu_sums *out,
                     char *msg, size_t msgsz) {
  out->rows += batch->length;
  for (int i = 0; i < out->n; i++)
    if (tu_column_sum(schema->children[i], batch->children[i], &out->cols[i].sum,
                      &out->cols[i].nulls) != 0) {
      snprintf(msg, msgsz, "column %s: unexpected type %s", schema->children[i]->name,
               schema->children[i]->format);
      return -1;
    }
  return 0;
}

int tu_sums_of_reader(xchg_ipc_reader *r, tu_sums *out, tu_sums_batch_fn on_batch, void *ctx,
                      char *msg, size_t msgsz) {
  memset(out, 0, sizeof *out);
  xchg_error err;
  struct ArrowSchema schema;
  if (xchg_ipc_reader_schema(r, &schema, &err) != XCHG_OK) {
    snprintf(msg, msgsz, "schema: %s", err.message);
    return -1;
  }
  int rc = 0;
  if (schema.n_children > TU_SUMS_MAX_COLUMNS) {
    snprintf(msg, msgsz, "%" PRId64 " columns, more than the %d summed", schema.n_children,
             TU_SUMS_MAX_COLUMNS);
    rc = -1;
  }
  out->n = (int)schema.n_children;
  for (int i = 0; rc == 0 && i < out->n; i++)
    snprintf(out->cols[i].name, sizeof out->cols[i].name, "%s", schema.children[i]->name);
  while (rc == 0) {
    struct ArrowArray batch;
    if (xchg_ipc_reader_next(r, &batch, &err) != XCHG_OK) {
      snprintf(msg, msgsz, "batch: %s", err.message);
      rc = -1;
      break;
    }
    if (!batch.release) break;
    rc = add_batch(&schema, &batch, out, msg, msgsz);
    if (rc == 0 && on_batch != NULL) rc = on_batch(ctx, &batch, msg, msgsz);
    batch.release(&batch);
  }
  schema.release(&schema);
  return rc;
}

int tu_sums_compare(const tu_sums *want, const tu_sums *got, char *msg, size_t msgsz) {
  if (want->n == 0 || want->rows != got->rows || want->n != got->n) {
    snprintf(msg, msgsz, "%lld rows and %d columns, want %lld and %d", (long long)got->rows, got->n,
             (long long)want->rows, want->n);
    return -1;
  }
  for (int i = 0; i < want->n; i++) {
    const tu_column_sums *w = &want->cols[i], *g = &got->cols[i];
    if (strcmp(w->name, g->name) != 0 || w->sum != g->sum || w->nulls != g->nulls) {
      snprintf(msg, msgsz, "column %s: sum %" PRIu64 " nulls %lld, want %s: %" PRIu64 " nulls %lld",
               g->name, g->sum, (long long)g->nulls, w->name, w->sum, (long long)w->nulls);
      return -1;
    }
  }
  return 0;
}
