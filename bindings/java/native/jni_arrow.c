/* jni_arrow.c — native memory figures, the C Data Interface structs of
 * callers without Arrow Java, and what tests read from them: lengths,
 * schema names, and column checksums to check decoded values from Java. */
#include <stdlib.h>
#include <string.h>

#include "ipc/schema_view.h"
#include "xchg/buf.h"
#include "xchg/cache.h"
#include "xchg/version.h"
#include "xchg_jni.h"

JNIEXPORT jstring JNICALL Java_org_xchg_Xchg_version(JNIEnv *env, jclass cls) {
  return (*env)->NewStringUTF(env, xchg_version_string());
}

JNIEXPORT jlong JNICALL Java_org_xchg_Xchg_allocatedBytes(JNIEnv *env, jclass cls) {
  return xchg_buf_allocated_bytes();
}

JNIEXPORT jlong JNICALL Java_org_xchg_Xchg_liveBuffers(JNIEnv *env, jclass cls) {
  return xchg_buf_live_count();
}

JNIEXPORT void JNICALL Java_org_xchg_Xchg_nBufferMetrics(JNIEnv *env, jclass cls, jlongArray out) {
  xchg_buf_metrics m;
  xchg_buf_get_metrics(&m);
  jlong v[org_xchg_XchgBufferMetrics_COUNT];
  v[org_xchg_XchgBufferMetrics_ALLOCATED_BYTES] = m.allocated_bytes;
  v[org_xchg_XchgBufferMetrics_LIVE_BYTES] = m.live_bytes;
  v[org_xchg_XchgBufferMetrics_LIVE_BUFFERS] = m.live_buffers;
  v[org_xchg_XchgBufferMetrics_RECYCLED_BYTES] = m.recycled_bytes;
  v[org_xchg_XchgBufferMetrics_RECYCLED_BLOCKS] = m.recycled_blocks;
  v[org_xchg_XchgBufferMetrics_RECYCLE_LIMIT_BYTES] = m.recycle_limit_bytes;
  v[org_xchg_XchgBufferMetrics_REUSED_BLOCKS] = m.reused_blocks;
  (*env)->SetLongArrayRegion(env, out, 0, org_xchg_XchgBufferMetrics_COUNT, v);
}

JNIEXPORT jlong JNICALL Java_org_xchg_Xchg_nTrimBuffers(JNIEnv *env, jclass cls, jlong keep) {
  return (jlong)xchg_buf_trim((size_t)keep);
}

/* ---- C Data Interface structs ------------------------------------------------ */

static size_t struct_size(jint kind) {
  return kind == org_xchg_CDataStruct_ARRAY    ? sizeof(struct ArrowArray)
         : kind == org_xchg_CDataStruct_SCHEMA ? sizeof(struct ArrowSchema)
                                               : sizeof(struct ArrowArrayStream);
}

/* Calls the release callback of what the struct holds, if anything, and
 * marks it released (the callback does too, as the spec asks). */
static void release_struct(jint kind, jlong address) {
  if (kind == org_xchg_CDataStruct_ARRAY) {
    struct ArrowArray *a = XJ_PTR(struct ArrowArray, address);
    if (a->release) a->release(a);
    a->release = NULL;
  } else if (kind == org_xchg_CDataStruct_SCHEMA) {
    struct ArrowSchema *s = XJ_PTR(struct ArrowSchema, address);
    if (s->release) s->release(s);
    s->release = NULL;
  } else {
    struct ArrowArrayStream *s = XJ_PTR(struct ArrowArrayStream, address);
    if (s->release) s->release(s);
    s->release = NULL;
  }
}

JNIEXPORT jlong JNICALL Java_org_xchg_CDataStruct_nAllocate(JNIEnv *env, jclass cls, jint kind) {
  void *p = calloc(1, struct_size(kind));
  if (!p) xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: C Data struct");
  return XJ_HANDLE(p);
}

JNIEXPORT void JNICALL Java_org_xchg_CDataStruct_nRelease(JNIEnv *env, jclass cls, jint kind,
                                                          jlong address) {
  release_struct(kind, address);
}

JNIEXPORT void JNICALL Java_org_xchg_CDataStruct_nFree(JNIEnv *env, jclass cls, jint kind,
                                                       jlong address) {
  release_struct(kind, address);
  free(XJ_PTR(void, address));
}

/* ---- TestHooks ------------------------------------------------------------------ */

