#!/usr/bin/env bash
# Installs a build tree into a temporary prefix and uses the JVM binding
# from there, as an engine would: xchg.jar in share/java, libxchg_jni.so in
# LIBDIR/jni (where Debian's JVMs look when the prefix is /usr); Hello.java
# is compiled against the installed jar alone and run with the library
# found through java.library.path, not the build tree's.
#
# Usage: java.sh BUILD_DIR CMAKE JAVAC JAVA VERSION
set -euo pipefail

build_dir=$1
cmake=$2
javac=$3
java=$4
version=$5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/xchg-java-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

fail() { echo "java install test: $*" >&2; exit 1; }

"$cmake" --install "$build_dir" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log" >&2; fail "cmake --install failed"; }

jar="$prefix/share/java/xchg.jar"
[[ -f "$jar" ]] || fail "xchg.jar not installed in $prefix/share/java"
jni=$(find "$prefix" -path '*/jni/libxchg_jni.so' -print -quit)
[[ -n "$jni" ]] || fail "libxchg_jni.so not installed in a jni directory"

mkdir "$work/classes"
"$javac" -Xlint:all -Werror -cp "$jar" -d "$work/classes" "$here/Hello.java" ||
  fail "Hello.java does not build against the installed jar"
# The build tree's library must not be what is loaded: no xchg.jni.library.
"$java" -cp "$jar:$work/classes" -Djava.library.path="$(dirname "$jni")" Hello >"$work/out" 2>&1 ||
  fail "Hello failed: $(cat "$work/out")"
grep -qx "hello from xchg $version" "$work/out" || fail "Hello printed: $(cat "$work/out")"
grep -q "^refused: .*byte 0" "$work/out" || fail "a bad stream's error: $(cat "$work/out")"
grep -q "^native bytes held: 0$" "$work/out" || fail "native memory after close: $(cat "$work/out")"
grep -qx "native library: $version" "$work/out" || fail "Xchg.version(): $(cat "$work/out")"

# A jar of another version than the library it finds is refused at load,
# naming both, rather than calling into a library of other calls.
mkdir "$work/other"
cp "$jar" "$work/other/xchg.jar"
printf 'Implementation-Version: 9.9.9\n' >"$work/other/manifest"
"$(dirname "$(readlink -f "$javac")")/jar" ufm "$work/other/xchg.jar" "$work/other/manifest" 2>"$work/jar.log" ||
  fail "cannot make a jar of another version: $(cat "$work/jar.log")"
if "$java" -cp "$work/other/xchg.jar:$work/classes" -Djava.library.path="$(dirname "$jni")" Hello \
  >"$work/out" 2>&1; then
  fail "a 9.9.9 jar ran with the $version library: $(cat "$work/out")"
fi
grep -q "xchg.jar 9.9.9 loaded libxchg_jni of xchg $version" "$work/out" ||
  fail "a jar of another version: $(cat "$work/out")"

echo "java install test: ok ($jar, $jni)"
