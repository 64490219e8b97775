/* jni_batch.c — org.xchg.XchgBatchReader over xchg_batch_decoder.
 *
 * A heap payload becomes a positional-read source (xchg_source_from_read_at)
 * whose reads are GetByteArrayRegion calls of exactly the ranges the
 * decoder reads: the framing and metadata, then the selected buffers, each
 * straight into its final (or decompression-source) buffer.  The decoder
 * reads every source on the calling thread, the only one whose JNIEnv may
 * be used here, and decompresses on the pool.  A direct payload becomes a
 * memory source: its uncompressed buffers are exported in place, and a
 * global reference keeps the ByteBuffer reachable until the last array
 * pointing into it is released. */
#include <stdlib.h>
#include <string.h>

#include "xchg/ipc.h"
#include "xchg_jni.h"

typedef struct xj_reader {
  xchg_batch_decoder *dec;
  xchg_pool *own_pool;       /* NULL with the default pool or none */
  struct ArrowSchema schema; /* exported once, for checksums */
} xj_reader;

JNIEXPORT jlong JNICALL Java_org_xchg_XchgBatchReader_nOpen(JNIEnv *env, jclass cls,
                                                            jbyteArray schema, jlongArray columns,
                                                            jint threads) {
  xj_reader *r = calloc(1, sizeof *r);
  jsize n_cols = columns ? (*env)->GetArrayLength(env, columns) : 0;
  jsize size = (*env)->GetArrayLength(env, schema);
  int64_t *cols = malloc(sizeof *cols * ((size_t)n_cols + 1));
  jbyte *bytes = malloc((size_t)size + 1);
  xchg_error err;
  xchg_status st = XCHG_OK;
  if (!r || !cols || !bytes) st = xchg_errorf(&err, XCHG_ENOMEM, "XchgBatchReader: out of memory");
  if (st == XCHG_OK && threads > 1) st = xchg_pool_create(threads, &r->own_pool, &err);
  if (st == XCHG_OK) {
    (*env)->GetByteArrayRegion(env, schema, 0, size, bytes);
    if (columns) (*env)->GetLongArrayRegion(env, columns, 0, n_cols, (jlong *)cols);
    xchg_ipc_read_options opts;
    xchg_ipc_read_options_init(&opts);
    opts.pool = threads == 0 ? xchg_pool_default() : r->own_pool;
    st = xchg_batch_decoder_open(bytes, (size_t)size, columns ? cols : NULL, n_cols, &opts, &r->dec,
                                 &err);
  }
  if (st == XCHG_OK) st = xchg_batch_decoder_schema(r->dec, &r->schema, &err);
  free(cols);
  free(bytes);
  if (st == XCHG_OK) return XJ_HANDLE(r);
  xj_throw_error(env, st, &err, NULL);
  if (r) {
    xchg_batch_decoder_free(r->dec);
    xchg_pool_free(r->own_pool);
  }
  free(r);
  return 0;
}

