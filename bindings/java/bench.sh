#!/usr/bin/env bash
# bindings/java/bench.sh — the JVM benchmarks, run from the repository root
# with the build in build/ (or $XCHG_BUILD_DIR): an optimised build without
# sanitizers that includes the Java classes of the tests (the benchmarks
# live there), e.g. `scripts/setup.sh && cmake -S . -B build
# -DCMAKE_BUILD_TYPE=Release -DXCHG_BUILD_TESTS=ON && cmake --build build -j2`.
#
#   bindings/java/bench.sh cached [--json] [--runs K] [--trusted] [--rows N] [--codecs none,lz4,zstd]
#                                 [--modes batch,tasks] [--group 50] [--decode-only] [--no-stall]
#       shape `cache`: XchgBatchDecoder against the JVM baseline (XchgCachedBench)
#   bindings/java/bench.sh payload [--codecs none,lz4,zstd] [--reads narrow,full] [--sources direct,heap]
#                                  [--sides xchg,jvm] [--trusted] [--rounds 20] [--group 1] [--rows N] [--json]
#       what one payload costs on one thread: decode (or decodeMany of --group) + release against the
#       JVM's read (XchgPayloadBench)
#   bindings/java/bench.sh broadcast [ARGS...]
#       shape `broadcast`: XchgBroadcastBench
set -euo pipefail
build=$(realpath "${XCHG_BUILD_DIR:-build}")
[ $# -ge 1 ] || { echo "usage: $0 cached|payload|broadcast [ARGS...]" >&2; exit 2; }
what=$1
shift
case $what in
  cached) class=org.xchg.XchgCachedBench ;;
  payload) class=org.xchg.XchgPayloadBench ;;
  broadcast) class=org.xchg.XchgBroadcastBench ;;
  *) echo "$0: unknown benchmark '$what' (cached, payload, broadcast)" >&2; exit 2 ;;
esac
for f in "$build/xchg" "$build/libxchg_jni.so" "$build/java/classes" "$build/java/test-classes"; do
  [ -e "$f" ] || { echo "$0: $f is missing: build with -DXCHG_BUILD_TESTS=ON first (see the comment at the top)" >&2; exit 1; }
done
if grep -q '^XCHG_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "$0: $build is a sanitizer build: its figures would mean nothing" >&2
  exit 1
fi
cp="$build/java/classes:$build/java/test-classes:/usr/share/java/lz4-java.jar:/usr/share/java/zstd-jni.jar"
# --add-opens: the cached benchmark reads the export as Arrow Java does (bench/org/xchg/ExportViews.java)
exec java -Xmx4g --add-opens java.base/java.nio=ALL-UNNAMED -Dxchg.jni.library="$build/libxchg_jni.so" -cp "$cp" "$class" --cli "$build/xchg" "$@"
