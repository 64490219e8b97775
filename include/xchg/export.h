/** \file
 * xchg/export.h — how the public API is marked.
 *
 * libxchg is built with hidden visibility: a symbol is exported from
 * libxchg.so only when its declaration carries XCHG_API, so that the
 * library can share a process with other native code (a JVM with Arrow,
 * Netty, zstd-jni...) without its internal names colliding with theirs.
 * The installed libxchg.a likewise defines no other global name.  Every
 * public function is declared with it, and nothing else is.
 *
 * XCHG_NODISCARD marks the functions that return an xchg_status: ignoring
 * one is a compiler warning, because a status is the only way a failure is
 * reported.  (Two exceptions: xchg_errorf returns the status it was given,
 * for `return xchg_errorf(...)`, and xchg_cache_host_error reports a past
 * failure that was no call's.) */
#ifndef XCHG_EXPORT_H
#define XCHG_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define XCHG_API __attribute__((visibility("default")))
#define XCHG_NODISCARD __attribute__((warn_unused_result))
#else
#define XCHG_API
#define XCHG_NODISCARD
#endif

#endif
