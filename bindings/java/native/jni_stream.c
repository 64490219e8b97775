/* jni_stream.c — org.xchg.XchgInputStream over xchg_istream (xchg/stream.h).
 *
 * The compressed bytes come from Java chunks (see xj_chunks_source) or
 * from a java.io.InputStream, read 64 KiB at a time into a Java scratch
 * array and copied out.  Reads hand the decompressed window straight to
 * the caller's array (xchg_istream_next, then xchg_istream_unread of what
 * did not fit), so no byte is copied twice. */
#include <stdlib.h>

#include "xchg/stream.h"
#include "xchg_jni.h"

/* A java.io.InputStream as the compressed source. */
typedef struct java_input {
  jobject in;         /* global reference */
  jbyteArray scratch; /* global reference, XJ_COPY_STEP bytes */
  jmethodID read;     /* InputStream.read(byte[], int, int) */
  jthrowable thrown;  /* what read threw (global reference), kept for the caller */
  int threw_after;    /* read threw after bytes of the same call: said by the next call */
} java_input;

typedef struct xj_stream {
  xchg_istream *stream;
  xj_chunks *chunks; /* when reading chunks */
  java_input *input; /* when reading an InputStream */
} xj_stream;

static xchg_status input_threw(xchg_error *err) {
  return xchg_errorf(err, XCHG_EIO, "InputStream.read threw");
}

/* Keeps what read threw for the caller (the first exception, should the
 * stream be read again), clearing it so that JNI may be called on. */
static void keep_thrown(JNIEnv *env, java_input *in) {
  if (!in->thrown)
    in->thrown = xj_take_exception(env);
  else
    (*env)->ExceptionClear(env);
}

/* Reads up to n bytes, XJ_COPY_STEP at a time.  When read throws after
 * some of them, they go out as a short read and the error waits for the
 * next call: the source drops the bytes of a call that fails (xchg/io.h). */
static xchg_status java_input_read(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  java_input *in = ctx;
  JNIEnv *env = xj_env();
  size_t done = 0;
  *got = 0;
  if (!env) return xchg_errorf(err, XCHG_EIO, "InputStream: no JNIEnv on this thread");
  if (in->threw_after) {
    in->threw_after = 0;
    return input_threw(err);
  }
  while (done < n) {
    jint want = (jint)(n - done < XJ_COPY_STEP ? n - done : XJ_COPY_STEP);
    jint r = (*env)->CallIntMethod(env, in->in, in->read, in->scratch, 0, want);
    if ((*env)->ExceptionCheck(env)) {
      keep_thrown(env, in);
      if (done == 0) return input_threw(err);
      in->threw_after = 1;
      break;
    }
    if (r < 0) break;
    if (r == 0 || r > want)
      return xchg_errorf(err, XCHG_EIO, "InputStream.read returned %d for %d bytes", (int)r,
                         (int)want);
    (*env)->GetByteArrayRegion(env, in->scratch, 0, r, (jbyte *)dst + done);
    done += (size_t)r;
  }
  *got = done;
  return XCHG_OK;
}

/* Frees a stream's Java side; the source's close callback (the istream
 * closes its source) must not, since it may run on any thread. */
static void java_input_free(JNIEnv *env, java_input *in) {
  if (!in) return;
  if (in->in) (*env)->DeleteGlobalRef(env, in->in);
  if (in->scratch) (*env)->DeleteGlobalRef(env, in->scratch);
  if (in->thrown) (*env)->DeleteGlobalRef(env, in->thrown);
  free(in);
}

static void stream_free(JNIEnv *env, xj_stream *s) {
  if (!s) return;
  xchg_istream_free(s->stream);
  xj_chunks_free(env, s->chunks);
  java_input_free(env, s->input);
  free(s);
}

/* The cause to attach to an error: what the InputStream threw, taken over. */
static jthrowable take_thrown(xj_stream *s) {
  if (!s->input) return NULL;
  jthrowable t = s->input->thrown;
  s->input->thrown = NULL;
  return t;
}

static void throw_stream_error(JNIEnv *env, xj_stream *s, xchg_status st, const xchg_error *err) {
  jthrowable cause = take_thrown(s);
  xj_throw_error(env, st, err, cause);
  if (cause) (*env)->DeleteGlobalRef(env, cause);
}

/* Opens s->stream over src (taken over), which `opened` (with its message
 * in *err) says was created; frees s and throws on failure. */
static jlong stream_open(JNIEnv *env, xj_stream *s, xchg_status opened, xchg_source *src,
                         xchg_error *err, jint codec) {
  xchg_status st = opened;
  if (st == XCHG_OK) st = xchg_istream_open(src, (xchg_stream_codec)codec, NULL, &s->stream, err);
  if (st != XCHG_OK) {
    s->stream = NULL;
    throw_stream_error(env, s, st, err);
    stream_free(env, s);
    return 0;
  }
  return XJ_HANDLE(s);
}

static int codec_ok(JNIEnv *env, jint codec) {
  if (codec >= XCHG_STREAM_NONE && codec <= XCHG_STREAM_AUTO) return 1;
  xj_throw_java(env, "java/lang/IllegalArgumentException", "unknown stream codec");
  return 0;
}

