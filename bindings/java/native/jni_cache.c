/* jni_cache.c — org.xchg.XchgCache and XchgCacheHolder over xchg/cache.h.
 *
 * A task's kill check (a java.util.function.BooleanSupplier) becomes the
 * cache's cancel callback.  Whatever it throws is kept, counts as "killed",
 * and is rethrown as is when the acquisition ends, so that an engine's own
 * TaskKilledException reaches the task unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xchg/cache.h"
#include "xchg_jni.h"

/* A holder handed to Java: the cache's holder and the chunks its bytes
 * came from, which must live until it is released. */
typedef struct xj_holder {
  xchg_cache_holder *holder;
  xj_chunks *chunks;
} xj_holder;

/* ---- the cache ---------------------------------------------------------- */

/* The bytes of a Java byte[] that holds no NUL (a path's, XchgCache.
 * pathBytes; a key's UTF-8, XchgCache.keyBytes), NUL-terminated; NULL with
 * an OutOfMemoryError pending.  Not JNI's modified UTF-8 of a String, which
 * names a character outside the BMP by its two surrogates. */
static char *c_string(JNIEnv *env, jbyteArray bytes, const char *what) {
  jsize n = (*env)->GetArrayLength(env, bytes);
  char *s = malloc((size_t)n + 1);
  if (!s) {
    xj_throw_java(env, "java/lang/OutOfMemoryError", what);
    return NULL;
  }
  (*env)->GetByteArrayRegion(env, bytes, 0, n, (jbyte *)s);
  s[n] = '\0';
  return s;
}