static int address_ok(JNIEnv *env, jlong address) {
  if (address != 0) return 1;
  xj_throw_java(env, "java/lang/IllegalArgumentException", "null struct address");
  return 0;
}

JNIEXPORT jlong JNICALL Java_org_xchg_TestHooks_arrayLength(JNIEnv *env, jclass cls,
                                                            jlong address) {
  if (!address_ok(env, address)) return 0;
  const struct ArrowArray *a = XJ_PTR(struct ArrowArray, address);
  if (!a->release) {
    xj_throw_java(env, "java/lang/IllegalStateException", "ArrowArray is released");
    return 0;
  }
  return a->length;
}

JNIEXPORT jlong JNICALL Java_org_xchg_TestHooks_childOffset(JNIEnv *env, jclass cls, jlong address,
                                                            jint child) {
  if (!address_ok(env, address)) return 0;
  const struct ArrowArray *a = XJ_PTR(struct ArrowArray, address);
  if (!a->release) {
    xj_throw_java(env, "java/lang/IllegalStateException", "ArrowArray is released");
    return 0;
  }
  if (child < 0 || child >= a->n_children) {
    xj_throw_java(env, "java/lang/IndexOutOfBoundsException", "ArrowArray child out of range");
    return 0;
  }
  return a->children[child]->offset;
}

JNIEXPORT jboolean JNICALL Java_org_xchg_TestHooks_arrayReleased(JNIEnv *env, jclass cls,
                                                                 jlong address) {
  return address_ok(env, address) && !XJ_PTR(struct ArrowArray, address)->release;
}

/* The schema at address, or its child `child` (-1: itself); NULL with an
 * exception pending when there is none. */
static const struct ArrowSchema *schema_node(JNIEnv *env, jlong address, jint child) {
  if (!address_ok(env, address)) return NULL;
  const struct ArrowSchema *s = XJ_PTR(struct ArrowSchema, address);
  if (!s->release) {
    xj_throw_java(env, "java/lang/IllegalStateException", "ArrowSchema is released");
    return NULL;
  }
  if (child == -1) return s;
  if (child < 0 || child >= s->n_children) {
    xj_throw_java(env, "java/lang/IndexOutOfBoundsException", "ArrowSchema child out of range");
    return NULL;
  }
  return s->children[child];
}

JNIEXPORT jstring JNICALL Java_org_xchg_TestHooks_schemaFormat(JNIEnv *env, jclass cls,
                                                               jlong address, jint child) {
  const struct ArrowSchema *s = schema_node(env, address, child);
  return s ? (*env)->NewStringUTF(env, s->format) : NULL;
}

JNIEXPORT jstring JNICALL Java_org_xchg_TestHooks_schemaName(JNIEnv *env, jclass cls, jlong address,
                                                             jint child) {
  const struct ArrowSchema *s = schema_node(env, address, child);
  return s && s->name ? (*env)->NewStringUTF(env, s->name) : NULL;
}

/* ---- column checksums ---------------------------------------------------- */

static int is_valid(const struct ArrowArray *a, int64_t i) {
  const uint8_t *bits = a->buffers[0];
  int64_t j = a->offset + i;
  return !bits || ((bits[j >> 3] >> (j & 7)) & 1);
}

/* A fixed-width value of `width` bytes at row i, sign-extended or not. */
static uint64_t fixed_value(const struct ArrowArray *a, int64_t i, int width, int is_signed) {
  const uint8_t *p = (const uint8_t *)a->buffers[1] + (a->offset + i) * width;
  switch (width) {
    case 1: return is_signed ? (uint64_t)(int64_t) * (const int8_t *)p : *p;
    case 2: {
      uint16_t v;
      memcpy(&v, p, 2);
      return is_signed ? (uint64_t)(int64_t)(int16_t)v : v;
    }
    case 4: {
      uint32_t v;
      memcpy(&v, p, 4);
      return is_signed ? (uint64_t)(int64_t)(int32_t)v : v;
    }
    default: {
      uint64_t v;
      memcpy(&v, p, 8);
      return v;
    }
  }
}

/* Bytes of row i of a string or binary array with 32- or 64-bit offsets. */
static uint64_t bytes_sum(const struct ArrowArray *a, int64_t i, int wide) {
  int64_t start, end;
  if (wide) {
    const int64_t *o = (const int64_t *)a->buffers[1] + a->offset + i;
    start = o[0];
    end = o[1];
  } else {
    const int32_t *o = (const int32_t *)a->buffers[1] + a->offset + i;
    start = o[0];
    end = o[1];
  }
  const uint8_t *data = a->buffers[2];
  uint64_t s = 0;
  for (int64_t j = start; j < end; j++) s += data[j];
  return s;
}

