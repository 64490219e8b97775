/* jni_batch.c — org.xchg.XchgBatchDecoder over xchg_batch_decoder.
 *
 * A heap payload becomes a positional-read source (xchg_source_from_read_at)
 * whose reads are GetByteArrayRegion calls, at most XJ_COPY_STEP bytes each,
 * of exactly the ranges the decoder reads: the framing and metadata, then
 * the selected buffers, each straight into its final (or
 * decompression-source) buffer.  decodeMany's sources are read on the
 * decoder's pool (xchg_batch_decoder_decode_many), so the reads work on any
 * thread: each takes its thread's JNIEnv (attaching a pool worker) and its
 * payload's byte[] from a global reference made once per payload (fetching
 * the array's element at every read cost two JNI calls a buffer).  No
 * critical region is ever entered: a GC waits for one 64 KiB copy at most.
 *
 * A read-only heap ByteBuffer (decode only) is a heap payload over the
 * array Java hides, taken from the buffer's fields (xj_hidden_array).
 *
 * A direct payload becomes a memory source (xj_direct_source, jni_common.c):
 * its uncompressed buffers are exported in place, and a global reference
 * keeps the ByteBuffer reachable until the last array pointing into it is
 * released.
 *
 * Nothing here allocates a Java object but on an error (the exception). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xchg/ipc.h"
#include "xchg_jni.h"

typedef struct xj_decoder {
  xchg_batch_decoder *dec;
  xchg_pool *own_pool;       /* NULL with the default pool or none */
  struct ArrowSchema schema; /* exported once, for checksums */
  atomic_llong heap_bytes;   /* body bytes copied out of heap arrays */
  atomic_llong metadata_bytes;
} xj_decoder;

JNIEXPORT jlong JNICALL Java_org_xchg_XchgBatchDecoder_nOpen(JNIEnv *env, jclass cls,
                                                             jbyteArray schema, jlongArray columns,
                                                             jint threads, jint validation) {
  xj_decoder *d = calloc(1, sizeof *d);
  jsize n_cols = columns ? (*env)->GetArrayLength(env, columns) : 0;
  jsize size = (*env)->GetArrayLength(env, schema);
  int64_t *cols = malloc(sizeof *cols * ((size_t)n_cols + 1));
  jbyte *bytes = malloc((size_t)size + 1);
  xchg_error err;
  xchg_status st = XCHG_OK;
  if (!d || !cols || !bytes) st = xchg_errorf(&err, XCHG_ENOMEM, "XchgBatchDecoder: out of memory");
  if (st == XCHG_OK && threads > 1) st = xchg_pool_create(threads, &d->own_pool, &err);
  if (st == XCHG_OK) {
    (*env)->GetByteArrayRegion(env, schema, 0, size, bytes);
    if (columns) (*env)->GetLongArrayRegion(env, columns, 0, n_cols, (jlong *)cols);
    xchg_ipc_read_options opts;
    xchg_ipc_read_options_init(&opts);
    opts.pool = threads == 0 ? xchg_pool_default() : d->own_pool;
    opts.validation = (xchg_validation)validation;
    st = xchg_batch_decoder_open(bytes, (size_t)size, columns ? cols : NULL, n_cols, &opts, &d->dec,
                                 &err);
  }
  if (st == XCHG_OK) st = xchg_batch_decoder_schema(d->dec, &d->schema, &err);
  free(cols);
  free(bytes);
  if (st == XCHG_OK) return XJ_HANDLE(d);
  xj_throw_error(env, st, &err, NULL);
  if (d) {
    xchg_batch_decoder_free(d->dec);
    xchg_pool_free(d->own_pool);
  }
  free(d);
  return 0;
}

