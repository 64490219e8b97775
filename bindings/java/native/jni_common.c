/* jni_common.c — library load, exceptions, and sources over Java chunks and
 * direct buffers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xchg/ipc.h"
#include "xchg/stream.h"
#include "xchg_jni.h"

/* The Java side's values of the C enums, by name (javac -h writes them). */
_Static_assert(org_xchg_XchgException_XCHG_OK == XCHG_OK &&
                   org_xchg_XchgException_XCHG_EINVAL == XCHG_EINVAL &&
                   org_xchg_XchgException_XCHG_ENOMEM == XCHG_ENOMEM &&
                   org_xchg_XchgException_XCHG_EIO == XCHG_EIO &&
                   org_xchg_XchgException_XCHG_EFORMAT == XCHG_EFORMAT &&
                   org_xchg_XchgException_XCHG_ENOTSUP == XCHG_ENOTSUP &&
                   org_xchg_XchgException_XCHG_ECANCELLED == XCHG_ECANCELLED &&
                   org_xchg_XchgException_XCHG_ELIMIT == XCHG_ELIMIT &&
                   org_xchg_XchgException_XCHG_EAGAIN == XCHG_EAGAIN,
               "XchgException's status ids are xchg_status's values");
_Static_assert(org_xchg_XchgValidation_FULL_ID == XCHG_VALIDATE_FULL &&
                   org_xchg_XchgValidation_BOUNDS_ID == XCHG_VALIDATE_BOUNDS,
               "XchgValidation's ids are xchg_validation's values");
_Static_assert(org_xchg_StreamCodec_NONE_ID == XCHG_STREAM_NONE &&
                   org_xchg_StreamCodec_LZ4_FRAME_ID == XCHG_STREAM_LZ4_FRAME &&
                   org_xchg_StreamCodec_ZSTD_ID == XCHG_STREAM_ZSTD &&
                   org_xchg_StreamCodec_LZ4_JAVA_ID == XCHG_STREAM_LZ4_JAVA &&
                   org_xchg_StreamCodec_SNAPPY_JAVA_ID == XCHG_STREAM_SNAPPY_JAVA &&
                   org_xchg_StreamCodec_SNAPPY_FRAMED_ID == XCHG_STREAM_SNAPPY_FRAMED &&
                   org_xchg_StreamCodec_COMET_ID == XCHG_STREAM_COMET &&
                   org_xchg_StreamCodec_AUTO_ID == XCHG_STREAM_AUTO,
               "StreamCodec's ids are xchg_stream_codec's values");

JavaVM *xj_vm;
jfieldID xj_struct_address;
jfieldID xj_buffer_address;
jfieldID xj_buffer_position;
jfieldID xj_buffer_limit;
jfieldID xj_buffer_heap_array;
jfieldID xj_buffer_array_offset;
static jclass xchg_exception_class;
static jmethodID xchg_exception_init;

static jfieldID field_of(JNIEnv *env, const char *class_name, const char *field, const char *sig) {
  jclass cls = (*env)->FindClass(env, class_name);
  if (!cls) return NULL;
  jfieldID id = (*env)->GetFieldID(env, cls, field, sig);
  (*env)->DeleteLocalRef(env, cls);
  return id;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
  JNIEnv *env;
  if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  xj_vm = vm;
  jclass cls = (*env)->FindClass(env, "org/xchg/XchgException");
  if (!cls) return JNI_ERR;
  xchg_exception_class = (*env)->NewGlobalRef(env, cls);
  (*env)->DeleteLocalRef(env, cls);
  xchg_exception_init =
      (*env)->GetMethodID(env, xchg_exception_class, "<init>", "(I[BLjava/lang/Throwable;)V");
  if (!xchg_exception_class || !xchg_exception_init) return JNI_ERR;
  if (!(xj_struct_address = field_of(env, "org/xchg/CDataStruct", "address", "J")) ||
      !(xj_buffer_address = field_of(env, "java/nio/Buffer", "address", "J")) ||
      !(xj_buffer_position = field_of(env, "java/nio/Buffer", "position", "I")) ||
      !(xj_buffer_limit = field_of(env, "java/nio/Buffer", "limit", "I")) ||
      !(xj_buffer_heap_array = field_of(env, "java/nio/ByteBuffer", "hb", "[B")) ||
      !(xj_buffer_array_offset = field_of(env, "java/nio/ByteBuffer", "offset", "I")))
    return JNI_ERR;
  return JNI_VERSION_1_8;
}

