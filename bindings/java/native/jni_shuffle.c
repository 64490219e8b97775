/* jni_shuffle.c — org.xchg.XchgShuffleReader over xchg_shuffle_reader
 * (xchg/shuffle.h), always in its incremental mode: a reduce task adds
 * its fetched block streams as they arrive and ends the input after the
 * last one.
 *
 * Each added input becomes one memory source, which the shuffle reader
 * reads in place: a direct ByteBuffer as it is (xj_direct_source: a global
 * reference keeps it reachable until the source and the last batch whose
 * arrays point into it are gone); the bytes of an InputStream or of a heap
 * ByteBuffer (a read-only one's straight from its hidden array, as a
 * writable one's from its array) copied into one xchg buffer (counted in
 * xchg_buf_allocated_bytes, Xchg.allocatedBytes: the engine sees what the
 * reader holds), appended a Java chunk at a time (the Java side asks the
 * kill check between chunks) and handed over, freed once neither the
 * reader nor a batch points into it.
 *
 * A reader is used by one thread at a time (the Java class serialises the
 * calls), so the buffer being appended to lives in the reader, and so does
 * the kill check of the call under way: the C reader asks it (its cancel
 * callback) on the calling thread, before a block once 64 KiB of blocks
 * were read since the last question, inside a long nNext too. */
#include <stdlib.h>
#include <string.h>

#include "xchg/shuffle.h"
#include "xchg_jni.h"

_Static_assert(org_xchg_XchgShuffleReader_FRAMING_AUTO == XCHG_SHUFFLE_FRAMING_AUTO &&
                   org_xchg_XchgShuffleReader_FRAMING_COMET == XCHG_SHUFFLE_FRAMING_COMET &&
                   org_xchg_XchgShuffleReader_FRAMING_IPC == XCHG_SHUFFLE_FRAMING_IPC,
               "XchgShuffleReader's framing ids are xchg_shuffle_framing's values");

typedef struct xj_shuffle {
  xchg_shuffle_reader *reader;
  xchg_pool *own_pool;       /* NULL with the default pool or none */
  struct ArrowSchema schema; /* taken with the first batch, for checksums */
  xchg_buf *pending;         /* the input being appended (its first pending_size bytes) */
  size_t pending_size;
  xj_kill_check kill; /* during nNext: the task's; else none */
} xj_shuffle;

JNIEXPORT jlong JNICALL Java_org_xchg_XchgShuffleReader_nOpen(
    JNIEnv *env, jclass cls, jbyteArray schema, jlongArray columns, jint framing, jlong target_rows,
    jlong target_bytes, jlong readahead_bytes, jint threads, jint validation, jboolean killable) {
  xj_shuffle *s = calloc(1, sizeof *s);
  jsize n_cols = columns ? (*env)->GetArrayLength(env, columns) : 0;
  jsize schema_size = schema ? (*env)->GetArrayLength(env, schema) : 0;
  int64_t *cols = malloc(sizeof *cols * ((size_t)n_cols + 1));
  uint8_t *schema_bytes = malloc((size_t)schema_size + 1); /* open copies it */
  xchg_error err;
  xchg_status st = XCHG_OK;
  if (!s || !cols || !schema_bytes)
    st = xchg_errorf(&err, XCHG_ENOMEM, "XchgShuffleReader: out of memory");
  if (st == XCHG_OK && threads > 1) st = xchg_pool_create(threads, &s->own_pool, &err);
  if (st == XCHG_OK) {
    if (columns) (*env)->GetLongArrayRegion(env, columns, 0, n_cols, (jlong *)cols);
    if (schema) (*env)->GetByteArrayRegion(env, schema, 0, schema_size, (jbyte *)schema_bytes);
    xchg_shuffle_reader_options opts;
    xchg_shuffle_reader_options_init(&opts);
    opts.schema_message = schema ? schema_bytes : NULL;
    opts.schema_message_size = (size_t)schema_size;
    opts.framing = (xchg_shuffle_framing)framing;
    /* 0: xchg's default (the Java side refuses other values below 1). */
    if (target_rows > 0) opts.target_rows = target_rows;
    if (target_bytes > 0) opts.target_bytes = target_bytes;
    if (readahead_bytes > 0) opts.read.readahead_bytes = readahead_bytes;
    opts.columns = columns ? cols : NULL;
    opts.n_columns = n_cols;
    opts.read.pool = threads == 0 ? xchg_pool_default() : s->own_pool;
    opts.read.validation = (xchg_validation)validation;
    opts.incremental = 1;
    opts.cancel = killable ? xj_kill_check_ask : NULL;
    opts.cancel_ctx = &s->kill;
    st = xchg_shuffle_reader_open(&opts, &s->reader, &err);
  }
  free(cols);
  free(schema_bytes);
  if (st == XCHG_OK) return XJ_HANDLE(s);
  xj_throw_error(env, st, &err, NULL);
  if (s) xchg_pool_free(s->own_pool);
  free(s);
  return 0;
}