/* How a format is summed: 'f'ixed width, 'b'ool, 's'tring/binary. */
typedef struct sum_kind {
  char kind;
  int width; /* bytes (fixed); 1 = 64-bit offsets (string) */
  int is_signed;
} sum_kind;

static int sum_kind_of(const char *format, sum_kind *k) {
  ipc_schema_view v;
  if (ipc_schema_view_parse(format, &v, NULL) != XCHG_OK) return 0;
  switch (v.kind) {
    case IPC_KIND_INT:
    case IPC_KIND_FLOAT:
      k->kind = 'f';
      k->width = v.bit_width / 8;
      k->is_signed = v.is_signed;
      return 1;
    case IPC_KIND_BOOL: k->kind = 'b'; return 1;
    case IPC_KIND_BINARY:
      k->kind = 's';
      k->width = v.large;
      return 1;
    default: return 0;
  }
}

/* Bytes of rows [0, length) of a string array with no nulls: one run of
 * its data, summed in one loop the compiler can vectorise. */
static uint64_t bytes_sum_all(const struct ArrowArray *a, int wide) {
  int64_t start, end;
  if (wide) {
    const int64_t *o = (const int64_t *)a->buffers[1] + a->offset;
    start = o[0];
    end = o[a->length];
  } else {
    const int32_t *o = (const int32_t *)a->buffers[1] + a->offset;
    start = o[0];
    end = o[a->length];
  }
  const uint8_t *data = a->buffers[2];
  uint64_t s = 0;
  for (int64_t j = start; j < end; j++) s += data[j];
  return s;
}

static void add_array(const struct ArrowArray *a, const sum_kind *k, xj_column_sum *out) {
  if (k->kind == 's' && a->length > 0 && (a->null_count == 0 || !a->buffers[0])) {
    out->sum += bytes_sum_all(a, k->width);
    out->rows += a->length;
    return;
  }
  for (int64_t i = 0; i < a->length; i++) {
    if (!is_valid(a, i)) {
      out->nulls++;
      continue;
    }
    if (k->kind == 'f') {
      out->sum += fixed_value(a, i, k->width, k->is_signed);
    } else if (k->kind == 'b') {
      int64_t j = a->offset + i;
      out->sum += (((const uint8_t *)a->buffers[1])[j >> 3] >> (j & 7)) & 1;
    } else {
      out->sum += bytes_sum(a, i, k->width);
    }
  }
  out->rows += a->length;
}

/* How column `column` of batch, a "+s" array of schema, is summed. */
static xchg_status column_kind(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                               jint column, sum_kind *k, xchg_error *err) {
  if (column < 0 || column >= schema->n_children || column >= batch->n_children)
    return xchg_errorf(err, XCHG_EINVAL, "column %d out of range: the batch has %lld", (int)column,
                       (long long)schema->n_children);
  const struct ArrowSchema *field = schema->children[column];
  if (field->dictionary || !sum_kind_of(field->format, k))
    return xchg_errorf(err, XCHG_ENOTSUP, "column %d: no checksum for format '%s'%s", (int)column,
                       field->format, field->dictionary ? " (dictionary-encoded)" : "");
  return XCHG_OK;
}

xchg_status xj_add_column_sum(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                              jint column, xj_column_sum *out, xchg_error *err) {
  sum_kind k = {0};
  xchg_status st = column_kind(schema, batch, column, &k, err);
  if (st == XCHG_OK) add_array(batch->children[column], &k, out);
  return st;
}

/* The byte length of each buffer of a with kind k: validity and boolean
 * values (offset + length) bits, fixed-width values that many values,
 * offsets one more, string data up to the last offset. */
static void buffer_sizes(const struct ArrowArray *a, const sum_kind *k, int64_t sizes[3]) {
  int64_t end = a->offset + a->length;
  sizes[0] = a->buffers[0] ? (end + 7) / 8 : 0;
  sizes[1] = k->kind == 'f'   ? end * k->width
             : k->kind == 'b' ? (end + 7) / 8
                              : (end + 1) * (k->width ? 8 : 4);
  sizes[2] = 0;
  if (k->kind == 's')
    sizes[2] =
        k->width ? ((const int64_t *)a->buffers[1])[end] : ((const int32_t *)a->buffers[1])[end];
}