/* A thread attached by xj_env is detached by this key's destructor when it
 * exits (an xchg pool's workers end with their pool): the VM must not keep
 * a thread that is gone. */
static pthread_key_t attached_key;
static pthread_once_t attached_once = PTHREAD_ONCE_INIT;

static void detach_thread(void *unused) {
  (void)unused;
  (*xj_vm)->DetachCurrentThread(xj_vm);
}

static void make_attached_key(void) { (void)pthread_key_create(&attached_key, detach_thread); }

JNIEnv *xj_env(void) {
  JNIEnv *env = NULL;
  jint got = (*xj_vm)->GetEnv(xj_vm, (void **)&env, JNI_VERSION_1_8);
  if (got == JNI_OK) return env;
  if (got != JNI_EDETACHED || pthread_once(&attached_once, make_attached_key) != 0) return NULL;
  if ((*xj_vm)->AttachCurrentThreadAsDaemon(xj_vm, (void **)&env, NULL) != JNI_OK) return NULL;
  if (pthread_setspecific(attached_key, env) != 0) {
    (*xj_vm)->DetachCurrentThread(xj_vm); /* no way to detach it later */
    return NULL;
  }
  return env;
}

/* The message's bytes go to Java as a byte[], decoded there as UTF-8
 * (XchgException): NewStringUTF takes modified UTF-8, and a message quoting
 * a field name beyond the BMP, or bytes that are not UTF-8, was garbled. */
void xj_throw(JNIEnv *env, xchg_status status, const char *message, jthrowable cause) {
  jsize n = (jsize)strlen(message);
  jbyteArray msg = (*env)->NewByteArray(env, n);
  if (!msg) return; /* OutOfMemoryError pending */
  (*env)->SetByteArrayRegion(env, msg, 0, n, (const jbyte *)message);
  jobject ex =
      (*env)->NewObject(env, xchg_exception_class, xchg_exception_init, (jint)status, msg, cause);
  if (ex) (*env)->Throw(env, (jthrowable)ex);
  (*env)->DeleteLocalRef(env, msg);
  if (ex) (*env)->DeleteLocalRef(env, ex);
}

void xj_throw_error(JNIEnv *env, xchg_status status, const xchg_error *err, jthrowable cause) {
  const char *m = err && err->message[0] ? err->message : xchg_status_name(status);
  xj_throw(env, status, m, cause);
}

void xj_throw_java(JNIEnv *env, const char *class_name, const char *message) {
  jclass cls = (*env)->FindClass(env, class_name);
  if (cls) (*env)->ThrowNew(env, cls, message);
}

int xj_empty_struct(JNIEnv *env, int full, const char *who, const char *what, const char *doing) {
  if (!full) return 1;
  const char *holds = strcmp(what, "ArrowSchema") == 0  ? "a schema"
                      : strcmp(what, "ArrowArray") == 0 ? "an array"
                                                        : "a stream";
  char m[200];
  snprintf(m, sizeof m, "%s: the %s still holds %s: release it before %s into it", who, what, holds,
           doing);
  xj_throw_java(env, "java/lang/IllegalStateException", m);
  return 0;
}

jthrowable xj_take_exception(JNIEnv *env) {
  jthrowable t = (*env)->ExceptionOccurred(env);
  if (!t) return NULL;
  (*env)->ExceptionClear(env);
  jthrowable global = (*env)->NewGlobalRef(env, t);
  (*env)->DeleteLocalRef(env, t);
  return global;
}