JNIEXPORT void JNICALL Java_org_xchg_XchgBatchReader_nClose(JNIEnv *env, jclass cls, jlong handle) {
  xj_reader *r = XJ_PTR(xj_reader, handle);
  r->schema.release(&r->schema);
  xchg_batch_decoder_free(r->dec);
  xchg_pool_free(r->own_pool);
  free(r);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgBatchReader_nExportSchema(JNIEnv *env, jclass cls,
                                                                   jlong handle, jlong address) {
  xchg_error err;
  xchg_status st = xchg_batch_decoder_schema(XJ_PTR(xj_reader, handle)->dec,
                                             XJ_PTR(struct ArrowSchema, address), &err);
  if (st != XCHG_OK) xj_throw_error(env, st, &err, NULL);
}

/* ---- decoding ------------------------------------------------------------ */

/* The sources of one call and what their reads copied. */
typedef struct heap_payload {
  JNIEnv *env;
  jbyteArray array; /* a local reference, valid during the call */
  jint offset;
  int64_t *copied;  /* bytes copied by all the call's sources */
} heap_payload;

static xchg_status heap_read_at(void *ctx, int64_t offset, void *dst, size_t n, xchg_error *err) {
  heap_payload *h = ctx;
  JNIEnv *env = h->env;
  for (size_t done = 0; done < n;) {
    size_t take = n - done < XJ_COPY_STEP ? n - done : XJ_COPY_STEP;
    (*env)->GetByteArrayRegion(env, h->array, h->offset + (jsize)(offset + done), (jsize)take,
                               (jbyte *)dst + done);
    if ((*env)->ExceptionCheck(env)) {
      (*env)->ExceptionClear(env);
      return xchg_errorf(err, XCHG_EIO, "copying %zu bytes at payload byte %llu failed", take,
                         (unsigned long long)(offset + done));
    }
    done += take;
  }
  *h->copied += (int64_t)n;
  return XCHG_OK;
}

/* Reads the n struct addresses; NULL with an exception pending. */
static struct ArrowArray **read_addresses(JNIEnv *env, jlongArray addresses, jsize n) {
  jlong *a = malloc(sizeof *a * ((size_t)n + 1));
  struct ArrowArray **out = malloc(sizeof *out * ((size_t)n + 1));
  if (!a || !out) {
    free(a);
    free(out);
    xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: address list");
    return NULL;
  }
  (*env)->GetLongArrayRegion(env, addresses, 0, n, a);
  for (jsize i = 0; i < n; i++) out[i] = XJ_PTR(struct ArrowArray, a[i]);
  free(a);
  return out;
}

/* Decodes the n sources into scratch structs, then moves them to their
 * addresses (so that a failure leaves the caller's structs untouched). */
static void decode_into(JNIEnv *env, const xj_reader *r, xchg_source **srcs, jsize n,
                        jlong first_batch, jlongArray addresses, int64_t *metadata) {
  struct ArrowArray **to = read_addresses(env, addresses, n);
  struct ArrowArray *outs = calloc((size_t)n + 1, sizeof *outs);
  xchg_error err;
  xchg_status st = to && outs ? xchg_batch_decoder_decode_many(r->dec, srcs, n, first_batch, outs,
                                                               metadata, &err)
                              : xchg_errorf(&err, XCHG_ENOMEM, "XchgBatchReader: out of memory");
  if (st == XCHG_OK)
    for (jsize i = 0; i < n; i++) *to[i] = outs[i];
  else if (!(*env)->ExceptionCheck(env))
    xj_throw_error(env, st, &err, NULL);
  free(outs);
  free(to);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgBatchReader_nDecodeHeap(
    JNIEnv *env, jclass cls, jlong handle, jobjectArray payloads, jintArray offsets,
    jintArray lengths, jlong first_batch, jlongArray addresses, jlongArray copied) {
  jsize n = (*env)->GetArrayLength(env, payloads);
  heap_payload *hp = calloc((size_t)n + 1, sizeof *hp);
  xchg_source **srcs = calloc((size_t)n + 1, sizeof *srcs);
  jint *off = malloc(sizeof *off * ((size_t)n + 1)), *len = malloc(sizeof *len * ((size_t)n + 1));
  int64_t body_and_metadata = 0, metadata = 0;
  xchg_error err;
  xchg_status st = XCHG_OK;
  int ok = hp && srcs && off && len && (*env)->EnsureLocalCapacity(env, n) == 0;
  if (ok) {
    (*env)->GetIntArrayRegion(env, offsets, 0, n, off);
    (*env)->GetIntArrayRegion(env, lengths, 0, n, len);
  }
  for (jsize i = 0; ok && i < n; i++) {
    hp[i] = (heap_payload){env, (*env)->GetObjectArrayElement(env, payloads, i), off[i],
                           &body_and_metadata};
    ok = hp[i].array &&
         (st = xchg_source_from_read_at((uint64_t)len[i], heap_read_at, NULL, &hp[i], &srcs[i],
                                        &err)) == XCHG_OK;
  }
  if (ok) decode_into(env, XJ_PTR(xj_reader, handle), srcs, n, first_batch, addresses, &metadata);
  else if (st != XCHG_OK) xj_throw_error(env, st, &err, NULL);
  else if (!(*env)->ExceptionCheck(env)) xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: payloads");
  for (jsize i = 0; srcs && hp && i < n; i++) {
    xchg_source_free(srcs[i]);
    if (hp[i].array) (*env)->DeleteLocalRef(env, hp[i].array);
  }
  jlong counts[2] = {body_and_metadata - metadata, metadata};
  (*env)->SetLongArrayRegion(env, copied, 0, 2, counts);
  free(hp);
  free(srcs);
  free(off);
  free(len);
}

/* A direct payload's memory is released with the last array using it, on
 * whichever thread releases that. */
static void release_direct(void *ctx, const void *data, size_t size) {
  (void)data;
  (void)size;
  JNIEnv *env = xj_env();
  if (env) (*env)->DeleteGlobalRef(env, (jobject)ctx);
}

/* *out NULL and XCHG_OK when buffer is not a direct buffer the JVM gives
 * access to (an IllegalArgumentException for the caller to throw). */
static xchg_status direct_source(JNIEnv *env, jobject buffer, jint position, jint limit,
                                 xchg_source **out, xchg_error *err) {
  *out = NULL;
  uint8_t *base = (*env)->GetDirectBufferAddress(env, buffer);
  jlong capacity = (*env)->GetDirectBufferCapacity(env, buffer);
  if (!base || position < 0 || limit < position || limit > capacity) return XCHG_OK;
  jobject ref = (*env)->NewGlobalRef(env, buffer);
  if (!ref) return xchg_errorf(err, XCHG_ENOMEM, "XchgBatchReader: no global reference to a payload");
  xchg_status st = xchg_source_from_memory(base + position, (size_t)(limit - position),
                                           release_direct, ref, out, err);
  if (st != XCHG_OK) (*env)->DeleteGlobalRef(env, ref);
  return st;
}

JNIEXPORT void JNICALL Java_org_xchg_XchgBatchReader_nDecodeDirect(
    JNIEnv *env, jclass cls, jlong handle, jobjectArray payloads, jintArray positions,
    jintArray limits, jlong first_batch, jlongArray addresses) {
  jsize n = (*env)->GetArrayLength(env, payloads);
  xchg_source **srcs = calloc((size_t)n + 1, sizeof *srcs);
  jint *pos = malloc(sizeof *pos * ((size_t)n + 1)), *lim = malloc(sizeof *lim * ((size_t)n + 1));
  int ok = srcs && pos && lim;
  xchg_error err;
  xchg_status st = XCHG_OK;
  if (ok) {
    (*env)->GetIntArrayRegion(env, positions, 0, n, pos);
    (*env)->GetIntArrayRegion(env, limits, 0, n, lim);
  }
  for (jsize i = 0; ok && i < n; i++) {
    jobject b = (*env)->GetObjectArrayElement(env, payloads, i);
    if (b) st = direct_source(env, b, pos[i], lim[i], &srcs[i], &err);
    if (b) (*env)->DeleteLocalRef(env, b);
    ok = srcs[i] != NULL;
  }
  if (ok) decode_into(env, XJ_PTR(xj_reader, handle), srcs, n, first_batch, addresses, NULL);
  else if (st != XCHG_OK) xj_throw_error(env, st, &err, NULL);
  else if (!(*env)->ExceptionCheck(env))
    xj_throw_java(env, "java/lang/IllegalArgumentException",
                  "XchgBatchReader: a payload is not a direct buffer the JVM gives access to");
  for (jsize i = 0; srcs && i < n; i++) xchg_source_free(srcs[i]);
  free(srcs);
  free(pos);
  free(lim);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgBatchReader_nColumnChecksum(JNIEnv *env, jclass cls,
                                                                     jlong handle, jlong address,
                                                                     jint column, jlongArray out) {
  const struct ArrowArray *batch = XJ_PTR(struct ArrowArray, address);
  xj_column_sum sum = {0};
  xchg_error err;
  xchg_status st = batch->release ? xj_add_column_sum(&XJ_PTR(xj_reader, handle)->schema, batch,
                                                      column, &sum, &err)
                                  : xchg_errorf(&err, XCHG_EINVAL, "the ArrowArray is released");
  if (st != XCHG_OK) {
    xj_throw_error(env, st, &err, NULL);
    return;
  }
  jlong v[3] = {(jlong)sum.sum, sum.nulls, sum.rows};
  (*env)->SetLongArrayRegion(env, out, 0, 3, v);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgBatchReader_nColumnBuffers(JNIEnv *env, jclass cls,
                                                                    jlong handle, jlong address,
                                                                    jint column,
                                                                    jobjectArray views) {
  const struct ArrowArray *batch = XJ_PTR(struct ArrowArray, address);
  xchg_error err;
  xchg_status st = batch->release ? xj_column_buffers(env, &XJ_PTR(xj_reader, handle)->schema,
                                                      batch, column, views, &err)
                                  : xchg_errorf(&err, XCHG_EINVAL, "the ArrowArray is released");
  if (st != XCHG_OK && !(*env)->ExceptionCheck(env)) xj_throw_error(env, st, &err, NULL);
}