JNIEXPORT void JNICALL Java_org_xchg_XchgShuffleReader_nClose(JNIEnv *env, jclass cls,
                                                              jlong handle) {
  xj_shuffle *s = XJ_PTR(xj_shuffle, handle);
  if (s->schema.release) s->schema.release(&s->schema);
  xchg_shuffle_reader_free(s->reader);
  xchg_pool_free(s->own_pool);
  xchg_buf_unref(s->pending);
  free(s);
}

/* ---- input --------------------------------------------------------------- */

static void add_source(JNIEnv *env, xj_shuffle *s, xchg_source *src) {
  xchg_error err;
  xchg_status st = xchg_shuffle_reader_add_source(s->reader, src, &err);
  if (st != XCHG_OK) xj_throw_error(env, st, &err, NULL);
}

/* Room for n more pending bytes, exactly that (for an input whose size is
 * known) or growing by doubling, the bytes so far copied into the larger
 * buffer; 0 with an OutOfMemoryError pending. */
static int reserve_pending(JNIEnv *env, xj_shuffle *s, size_t n, int exact) {
  size_t capacity = xchg_buf_size(s->pending);
  if (n <= capacity - s->pending_size) return 1;
  size_t want = exact ? s->pending_size + n : capacity ? capacity : (size_t)64 * 1024;
  while (want - s->pending_size < n) {
    if (want > SIZE_MAX / 2)
      want = s->pending_size + n; /* no doubling left */
    else
      want *= 2;
  }
  xchg_buf *grown = xchg_buf_alloc(want);
  if (!grown) {
    xj_throw_java(env, "java/lang/OutOfMemoryError", "XchgShuffleReader: input buffer");
    return 0;
  }
  if (s->pending_size > 0)
    memcpy(xchg_buf_mutable_data(grown), xchg_buf_data(s->pending), s->pending_size);
  xchg_buf_unref(s->pending);
  s->pending = grown;
  return 1;
}

JNIEXPORT void JNICALL Java_org_xchg_XchgShuffleReader_nReserve(JNIEnv *env, jclass cls,
                                                                jlong handle, jint length) {
  reserve_pending(env, XJ_PTR(xj_shuffle, handle), (size_t)length, 1);
}

/* Appends array[offset, offset + length) to the pending input, straight
 * from the array into native memory. */
static void append_region(JNIEnv *env, xj_shuffle *s, jbyteArray chunk, jint offset, jint length) {
  if (!reserve_pending(env, s, (size_t)length, 0)) return;
  /* In steps: the copy runs in the VM, and a GC waits for a whole one. */
  for (jint done = 0; done < length;) {
    jint take = length - done < (jint)XJ_COPY_STEP ? length - done : (jint)XJ_COPY_STEP;
    (*env)->GetByteArrayRegion(env, chunk, offset + done, take,
                               (jbyte *)(xchg_buf_mutable_data(s->pending) + s->pending_size));
    if ((*env)->ExceptionCheck(env)) return;
    s->pending_size += (size_t)take;
    done += take;
  }
}