/* ---- kill checks ---------------------------------------------------------- */

int xj_kill_check_begin(JNIEnv *env, xj_kill_check *k, jobject supplier) {
  *k = (xj_kill_check){0};
  if (!supplier) return 1;
  jclass cls = (*env)->GetObjectClass(env, supplier);
  k->get = (*env)->GetMethodID(env, cls, "getAsBoolean", "()Z");
  (*env)->DeleteLocalRef(env, cls);
  return k->get && (k->supplier = (*env)->NewGlobalRef(env, supplier)) != NULL;
}

int xj_kill_check_ask(void *ctx) {
  xj_kill_check *k = ctx;
  if (k->thrown) return 1;
  if (!k->supplier) return 0;
  JNIEnv *env = xj_env();
  if (!env) return 0;
  jboolean killed = (*env)->CallBooleanMethod(env, k->supplier, k->get);
  if ((*env)->ExceptionCheck(env)) {
    k->thrown = xj_take_exception(env);
    return 1;
  }
  return killed ? 1 : 0;
}

void xj_kill_check_throw(JNIEnv *env, const xj_kill_check *k, xchg_status status,
                         const xchg_error *err) {
  if (k->thrown && status == XCHG_ECANCELLED)
    (*env)->Throw(env, k->thrown);
  else
    xj_throw_error(env, status, err, k->thrown);
}

void xj_kill_check_end(JNIEnv *env, xj_kill_check *k) {
  if (k->supplier) (*env)->DeleteGlobalRef(env, k->supplier);
  if (k->thrown) (*env)->DeleteGlobalRef(env, k->thrown);
  *k = (xj_kill_check){0};
}

/* ---- chunks ------------------------------------------------------------- */

jbyteArray xj_hidden_array(JNIEnv *env, jobject buffer, jint *base) {
  jbyteArray array = buffer ? (*env)->GetObjectField(env, buffer, xj_buffer_heap_array) : NULL;
  *base = array ? (*env)->GetIntField(env, buffer, xj_buffer_array_offset) : 0;
  return array;
}

jbyteArray xj_hidden_region(JNIEnv *env, jobject buffer, jint position, jint length,
                            const char *who, jint *offset) {
  jint base = 0;
  jbyteArray array = xj_hidden_array(env, buffer, &base);
  if (array && base >= 0 && position >= 0 && length >= 0 &&
      (jlong)base + position + length <= (*env)->GetArrayLength(env, array)) {
    *offset = base + position;
    return array;
  }
  if (array) (*env)->DeleteLocalRef(env, array);
  char message[160];
  snprintf(message, sizeof message, "%s: not a heap buffer, or its bytes beyond its array", who);
  xj_throw_java(env, "java/lang/IllegalArgumentException", message);
  return NULL;
}