JNIEXPORT jlong JNICALL Java_org_xchg_XchgCache_nCreate(JNIEnv *env, jclass cls, jboolean sharing,
                                                        jlong wait_check_ms, jlong retain_bytes,
                                                        jlong retain_ms, jint validation,
                                                        jbyteArray host_dir,
                                                        jlong host_retain_bytes,
                                                        jlong host_retain_ms) {
  /* Options' setters refused bad values; xchg_cache_create checks them again. */
  xchg_cache_options opts;
  xchg_cache_options_init(&opts);
  opts.sharing = sharing ? 1 : 0;
  opts.wait_check_ms = wait_check_ms;
  opts.retain_bytes = retain_bytes;
  opts.retain_ms = retain_ms;
  opts.read.validation = (xchg_validation)validation;
  char *dir = NULL;
  if (host_dir && !(dir = c_string(env, host_dir, "xchg: host directory"))) return 0;
  opts.host_dir = dir;
  opts.host_retain_bytes = host_retain_bytes;
  opts.host_retain_ms = host_retain_ms;
  xchg_cache *cache;
  xchg_error err;
  xchg_status st = xchg_cache_create(&opts, &cache, &err); /* reads host_dir, keeps nothing of it */
  free(dir);
  if (st != XCHG_OK) xj_throw(env, st, err.message, NULL);
  return XJ_HANDLE(cache);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgCache_nDestroy(JNIEnv *env, jclass cls, jlong cache) {
  xchg_cache_free(XJ_PTR(xchg_cache, cache));
}

JNIEXPORT void JNICALL Java_org_xchg_XchgCache_nTrim(JNIEnv *env, jclass cls, jlong cache) {
  xchg_cache_trim(XJ_PTR(xchg_cache, cache));
}

JNIEXPORT void JNICALL Java_org_xchg_XchgCache_nMetrics(JNIEnv *env, jclass cls, jlong cache,
                                                        jlongArray out) {
  xchg_cache_metrics m;
  xchg_cache_get_metrics(XJ_PTR(xchg_cache, cache), &m);
  jlong v[org_xchg_XchgCacheMetrics_COUNT];
  v[org_xchg_XchgCacheMetrics_ACQUISITIONS] = m.acquisitions;
  v[org_xchg_XchgCacheMetrics_HITS] = m.hits;
  v[org_xchg_XchgCacheMetrics_WAITS] = m.waits;
  v[org_xchg_XchgCacheMetrics_DECODES] = m.decodes;
  v[org_xchg_XchgCacheMetrics_FAILED_DECODES] = m.failed_decodes;
  v[org_xchg_XchgCacheMetrics_CANCELLATIONS] = m.cancellations;
  v[org_xchg_XchgCacheMetrics_DERIVED_BUILDS] = m.derived_builds;
  v[org_xchg_XchgCacheMetrics_ENTRIES] = m.entries;
  v[org_xchg_XchgCacheMetrics_RETAINED] = m.retained;
  v[org_xchg_XchgCacheMetrics_BYTES_HELD] = m.bytes_held;
  v[org_xchg_XchgCacheMetrics_EVICTIONS] = m.evictions;
  v[org_xchg_XchgCacheMetrics_HOST_DECODES] = m.host_decodes;
  v[org_xchg_XchgCacheMetrics_HOST_MAPS] = m.host_maps;
  v[org_xchg_XchgCacheMetrics_HOST_WAITS] = m.host_waits;
  v[org_xchg_XchgCacheMetrics_HOST_FALLBACKS] = m.host_fallbacks;
  v[org_xchg_XchgCacheMetrics_HOST_EVICTIONS] = m.host_evictions;
  v[org_xchg_XchgCacheMetrics_BYTES_SHARED] = m.bytes_shared;
  (*env)->SetLongArrayRegion(env, out, 0, org_xchg_XchgCacheMetrics_COUNT, v);
}

/* ---- acquiring ---------------------------------------------------------- */

typedef struct part_opener {
  const xj_chunks *chunks;
  const jint *starts; /* part p is chunks [starts[p], starts[p+1]) */
} part_opener;

static xchg_status open_java_part(void *ctx, int64_t part, xchg_source **out, xchg_error *err) {
  part_opener *o = ctx;
  size_t first = (size_t)o->starts[part];
  return xj_chunks_source(o->chunks, first, (size_t)o->starts[part + 1] - first, out, err);
}

static int is_stream_codec(jint codec) {
  return codec >= XCHG_STREAM_NONE && codec <= XCHG_STREAM_AUTO;
}

/* Checks part starts: 0 first, non-decreasing, the chunk count last. */
static jint *read_part_starts(JNIEnv *env, jintArray part_starts, size_t n_chunks, jsize *n_parts) {
  jsize n = (*env)->GetArrayLength(env, part_starts);
  jint *starts = malloc(sizeof(jint) * ((size_t)n + 1));
  if (!starts) {
    xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: part list");
    return NULL;
  }
  (*env)->GetIntArrayRegion(env, part_starts, 0, n, starts);
  int ok = n >= 1 && starts[0] == 0 && (size_t)starts[n - 1] == n_chunks;
  for (jsize i = 1; ok && i < n; i++) ok = starts[i] >= starts[i - 1];
  if (!ok) {
    free(starts);
    xj_throw_java(env, "java/lang/IllegalArgumentException", "bad part starts");
    return NULL;
  }
  *n_parts = n - 1;
  return starts;
}

static int64_t *read_columns(JNIEnv *env, jlongArray columns, int64_t *n) {
  *n = (*env)->GetArrayLength(env, columns);
  int64_t *cols = malloc(sizeof *cols * ((size_t)*n + 1));
  if (!cols) {
    xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: column list");
    return NULL;
  }
  (*env)->GetLongArrayRegion(env, columns, 0, (jsize)*n, (jlong *)cols);
  return cols;
}

JNIEXPORT jlong JNICALL Java_org_xchg_XchgCache_nAcquire(JNIEnv *env, jclass cls, jlong cache,
                                                         jbyteArray key, jobjectArray buffers,
                                                         jobjectArray heap, jintArray offsets,
                                                         jintArray lengths, jintArray part_starts,
                                                         jint codec, jlongArray columns,
                                                         jobject kill) {
  if (!is_stream_codec(codec)) {
    xj_throw_java(env, "java/lang/IllegalArgumentException", "unknown stream codec");
    return 0;
  }
  xj_holder *h = calloc(1, sizeof *h);
  xj_kill_check k = {0};
  jint *starts = NULL;
  int64_t *cols = NULL, n_cols = 0;
  xchg_broadcast_part *parts = NULL;
  char *ckey = NULL;
  xchg_error err = {{0}};
  xchg_status st = XCHG_OK;
  jsize n_parts = 0;

  if (!h) {
    xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: holder");
    goto done;
  }
  if (!(h->chunks = xj_chunks_new(env, buffers, heap, offsets, lengths))) goto done;
  if (!(starts = read_part_starts(env, part_starts, h->chunks->count, &n_parts))) goto done;
  if (columns && !(cols = read_columns(env, columns, &n_cols))) goto done;
  if (!(ckey = c_string(env, key, "xchg: cache key"))) goto done;
  parts = calloc((size_t)n_parts + 1, sizeof *parts);
  if (!parts) {
    xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: part list");
    goto done;
  }
  for (jsize p = 0; p < n_parts; p++) parts[p].codec = (xchg_stream_codec)codec;
  if (!xj_kill_check_begin(env, &k, kill)) goto done;

  /* Every part is opened through the chunk sources, which read direct
   * chunks in place and heap chunks through GetByteArrayRegion. */
  part_opener opener = {h->chunks, starts};
  xchg_broadcast bytes = {parts, n_parts, open_java_part, &opener};
  xchg_cache_request req;
  xchg_cache_request_init(&req);
  req.columns = cols;
  req.n_columns = columns ? n_cols : 0;
  req.cancel = kill ? xj_kill_check_ask : NULL;
  req.cancel_ctx = &k;
  st = xchg_cache_acquire(XJ_PTR(xchg_cache, cache), ckey, &bytes, &req, &h->holder, &err);
  if (st != XCHG_OK) xj_kill_check_throw(env, &k, st, &err);

done:
  free(ckey);
  xj_kill_check_end(env, &k);
  free(parts);
  free(cols);
  free(starts);
  if (h && !h->holder) {
    xj_chunks_free(env, h->chunks);
    free(h);
    return 0;
  }
  return XJ_HANDLE(h);
}

/* ---- the holder --------------------------------------------------------- */

xchg_cache_holder *xj_cache_holder(jlong handle) { return XJ_PTR(xj_holder, handle)->holder; }

JNIEXPORT void JNICALL Java_org_xchg_XchgCacheHolder_nRelease(JNIEnv *env, jclass cls,
                                                              jlong handle) {
  xj_holder *h = XJ_PTR(xj_holder, handle);
  xchg_cache_holder_release(h->holder);
  xj_chunks_free(env, h->chunks);
  free(h);
}

JNIEXPORT jlong JNICALL Java_org_xchg_XchgCacheHolder_nNumBatches(JNIEnv *env, jclass cls,
                                                                  jlong handle) {
  return xchg_cache_holder_num_batches(xj_cache_holder(handle));
}

JNIEXPORT jlong JNICALL Java_org_xchg_XchgCacheHolder_nNumRows(JNIEnv *env, jclass cls,
                                                               jlong handle) {
  return xchg_cache_holder_num_rows(xj_cache_holder(handle));
}

JNIEXPORT void JNICALL Java_org_xchg_XchgCacheHolder_nExportSchema(JNIEnv *env, jclass cls,
                                                                   jlong handle, jlong address) {
  struct ArrowSchema *out = XJ_PTR(struct ArrowSchema, address);
  if (!xj_empty_struct(env, out->release != NULL, "XchgCacheHolder", "ArrowSchema", "exporting"))
    return;
  xchg_error err;
  xchg_status st = xchg_cache_holder_schema(xj_cache_holder(handle), out, &err);
  if (st != XCHG_OK) xj_throw_error(env, st, &err, NULL);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgCacheHolder_nExportBatch(JNIEnv *env, jclass cls,
                                                                  jlong handle, jlong index,
                                                                  jlong address) {
  const xchg_cache_holder *holder = xj_cache_holder(handle);
  int64_t n = xchg_cache_holder_num_batches(holder);
  if (index < 0 || index >= n) {
    char m[128];
    snprintf(m, sizeof m, "batch %lld out of range: the holder has %lld", (long long)index,
             (long long)n);
    xj_throw_java(env, "java/lang/IndexOutOfBoundsException", m);
    return;
  }
  struct ArrowArray *out = XJ_PTR(struct ArrowArray, address);
  if (!xj_empty_struct(env, out->release != NULL, "XchgCacheHolder", "ArrowArray", "exporting"))
    return;
  xchg_error err;
  xchg_status st = xchg_cache_holder_batch(holder, index, out, &err);
  if (st != XCHG_OK) xj_throw_error(env, st, &err, NULL);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgCacheHolder_nExportStream(JNIEnv *env, jclass cls,
                                                                   jlong handle, jlong address) {
  struct ArrowArrayStream *out = XJ_PTR(struct ArrowArrayStream, address);
  if (!xj_empty_struct(env, out->release != NULL, "XchgCacheHolder", "ArrowArrayStream",
                       "exporting"))
    return;
  xchg_error err;
  xchg_status st = xchg_cache_holder_stream(xj_cache_holder(handle), out, &err);
  if (st != XCHG_OK) xj_throw_error(env, st, &err, NULL);
}