JNIEXPORT void JNICALL Java_org_xchg_XchgShuffleReader_nAppend(JNIEnv *env, jclass cls,
                                                               jlong handle, jbyteArray chunk,
                                                               jint offset, jint length) {
  append_region(env, XJ_PTR(xj_shuffle, handle), chunk, offset, length);
}

/* A read-only heap buffer's bytes [position, position + length), read in
 * place from its array, which Java hides (xj_hidden_array adds the
 * buffer's array offset): one copy, into native memory, as a heap buffer
 * whose array Java gives is copied by nAppend. */
JNIEXPORT void JNICALL Java_org_xchg_XchgShuffleReader_nAppendHidden(JNIEnv *env, jclass cls,
                                                                     jlong handle, jobject buffer,
                                                                     jint position, jint length) {
  jint offset;
  jbyteArray array = xj_hidden_region(env, buffer, position, length, "XchgShuffleReader", &offset);
  if (!array) return;
  append_region(env, XJ_PTR(xj_shuffle, handle), array, offset, length);
  (*env)->DeleteLocalRef(env, array);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgShuffleReader_nCommit(JNIEnv *env, jclass cls,
                                                               jlong handle) {
  xj_shuffle *s = XJ_PTR(xj_shuffle, handle);
  xchg_source *src = NULL;
  xchg_error err;
  /* The bytes appended, a slice of the buffer (what is left of it unused
   * goes with it). */
  xchg_buf *bytes = s->pending ? xchg_buf_slice(s->pending, 0, s->pending_size) : xchg_buf_alloc(0);
  xchg_status st = bytes ? xchg_source_from_buf(bytes, &src, &err)
                         : xchg_errorf(&err, XCHG_ENOMEM, "XchgShuffleReader: input buffer");
  xchg_buf_unref(bytes); /* the source holds its own reference */
  if (st != XCHG_OK) {
    xj_throw_error(env, st, &err, NULL);
    return; /* the pending bytes stay, for nDiscard */
  }
  xchg_buf_unref(s->pending);
  s->pending = NULL;
  s->pending_size = 0;
  add_source(env, s, src);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgShuffleReader_nDiscard(JNIEnv *env, jclass cls,
                                                                jlong handle) {
  xj_shuffle *s = XJ_PTR(xj_shuffle, handle);
  xchg_buf_unref(s->pending);
  s->pending = NULL;
  s->pending_size = 0;
}

JNIEXPORT void JNICALL Java_org_xchg_XchgShuffleReader_nAddDirect(JNIEnv *env, jclass cls,
                                                                  jlong handle, jobject buffer) {
  xchg_source *src;
  xchg_error err;
  xchg_status st = xj_direct_source(env, buffer, &src, &err);
  if (st != XCHG_OK)
    xj_throw_error(env, st, &err, NULL);
  else if (!src)
    xj_throw_java(env, "java/lang/IllegalArgumentException",
                  "XchgShuffleReader: not a direct buffer the JVM gives access to");
  else
    add_source(env, XJ_PTR(xj_shuffle, handle), src);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgShuffleReader_nEndInput(JNIEnv *env, jclass cls,
                                                                 jlong handle) {
  xchg_error err;
  xchg_status st = xchg_shuffle_reader_end_input(XJ_PTR(xj_shuffle, handle)->reader, &err);
  if (st != XCHG_OK) xj_throw_error(env, st, &err, NULL);
}

/* ---- output -------------------------------------------------------------- */

JNIEXPORT jboolean JNICALL Java_org_xchg_XchgShuffleReader_nExportSchema(JNIEnv *env, jclass cls,
                                                                         jlong handle,
                                                                         jlong address) {
  struct ArrowSchema *out = XJ_PTR(struct ArrowSchema, address);
  if (!xj_empty_struct(env, out->release != NULL, "XchgShuffleReader", "ArrowSchema", "exporting"))
    return JNI_FALSE;
  xchg_error err;
  xchg_status st = xchg_shuffle_reader_schema(XJ_PTR(xj_shuffle, handle)->reader, out, &err);
  if (st == XCHG_EAGAIN) return JNI_FALSE;
  if (st != XCHG_OK) xj_throw_error(env, st, &err, NULL);
  return st == XCHG_OK;
}

/* The next batch into out, as a NEXT_* id. */
static jint next_batch(JNIEnv *env, xj_shuffle *s, struct ArrowArray *out) {
  xchg_error err;
  xchg_status st = xchg_shuffle_reader_next(s->reader, out, &err);
  if (st == XCHG_EAGAIN) return org_xchg_XchgShuffleReader_NEXT_NEED_INPUT;
  if (st != XCHG_OK) {
    xj_kill_check_throw(env, &s->kill, st, &err);
    return org_xchg_XchgShuffleReader_NEXT_END;
  }
  if (!out->release) return org_xchg_XchgShuffleReader_NEXT_END;
  /* The schema once, for columnChecksum: known now that a batch is out. */
  if (!s->schema.release &&
      (st = xchg_shuffle_reader_schema(s->reader, &s->schema, &err)) != XCHG_OK) {
    out->release(out);
    xj_throw_error(env, st, &err, NULL);
    return org_xchg_XchgShuffleReader_NEXT_END;
  }
  return org_xchg_XchgShuffleReader_NEXT_BATCH;
}

/* The next batch into the caller's struct, which must hold none (its
 * release would be lost), as a NEXT_* id; the C reader asks the task's
 * kill check (kill, NULL for none) as it reads the blocks. */
JNIEXPORT jint JNICALL Java_org_xchg_XchgShuffleReader_nNext(JNIEnv *env, jclass cls, jlong handle,
                                                             jlong address, jobject kill) {
  xj_shuffle *s = XJ_PTR(xj_shuffle, handle);
  struct ArrowArray *out = XJ_PTR(struct ArrowArray, address);
  if (!xj_empty_struct(env, out->release != NULL, "XchgShuffleReader", "ArrowArray", "reading"))
    return org_xchg_XchgShuffleReader_NEXT_END;
  if (!xj_kill_check_begin(env, &s->kill, kill)) return org_xchg_XchgShuffleReader_NEXT_END;
  jint got = next_batch(env, s, out);
  xj_kill_check_end(env, &s->kill);
  return got;
}

JNIEXPORT void JNICALL Java_org_xchg_XchgShuffleReader_nMetrics(JNIEnv *env, jclass cls,
                                                                jlong handle, jlongArray out) {
  xchg_shuffle_reader_metrics m;
  xchg_shuffle_reader_get_metrics(XJ_PTR(xj_shuffle, handle)->reader, &m);
  jlong v[org_xchg_XchgShuffleReaderMetrics_COUNT];
  v[org_xchg_XchgShuffleReaderMetrics_BLOCKS] = m.blocks;
  v[org_xchg_XchgShuffleReaderMetrics_ROWS] = m.rows;
  v[org_xchg_XchgShuffleReaderMetrics_WIRE_BYTES] = m.wire_bytes;
  v[org_xchg_XchgShuffleReaderMetrics_DECODED_BYTES] = m.decoded_bytes;
  v[org_xchg_XchgShuffleReaderMetrics_BATCHES] = m.batches;
  v[org_xchg_XchgShuffleReaderMetrics_PASSTHROUGH_BATCHES] = m.passthrough_batches;
  v[org_xchg_XchgShuffleReaderMetrics_DICTIONARY_CUTS] = m.dictionary_cuts;
  v[org_xchg_XchgShuffleReaderMetrics_DECOMPRESS_NS] = m.decompress_ns;
  v[org_xchg_XchgShuffleReaderMetrics_COPY_NS] = m.copy_ns;
  v[org_xchg_XchgShuffleReaderMetrics_WAIT_NS] = m.wait_ns;
  (*env)->SetLongArrayRegion(env, out, 0, org_xchg_XchgShuffleReaderMetrics_COUNT, v);
}