static int chunk_from_java(JNIEnv *env, xj_chunk *c, jobject buffer, jobject heap, jint offset,
                           jint length) {
  if (offset < 0 || length < 0) {
    xj_throw_java(env, "java/lang/IllegalArgumentException", "negative chunk offset or length");
    return 0;
  }
  c->size = (size_t)length;
  c->offset = offset;
  /* No byte to read, and an empty file's mapped buffer has no address
   * (FileChannel.map of 0 bytes): a chunk of nothing, as a heap one is. */
  if (buffer && length == 0) return 1;
  /* A read-only heap buffer: its array, which Java hides, read in place as
   * any heap chunk's (the position given, the buffer's array offset added
   * here), so that nothing is copied before a decode needs the bytes. */
  jint array_offset = 0;
  jbyteArray hidden = xj_hidden_array(env, buffer, &array_offset);
  if (hidden) {
    int ok = array_offset >= 0 && array_offset <= INT32_MAX - offset;
    if (ok) {
      c->offset = offset + array_offset;
      ok = chunk_from_java(env, c, NULL, hidden, c->offset, length);
    } else {
      xj_throw_java(env, "java/lang/IllegalArgumentException",
                    "read-only heap chunk: array offset + position beyond an int");
    }
    (*env)->DeleteLocalRef(env, hidden);
    return ok;
  }
  jobject direct = buffer;
  if (direct) {
    uint8_t *base = (*env)->GetDirectBufferAddress(env, direct);
    jlong capacity = (*env)->GetDirectBufferCapacity(env, direct);
    if (!base || capacity < 0 || (jlong)offset + length > capacity) {
      xj_throw_java(env, "java/lang/IllegalArgumentException",
                    "direct chunk: no address, or offset + length beyond its capacity");
      return 0;
    }
    c->direct = base + offset;
    return 1;
  }
  if (!heap || (jlong)offset + length > (*env)->GetArrayLength(env, (jarray)heap)) {
    xj_throw_java(env, "java/lang/IllegalArgumentException",
                  "heap chunk: missing, or offset + length beyond its array");
    return 0;
  }
  c->heap = (*env)->NewGlobalRef(env, heap);
  return c->heap != NULL;
}

xj_chunks *xj_chunks_new(JNIEnv *env, jobjectArray buffers, jobjectArray heap, jintArray offsets,
                         jintArray lengths) {
  jsize n = (*env)->GetArrayLength(env, buffers);
  if ((*env)->GetArrayLength(env, heap) != n || (*env)->GetArrayLength(env, offsets) != n ||
      (*env)->GetArrayLength(env, lengths) != n) {
    xj_throw_java(env, "java/lang/IllegalArgumentException", "chunk arrays of unequal lengths");
    return NULL;
  }
  xj_chunks *c = calloc(1, sizeof *c);
  jint *off = malloc(sizeof(jint) * ((size_t)n + 1));
  jint *len = malloc(sizeof(jint) * ((size_t)n + 1));
  if (c) c->items = calloc((size_t)n + 1, sizeof *c->items);
  if (!c || !c->items || !off || !len) {
    free(off);
    free(len);
    xj_chunks_free(env, c);
    xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: chunk list");
    return NULL;
  }
  (*env)->GetIntArrayRegion(env, offsets, 0, n, off);
  (*env)->GetIntArrayRegion(env, lengths, 0, n, len);
  int ok = 1;
  for (jsize i = 0; ok && i < n; i++) {
    jobject d = (*env)->GetObjectArrayElement(env, buffers, i);
    jobject h = (*env)->GetObjectArrayElement(env, heap, i);
    ok = chunk_from_java(env, &c->items[i], d, h, off[i], len[i]);
    c->count = (size_t)i + 1;
    if (d) (*env)->DeleteLocalRef(env, d);
    if (h) (*env)->DeleteLocalRef(env, h);
  }
  free(off);
  free(len);
  if (!ok) {
    xj_chunks_free(env, c);
    return NULL;
  }
  return c;
}

void xj_chunks_free(JNIEnv *env, xj_chunks *c) {
  if (!c) return;
  if (c->items) {
    for (size_t i = 0; i < c->count; i++)
      if (c->items[i].heap) (*env)->DeleteGlobalRef(env, c->items[i].heap);
  }
  free(c->items);
  free(c);
}

/* Reading heap (and direct) chunks one after another. */
typedef struct chunk_reader {
  const xj_chunk *items;
  size_t count;
  size_t index;  /* current chunk */
  size_t offset; /* bytes of it already read */
} chunk_reader;