JNIEXPORT jlong JNICALL Java_org_xchg_XchgInputStream_nOpenChunks(JNIEnv *env, jclass cls,
                                                                  jobjectArray buffers,
                                                                  jobjectArray heap,
                                                                  jintArray offsets,
                                                                  jintArray lengths, jint codec) {
  if (!codec_ok(env, codec)) return 0;
  xj_stream *s = calloc(1, sizeof *s);
  if (!s) {
    xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: stream");
    return 0;
  }
  if (!(s->chunks = xj_chunks_new(env, buffers, heap, offsets, lengths))) {
    free(s);
    return 0;
  }
  xchg_source *src;
  xchg_error err;
  xchg_status st = xj_chunks_source(s->chunks, 0, s->chunks->count, &src, &err);
  return stream_open(env, s, st, src, &err, codec);
}

JNIEXPORT jlong JNICALL Java_org_xchg_XchgInputStream_nOpenInput(JNIEnv *env, jclass cls,
                                                                 jobject in, jint codec) {
  if (!codec_ok(env, codec)) return 0;
  xj_stream *s = calloc(1, sizeof *s);
  java_input *ji = calloc(1, sizeof *ji);
  jbyteArray scratch = (*env)->NewByteArray(env, (jsize)XJ_COPY_STEP);
  jclass in_class = (*env)->GetObjectClass(env, in);
  if (s && ji && scratch && in_class) {
    ji->read = (*env)->GetMethodID(env, in_class, "read", "([BII)I");
    ji->in = (*env)->NewGlobalRef(env, in);
    ji->scratch = (*env)->NewGlobalRef(env, scratch);
  }
  if (in_class) (*env)->DeleteLocalRef(env, in_class);
  if (scratch) (*env)->DeleteLocalRef(env, scratch);
  if (!s || !ji || !ji->read || !ji->in || !ji->scratch) {
    if (!(*env)->ExceptionCheck(env))
      xj_throw_java(env, "java/lang/OutOfMemoryError", "xchg: stream");
    if (ji) java_input_free(env, ji);
    free(s);
    return 0;
  }
  s->input = ji;
  xchg_source *src;
  xchg_error err;
  xchg_status st = xchg_source_from_callback(java_input_read, NULL, ji, &src, &err);
  return stream_open(env, s, st, src, &err, codec);
}

/* Takes up to `want` decoded bytes from s, copied to dst at off unless dst
 * is NULL (a skip); returns how many (fewer only at the stream's end or
 * before an error), or -1 with an exception thrown.  An error after some
 * bytes is left for the next call (the stream keeps returning it), as
 * InputStream.read throws only when it cannot read the first byte: the
 * bytes before a corrupt block, and position() counting them, are not
 * lost. */
static jlong stream_take(JNIEnv *env, xj_stream *s, jbyteArray dst, jint off, jlong want) {
  jlong done = 0;
  while (done < want) {
    const void *window;
    size_t have;
    xchg_error err;
    xchg_status st = xchg_istream_next(s->stream, &window, &have, &err);
    if (st != XCHG_OK && done > 0) break;
    if (st != XCHG_OK) {
      throw_stream_error(env, s, st, &err);
      return -1;
    }
    if (have == 0) break;
    size_t take = have < (uint64_t)(want - done) ? have : (size_t)(want - done);
    if (dst != NULL) (*env)->SetByteArrayRegion(env, dst, off + (jint)done, (jsize)take, window);
    xchg_istream_unread(s->stream, have - take);
    done += (jlong)take;
  }
  return done;
}

JNIEXPORT jint JNICALL Java_org_xchg_XchgInputStream_nRead(JNIEnv *env, jclass cls, jlong handle,
                                                           jbyteArray dst, jint off, jint len) {
  jlong done = stream_take(env, XJ_PTR(xj_stream, handle), dst, off, len);
  return done <= 0 ? -1 : (jint)done; /* -1 at the end, as InputStream.read */
}

JNIEXPORT jlong JNICALL Java_org_xchg_XchgInputStream_nSkip(JNIEnv *env, jclass cls, jlong handle,
                                                            jlong n) {
  jlong done = stream_take(env, XJ_PTR(xj_stream, handle), NULL, 0, n);
  return done < 0 ? 0 : done;
}

JNIEXPORT jint JNICALL Java_org_xchg_XchgInputStream_nCodec(JNIEnv *env, jclass cls, jlong handle) {
  return (jint)xchg_istream_codec(XJ_PTR(xj_stream, handle)->stream);
}

JNIEXPORT jlong JNICALL Java_org_xchg_XchgInputStream_nPosition(JNIEnv *env, jclass cls,
                                                                jlong handle) {
  return (jlong)xchg_istream_position(XJ_PTR(xj_stream, handle)->stream);
}

JNIEXPORT void JNICALL Java_org_xchg_XchgInputStream_nClose(JNIEnv *env, jclass cls, jlong handle) {
  stream_free(env, XJ_PTR(xj_stream, handle));
}