xchg_status xj_column_buffers(JNIEnv *env, const struct ArrowSchema *schema,
                              const struct ArrowArray *batch, jint column, jobjectArray views,
                              xchg_error *err) {
  sum_kind k = {0};
  xchg_status st = column_kind(schema, batch, column, &k, err);
  if (st != XCHG_OK) return st;
  const struct ArrowArray *a = batch->children[column];
  int64_t sizes[3];
  buffer_sizes(a, &k, sizes);
  for (jsize i = 0; i < 3; i++) {
    int present = i < a->n_buffers && a->buffers[i];
    jobject view =
        present ? (*env)->NewDirectByteBuffer(env, (void *)a->buffers[i], sizes[i]) : NULL;
    if (present && !view) return XCHG_ENOMEM; /* an exception is pending */
    (*env)->SetObjectArrayElement(env, views, i, view);
    if (view) (*env)->DeleteLocalRef(env, view);
  }
  return XCHG_OK;
}

static xchg_status column_checksum(const xchg_cache_holder *h, jint column, xj_column_sum *out,
                                   xchg_error *err) {
  struct ArrowSchema schema;
  xchg_status st = xchg_cache_holder_schema(h, &schema, err);
  if (st != XCHG_OK) return st;
  int64_t n = xchg_cache_holder_num_batches(h);
  if (n == 0 && (column < 0 || column >= schema.n_children))
    st = xchg_errorf(err, XCHG_EINVAL, "column %d out of range: the holder has %lld", (int)column,
                     (long long)schema.n_children);
  for (int64_t b = 0; st == XCHG_OK && b < n; b++) {
    struct ArrowArray batch;
    if ((st = xchg_cache_holder_batch(h, b, &batch, err)) != XCHG_OK) break;
    st = xj_add_column_sum(&schema, &batch, column, out, err);
    batch.release(&batch);
  }
  schema.release(&schema);
  return st;
}

void xj_return_column_sum(JNIEnv *env, xchg_status st, xchg_error *err, const xj_column_sum *sum,
                          jlongArray out) {
  if (st != XCHG_OK) {
    xj_throw_error(env, st, err, NULL);
    return;
  }
  jlong v[3] = {(jlong)sum->sum, sum->nulls, sum->rows};
  (*env)->SetLongArrayRegion(env, out, 0, 3, v);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgCacheHolder_nColumnChecksum(JNIEnv *env, jclass cls,
                                                                     jlong handle, jint column,
                                                                     jlongArray out) {
  xj_column_sum sum = {0};
  xchg_error err;
  xchg_status st = column_checksum(xj_cache_holder(handle), column, &sum, &err);
  xj_return_column_sum(env, st, &err, &sum, out);
}

/* ---- TestHooks: a column of an exported batch ------------------------------ */

/* The batch at `array` and the schema at `schema` that describes it; NULL
 * with an exception pending when either is missing or released. */
static const struct ArrowArray *described_batch(JNIEnv *env, jlong schema, jlong array,
                                                const struct ArrowSchema **s) {
  if (!(*s = schema_node(env, schema, -1)) || !address_ok(env, array)) return NULL;
  const struct ArrowArray *a = XJ_PTR(struct ArrowArray, array);
  if (a->release) return a;
  xj_throw_java(env, "java/lang/IllegalStateException", "ArrowArray is released");
  return NULL;
}

JNIEXPORT void JNICALL Java_org_xchg_TestHooks_nColumnChecksum(JNIEnv *env, jclass cls,
                                                               jlong schema, jlong array,
                                                               jint column, jlongArray out) {
  const struct ArrowSchema *s;
  const struct ArrowArray *batch = described_batch(env, schema, array, &s);
  if (!batch) return;
  xj_column_sum sum = {0};
  xchg_error err;
  xchg_status st = xj_add_column_sum(s, batch, column, &sum, &err);
  xj_return_column_sum(env, st, &err, &sum, out);
}

JNIEXPORT void JNICALL Java_org_xchg_TestHooks_nColumnBuffers(JNIEnv *env, jclass cls, jlong schema,
                                                              jlong array, jint column,
                                                              jobjectArray views) {
  const struct ArrowSchema *s;
  const struct ArrowArray *batch = described_batch(env, schema, array, &s);
  if (!batch) return;
  xchg_error err;
  xchg_status st = xj_column_buffers(env, s, batch, column, views, &err);
  if (st != XCHG_OK && !(*env)->ExceptionCheck(env)) xj_throw_error(env, st, &err, NULL);
}