static xchg_status chunk_reader_read(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  chunk_reader *r = ctx;
  uint8_t *out = dst;
  size_t done = 0;
  JNIEnv *env = NULL;
  *got = 0;
  while (done < n && r->index < r->count) {
    const xj_chunk *c = &r->items[r->index];
    size_t take = c->size - r->offset;
    if (take == 0) {
      r->index++;
      r->offset = 0;
      continue;
    }
    if (take > n - done) take = n - done;
    if (c->direct) {
      memcpy(out + done, c->direct + r->offset, take);
    } else {
      if (take > XJ_COPY_STEP) take = XJ_COPY_STEP;
      if (!env && !(env = xj_env()))
        return xchg_errorf(err, XCHG_EIO, "heap chunk %zu: no JNIEnv on this thread", r->index);
      (*env)->GetByteArrayRegion(env, c->heap, c->offset + (jsize)r->offset, (jsize)take,
                                 (jbyte *)(out + done));
      if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        return xchg_errorf(err, XCHG_EIO, "heap chunk %zu: copying %zu bytes at %zu failed",
                           r->index, take, r->offset);
      }
    }
    r->offset += take;
    done += take;
  }
  *got = done;
  return XCHG_OK;
}

xchg_status xj_chunks_source(const xj_chunks *chunks, size_t first, size_t count, xchg_source **out,
                             xchg_error *err) {
  const xj_chunk *items = chunks->items + first;
  int all_direct = 1;
  for (size_t i = 0; i < count; i++) all_direct &= items[i].direct != NULL || items[i].size == 0;
  if (all_direct) {
    xchg_chunk *list = malloc(sizeof *list * (count + 1));
    *out = NULL;
    if (!list)
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory for a list of %zu chunks", count);
    for (size_t i = 0; i < count; i++) {
      list[i].data = items[i].direct;
      list[i].size = items[i].size;
    }
    xchg_status st = xchg_source_from_chunks(list, count, NULL, NULL, out, err);
    free(list); /* the source copied the list */
    return st;
  }
  chunk_reader *r = calloc(1, sizeof *r);
  *out = NULL;
  if (!r) return xchg_errorf(err, XCHG_ENOMEM, "out of memory for a chunk reader");
  r->items = items;
  r->count = count;
  xchg_status st = xchg_source_from_callback(chunk_reader_read, free, r, out, err);
  if (st != XCHG_OK) free(r);
  return st;
}

/* ---- direct buffers ------------------------------------------------------ */

/* A direct buffer's memory is released with the last array (or source)
 * using it, on whichever thread releases that. */
static void release_direct(void *ctx, const void *data, size_t size) {
  (void)data;
  (void)size;
  JNIEnv *env = xj_env();
  if (env) (*env)->DeleteGlobalRef(env, (jobject)ctx);
}

xchg_status xj_direct_source(JNIEnv *env, jobject buffer, xchg_source **out, xchg_error *err) {
  jint position = (*env)->GetIntField(env, buffer, xj_buffer_position);
  jint limit = (*env)->GetIntField(env, buffer, xj_buffer_limit);
  return xj_direct_range_source(env, buffer, position, limit, out, err);
}

xchg_status xj_direct_range_source(JNIEnv *env, jobject buffer, jint position, jint limit,
                                   xchg_source **out, xchg_error *err) {
  *out = NULL;
  if (position < 0 || position > limit)
    return xchg_errorf(err, XCHG_EINVAL,
                       "direct buffer: position %d outside [0, limit %d] (moved during the call?)",
                       (int)position, (int)limit);
  uint8_t *base = XJ_PTR(uint8_t, (*env)->GetLongField(env, buffer, xj_buffer_address));
  /* An empty file's mapped buffer has no address (FileChannel.map of 0
   * bytes): empty input, with no memory to keep reachable. */
  if (!base && position == limit) return xchg_source_from_memory(NULL, 0, NULL, NULL, out, err);
  if (!base) return XCHG_OK;
  jobject ref = (*env)->NewGlobalRef(env, buffer);
  if (!ref) return xchg_errorf(err, XCHG_ENOMEM, "no global reference to a direct buffer");
  xchg_status st = xchg_source_from_memory(base + position, (size_t)(limit - position),
                                           release_direct, ref, out, err);
  if (st != XCHG_OK) (*env)->DeleteGlobalRef(env, ref);
  return st;
}
