#!/usr/bin/env bash
# ctest `symbols`: the shared libraries export exactly their API.
#   libxchg.so      every function include/xchg/ declares with XCHG_API, and
#                   nothing that is not an xchg_ name;
#   libxchg_jni.so  the JNI entry points (Java_*, JNI_*) and nothing else, so
#                   that a JVM full of other native libraries meets no
#                   pool_create or stream_open of ours.
# Usage: run.sh LIBXCHG_SO LIBXCHG_JNI_SO INCLUDE_DIR
set -euo pipefail
lib=$1 jni=$2 include=$3
fail=0

exported() { nm -D --defined-only "$1" | awk '{print $NF}' | sort -u; }

# Symbols the toolchain adds to every shared object (sanitizer runtimes'
# instrumentation, the init/fini sections) are not ours.
toolchain='^(__odr_asan|__asan|__ubsan|__sanitizer|_init$|_fini$|_edata$|_end$|__bss_start$)'

others=$(exported "$lib" | grep -Ev "$toolchain" | grep -v '^xchg_' || true)
if [ -n "$others" ]; then
  echo "FAIL libxchg.so exports names outside the API:"; echo "$others" | head -40; fail=1
fi

declared=$(grep -ho '^XCHG_API[^(]*(' "$include"/xchg/*.h |
           sed -E 's/.*[^a-z0-9_](xchg_[a-z0-9_]*)[[:space:]]*\($/\1/' | sort -u)
[ -n "$declared" ] || { echo "FAIL no XCHG_API declaration found in $include/xchg"; exit 1; }
missing=$(comm -23 <(echo "$declared") <(exported "$lib"))
if [ -n "$missing" ]; then
  echo "FAIL declared with XCHG_API but not exported:"; echo "$missing"; fail=1
fi
undeclared=$(comm -13 <(echo "$declared") <(exported "$lib" | grep '^xchg_'))
if [ -n "$undeclared" ]; then
  echo "FAIL exported but not declared with XCHG_API in include/xchg:"; echo "$undeclared"; fail=1
fi

jni_others=$(exported "$jni" | grep -Ev "$toolchain" | grep -Ev '^(Java_|JNI_)' || true)
if [ -n "$jni_others" ]; then
  echo "FAIL libxchg_jni.so exports names besides Java_*/JNI_*:"; echo "$jni_others" | head -40; fail=1
fi
[ -n "$(exported "$jni" | grep '^Java_' || true)" ] || { echo "FAIL libxchg_jni.so exports no Java_ entry point"; fail=1; }

n=$(echo "$declared" | wc -l)
if [ $fail -eq 0 ]; then
  echo "1 passed, 0 failed: libxchg.so exports its $n API functions alone, libxchg_jni.so its JNI entry points alone"
fi
exit $fail