JNIEXPORT void JNICALL Java_org_xchg_XchgBatchDecoder_nClose(JNIEnv *env, jclass cls,
                                                             jlong handle) {
  xj_decoder *d = XJ_PTR(xj_decoder, handle);
  d->schema.release(&d->schema);
  xchg_batch_decoder_free(d->dec);
  xchg_pool_free(d->own_pool);
  free(d);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgBatchDecoder_nExportSchema(JNIEnv *env, jclass cls,
                                                                    jlong handle, jlong address) {
  struct ArrowSchema *out = XJ_PTR(struct ArrowSchema, address);
  if (!xj_empty_struct(env, out->release != NULL, "XchgBatchDecoder", "ArrowSchema", "exporting"))
    return;
  xchg_error err;
  xchg_status st = xchg_batch_decoder_schema(XJ_PTR(xj_decoder, handle)->dec, out, &err);
  if (st != XCHG_OK) xj_throw_error(env, st, &err, NULL);
}

JNIEXPORT jlong JNICALL Java_org_xchg_XchgBatchDecoder_nCopied(JNIEnv *env, jclass cls,
                                                               jlong handle, jboolean metadata) {
  xj_decoder *d = XJ_PTR(xj_decoder, handle);
  return atomic_load(metadata ? &d->metadata_bytes : &d->heap_bytes);
}

/* ---- one call's payloads ---------------------------------------------------- */

/* A heap payload: its byte[], a local reference (decode: read on the
 * calling thread only) or a global one (decodeMany: read on any thread). */
typedef struct heap_payload {
  jbyteArray array;
  jint offset;
  int64_t copied; /* bytes its reads copied; one thread reads a payload at a time */
} heap_payload;

static xchg_status heap_read_at(void *ctx, int64_t offset, void *dst, size_t n, xchg_error *err) {
  heap_payload *h = ctx;
  JNIEnv *env = xj_env();
  if (!env) return xchg_errorf(err, XCHG_EIO, "payload: no JNIEnv on this thread");
  for (size_t done = 0; done < n;) {
    size_t take = n - done < XJ_COPY_STEP ? n - done : XJ_COPY_STEP;
    (*env)->GetByteArrayRegion(env, h->array, h->offset + (jsize)(offset + done), (jsize)take,
                               (jbyte *)dst + done);
    if ((*env)->ExceptionCheck(env)) {
      (*env)->ExceptionClear(env);
      return xchg_errorf(err, XCHG_EIO, "copying %zu bytes at payload byte %llu failed", n,
                         (unsigned long long)offset);
    }
    done += take;
  }
  h->copied += (int64_t)n;
  return XCHG_OK;
}

/* What a call decodes: n sources and the caller's structs they go to.
 * Calls of one payload use the inline room; others allocate. */
typedef struct call {
  jsize n;
  xchg_source **srcs;
  struct ArrowArray **to;
  struct ArrowArray *outs;
  heap_payload *heap; /* heap calls only */
  xchg_source *one_src;
  struct ArrowArray *one_to;
  struct ArrowArray one_out;
  heap_payload one_heap;
} call;

/* Sets up room for n payloads; 0 with an OutOfMemoryError pending. */
static int call_init(JNIEnv *env, call *c, jsize n, int heap) {
  memset(c, 0, sizeof *c);
  c->n = n;
  if (n == 1) {
    c->srcs = &c->one_src;
    c->to = &c->one_to;
    c->outs = &c->one_out;
    c->heap = heap ? &c->one_heap : NULL;
    return 1;
  }
  c->srcs = calloc((size_t)n + 1, sizeof *c->srcs);
  c->to = calloc((size_t)n + 1, sizeof *c->to);
  c->outs = calloc((size_t)n + 1, sizeof *c->outs);
  c->heap = heap ? calloc((size_t)n + 1, sizeof *c->heap) : NULL;
  if (c->srcs && c->to && c->outs && (!heap || c->heap)) return 1;
  xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: payload list");
  return 0;
}

static void call_free(call *c) {
  for (jsize i = 0; c->srcs && i < c->n; i++) xchg_source_free(c->srcs[i]);
  if (c->n == 1) return;
  free(c->srcs);
  free(c->to);
  free(c->outs);
  free(c->heap);
}

/* A target's address and its index in the call, for sorting. */
typedef struct target {
  uintptr_t address;
  jsize index;
} target;

static int target_order(const void *a, const void *b) {
  const target *x = a, *y = b;
  if (x->address != y->address) return x->address < y->address ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Whether two of the call's targets are one struct (the second export
 * would overwrite the first, whose release is lost): *first < *second
 * name the pair whose second index is the lowest.  Pairwise for a few
 * targets, by sorting beyond; -1 (an OutOfMemoryError pending) when the
 * sort's room cannot be had. */
static int find_duplicate_target(JNIEnv *env, const call *c, jsize *first, jsize *second) {
  if (c->n <= 64) {
    for (jsize j = 1; j < c->n; j++)
      for (jsize i = 0; i < j; i++)
        if (c->to[i] == c->to[j]) {
          *first = i;
          *second = j;
          return 1;
        }
    return 0;
  }
  target *t = malloc(sizeof *t * (size_t)c->n);
  if (!t) {
    xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: payload list");
    return -1;
  }
  for (jsize i = 0; i < c->n; i++) t[i] = (target){(uintptr_t)c->to[i], i};
  qsort(t, (size_t)c->n, sizeof *t, target_order);
  int found = 0;
  for (jsize k = 1; k < c->n; k++)
    if (t[k].address == t[k - 1].address && (!found || t[k].index < *second) &&
        (k < 2 || t[k - 2].address != t[k].address)) {
      /* the first two of a run of equal addresses: its lowest indices */
      *first = t[k - 1].index;
      *second = t[k].index;
      found = 1;
    }
  free(t);
  return found;
}

/* Where the structs are: addresses[i], or arrays[i]'s address (one of the
 * two is NULL).  Refuses a struct that still holds an array, whose release
 * would be lost, and one struct given twice.  0 with an exception
 * pending. */
static int read_targets(JNIEnv *env, call *c, jlongArray addresses, jobjectArray arrays) {
  for (jsize i = 0; i < c->n; i++) {
    jlong a;
    if (addresses) {
      (*env)->GetLongArrayRegion(env, addresses, i, 1, &a);
    } else {
      jobject s = (*env)->GetObjectArrayElement(env, arrays, i);
      a = s ? (*env)->GetLongField(env, s, xj_struct_address) : 0;
      if (s) (*env)->DeleteLocalRef(env, s);
    }
    c->to[i] = XJ_PTR(struct ArrowArray, a);
    const char *bad = !a ? "XchgBatchDecoder: an XchgArrowArray was closed during the call"
                      : c->to[i]->release ? "XchgBatchDecoder: an ArrowArray still holds an array: "
                                            "release it before decoding into it"
                                          : NULL;
    if (bad) {
      xj_throw_java(env, "java/lang/IllegalStateException", bad);
      return 0;
    }
  }
  jsize first = 0, second = 0;
  int dup = find_duplicate_target(env, c, &first, &second);
  if (dup > 0) {
    char m[160];
    snprintf(
        m, sizeof m,
        "XchgBatchDecoder: arrays %d and %d are the same ArrowArray: each payload needs its own",
        (int)first, (int)second);
    xj_throw_java(env, "java/lang/IllegalArgumentException", m);
  }
  return dup == 0;
}

/* Decodes the call's sources into scratch structs, then moves them to the
 * caller's (so that a failure leaves those untouched); adds what the reads
 * copied to the decoder's counters.  Returns the rows of the first. */
static jlong decode_call(JNIEnv *env, xj_decoder *d, call *c, jlong first_batch) {
  int64_t metadata = 0;
  xchg_error err;
  xchg_status st = xchg_batch_decoder_decode_many(d->dec, c->srcs, c->n, first_batch, c->outs,
                                                  c->heap ? &metadata : NULL, &err);
  if (c->heap) {
    int64_t copied = 0;
    for (jsize i = 0; i < c->n; i++) copied += c->heap[i].copied;
    atomic_fetch_add(&d->heap_bytes, copied - metadata);
    atomic_fetch_add(&d->metadata_bytes, metadata);
  }
  if (st != XCHG_OK) {
    if (!(*env)->ExceptionCheck(env)) xj_throw_error(env, st, &err, NULL);
    return 0;
  }
  for (jsize i = 0; i < c->n; i++) *c->to[i] = c->outs[i];
  return c->n > 0 ? c->outs[0].length : 0;
}

static xchg_status heap_source(heap_payload *h, jsize length, xchg_source **out, xchg_error *err) {
  return xchg_source_from_read_at((uint64_t)length, heap_read_at, NULL, h, out, err);
}

/* Throws for a source that could not be made: st's error, or what
 * xj_direct_source leaves to its caller. */
static void source_failed(JNIEnv *env, xchg_status st, const xchg_error *err) {
  if ((*env)->ExceptionCheck(env)) return;
  if (st != XCHG_OK)
    xj_throw_error(env, st, err, NULL);
  else
    xj_throw_java(env, "java/lang/IllegalArgumentException",
                  "XchgBatchDecoder: a payload is not a direct buffer the JVM gives access to");
}

/* A direct payload's source over [position, limit); 0 with an exception
 * pending when it could not be made. */
static int direct_payload(JNIEnv *env, jobject buffer, jint position, jint limit,
                          xchg_source **out) {
  xchg_error err;
  xchg_status st = xj_direct_range_source(env, buffer, position, limit, out, &err);
  if (st == XCHG_OK && *out) return 1;
  source_failed(env, st, &err);
  return 0;
}

/* Refuses payload i of a decodeMany call, read again from the caller's
 * array, as `what` there now: the Java side checked every payload, but a
 * thread of the caller's may have changed the array since.  0, with an
 * IllegalArgumentException pending. */
static int changed_payload(JNIEnv *env, jsize i, const char *what) {
  char m[160];
  snprintf(m, sizeof m,
           "XchgBatchDecoder: payload %d became %s during the call: the caller changed the "
           "payload array",
           (int)i, what);
  xj_throw_java(env, "java/lang/IllegalArgumentException", m);
  return 0;
}

/* Whether direct payload b is still one: not null, nor a heap buffer,
 * whose address field is an offset into its array, not memory.  One field
 * read a payload (GetDirectBufferAddress's class check would cost more). */
static int still_direct(JNIEnv *env, jobject b, jsize i) {
  jobject array = b ? (*env)->GetObjectField(env, b, xj_buffer_heap_array) : NULL;
  if (b && !array) return 1;
  (*env)->DeleteLocalRef(env, array);
  return changed_payload(env, i, b ? "a heap ByteBuffer" : "null");
}

/* ---- the entry points ---------------------------------------------------- */

/* Decodes payload[offset, offset + length) on the calling thread (payload
 * may be a local reference). */
static jlong decode_heap(JNIEnv *env, jlong handle, jbyteArray payload, jint offset, jint length,
                         jlong batch, jlong address) {
  call c;
  call_init(env, &c, 1, 1);
  c.one_heap = (heap_payload){.array = payload, .offset = offset};
  c.one_to = XJ_PTR(struct ArrowArray, address);
  xchg_error err;
  xchg_status st = XCHG_OK;
  jlong rows = 0;
  if (!xj_empty_struct(env, c.one_to->release != NULL, "XchgBatchDecoder", "ArrowArray",
                       "decoding"))
    ; /* thrown */
  else if ((st = heap_source(&c.one_heap, length, &c.one_src, &err)) != XCHG_OK)
    xj_throw_error(env, st, &err, NULL);
  else
    rows = decode_call(env, XJ_PTR(xj_decoder, handle), &c, batch);
  call_free(&c);
  return rows;
}

JNIEXPORT jlong JNICALL Java_org_xchg_XchgBatchDecoder_nDecodeHeap(JNIEnv *env, jclass cls,
                                                                   jlong handle, jbyteArray payload,
                                                                   jint offset, jint length,
                                                                   jlong batch, jlong address) {
  return decode_heap(env, handle, payload, offset, length, batch, address);
}

/* A read-only heap buffer's bytes [position, position + length), read in
 * place from the array Java hides (xj_hidden_array adds the buffer's array
 * offset), exactly as a byte[] payload's: nothing is copied onto the Java
 * heap. */
JNIEXPORT jlong JNICALL Java_org_xchg_XchgBatchDecoder_nDecodeHidden(JNIEnv *env, jclass cls,
                                                                     jlong handle, jobject payload,
                                                                     jint position, jint length,
                                                                     jlong batch, jlong address) {
  jint offset;
  jbyteArray array = xj_hidden_region(env, payload, position, length, "XchgBatchDecoder", &offset);
  if (!array) return 0;
  jlong rows = decode_heap(env, handle, array, offset, length, batch, address);
  (*env)->DeleteLocalRef(env, array);
  return rows;
}

JNIEXPORT jlong JNICALL Java_org_xchg_XchgBatchDecoder_nDecodeDirect(JNIEnv *env, jclass cls,
                                                                     jlong handle, jobject payload,
                                                                     jint position, jint limit,
                                                                     jlong batch, jlong address) {
  call c;
  call_init(env, &c, 1, 0);
  c.one_to = XJ_PTR(struct ArrowArray, address);
  jlong rows = 0;
  if (xj_empty_struct(env, c.one_to->release != NULL, "XchgBatchDecoder", "ArrowArray",
                      "decoding") &&
      direct_payload(env, payload, position, limit, &c.one_src))
    rows = decode_call(env, XJ_PTR(xj_decoder, handle), &c, batch);
  call_free(&c);
  return rows;
}

JNIEXPORT void JNICALL Java_org_xchg_XchgBatchDecoder_nDecodeHeapMany(
    JNIEnv *env, jclass cls, jlong handle, jobjectArray payloads, jlong first_batch,
    jlongArray addresses, jobjectArray arrays) {
  call c;
  jsize n = (*env)->GetArrayLength(env, payloads);
  xchg_error err;
  xchg_status st = XCHG_OK;
  int ok = call_init(env, &c, n, 1) && read_targets(env, &c, addresses, arrays);
  for (jsize i = 0; ok && i < n; i++) {
    jobject p = (*env)->GetObjectArrayElement(env, payloads, i);
    jsize length = p ? (*env)->GetArrayLength(env, p) : 0;
    jobject global = p ? (*env)->NewGlobalRef(env, p) : NULL;
    (*env)->DeleteLocalRef(env, p);
    c.heap[i] = (heap_payload){.array = global};
    ok = !p       ? changed_payload(env, i, "null")
         : global ? (st = heap_source(&c.heap[i], length, &c.srcs[i], &err)) == XCHG_OK
                  : 0; /* OutOfMemoryError pending */
  }
  if (ok)
    decode_call(env, XJ_PTR(xj_decoder, handle), &c, first_batch);
  else if (st != XCHG_OK)
    xj_throw_error(env, st, &err, NULL);
  else if (!(*env)->ExceptionCheck(env))
    xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: payloads");
  for (jsize i = 0; c.heap && i < n; i++)
    if (c.heap[i].array) (*env)->DeleteGlobalRef(env, c.heap[i].array);
  call_free(&c);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgBatchDecoder_nDecodeDirectMany(
    JNIEnv *env, jclass cls, jlong handle, jobjectArray payloads, jlong first_batch,
    jlongArray addresses, jobjectArray arrays) {
  call c;
  jsize n = (*env)->GetArrayLength(env, payloads);
  xchg_error err;
  xchg_status st = XCHG_OK;
  int ok = call_init(env, &c, n, 0) && read_targets(env, &c, addresses, arrays);
  for (jsize i = 0; ok && i < n; i++) {
    jobject b = (*env)->GetObjectArrayElement(env, payloads, i);
    ok = still_direct(env, b, i) && (st = xj_direct_source(env, b, &c.srcs[i], &err)) == XCHG_OK &&
         c.srcs[i] != NULL;
    (*env)->DeleteLocalRef(env, b);
  }
  if (ok)
    decode_call(env, XJ_PTR(xj_decoder, handle), &c, first_batch);
  else
    source_failed(env, st, &err);
  call_free(&c);
}
