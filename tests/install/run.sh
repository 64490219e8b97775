#!/usr/bin/env bash
# Installs a build tree into a temporary prefix, then builds and runs
# hello.c against the installed copy — with the shared library (found at
# run time through LD_LIBRARY_PATH, and through an rpath as README.md says),
# and with the static one, which must define the API alone — finding
# everything through pkg-config alone; and builds the C examples of
# README.md against it.
#
# Usage: run.sh BUILD_DIR CMAKE CC [CFLAGS...]
#   CFLAGS are added to every compile and link (the sanitizer flags of a
#   sanitized build, without which an instrumented libxchg does not link).
set -euo pipefail

build_dir=$1
cmake=$2
cc=$3
shift 3
extra=("$@")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_include="$here/../../include/xchg"

work=$(mktemp -d "${TMPDIR:-/tmp}/xchg-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

fail() { echo "install test: $*" >&2; exit 1; }

"$cmake" --install "$build_dir" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log" >&2; fail "cmake --install failed"; }

pc=$(find "$prefix" -name xchg.pc -print -quit)
[[ -n "$pc" ]] || fail "xchg.pc was not installed"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
pkg-config --exists --print-errors xchg || fail "pkg-config cannot use $pc"
libdir=$(pkg-config --variable=libdir xchg)
includedir=$(pkg-config --variable=includedir xchg)

# Every public header, the static library, and the versioned shared library
# with its links.
for h in "$source_include"/*.h; do
  [[ -f "$includedir/xchg/$(basename "$h")" ]] || fail "header $(basename "$h") not installed"
done
[[ -f "$libdir/libxchg.a" ]] || fail "libxchg.a not installed in $libdir"
version=$(pkg-config --modversion xchg)
[[ -f "$libdir/libxchg.so.$version" ]] || fail "libxchg.so.$version not installed"
[[ -L "$libdir/libxchg.so.${version%%.*}" && -L "$libdir/libxchg.so" ]] ||
  fail "libxchg.so symlinks missing"

# Each installed header compiles on its own, and none brings <string.h> to
# its users (xchg/stream.h's inline read copies with the compiler's builtin).
for h in "$includedir"/xchg/*.h; do
  name=xchg/$(basename "$h")
  deps=$(echo "#include <$name>" | "$cc" "${extra[@]}" -std=c11 -Wall -Werror -I"$includedir" \
           -x c - -M -MT x) || fail "$name does not compile on its own"
  ! echo "$deps" | tr ' ' '\n' | grep -q '/string\.h$' || fail "$name includes <string.h>"
done

# And as C++, under the warnings a strict C++ code base builds with (an
# engine embedding the library in C++ includes these headers, and
# -Werror must not stop it at them): g++ and clang++, which warn apart.
for cxx in g++ clang++; do
  command -v "$cxx" >/dev/null || fail "$cxx is not installed (scripts/setup.sh installs it)"
  for h in "$includedir"/xchg/*.h; do
    name=xchg/$(basename "$h")
    echo "#include <$name>" | "$cxx" -std=c++11 -Wall -Wextra -Wpedantic -Wold-style-cast \
      -Wcast-qual -Wzero-as-null-pointer-constant -Werror -I"$includedir" -x c++ -fsyntax-only - ||
      fail "$name does not compile as C++ with $cxx"
  done
done

needs_libxchg() { readelf -d "$1" | grep -q 'NEEDED.*libxchg\.so'; }

# Shared: the plain pkg-config line.
read -r -a cflags <<<"$(pkg-config --cflags xchg)"
read -r -a libs <<<"$(pkg-config --libs xchg)"
"$cc" "${extra[@]}" "${cflags[@]}" "$here/hello.c" -o "$work/hello_shared" "${libs[@]}"
needs_libxchg "$work/hello_shared" || fail "hello_shared does not link libxchg.so"
LD_LIBRARY_PATH="$libdir" "$work/hello_shared" >"$work/out_shared" || fail "hello_shared failed"
grep -q "hello from xchg $version" "$work/out_shared" || fail "hello_shared printed: $(cat "$work/out_shared")"
# Or, as README.md says for a non-default prefix, linked with an rpath: it
# runs without LD_LIBRARY_PATH.
"$cc" "${extra[@]}" "${cflags[@]}" "$here/hello.c" -o "$work/hello_rpath" "${libs[@]}" \
  "-Wl,-rpath,$(pkg-config --variable=libdir xchg)"
env -u LD_LIBRARY_PATH "$work/hello_rpath" >"$work/out_rpath" || fail "hello_rpath failed without LD_LIBRARY_PATH"
grep -q "hello from xchg $version" "$work/out_rpath" || fail "hello_rpath printed: $(cat "$work/out_rpath")"

# Static: --static brings the private dependencies; -lxchg is pointed at the
# archive, since the linker would otherwise prefer the .so next to it.
read -r -a static_libs <<<"$(pkg-config --static --libs xchg)"
for i in "${!static_libs[@]}"; do
  [[ "${static_libs[$i]}" == "-lxchg" ]] && static_libs[$i]="$libdir/libxchg.a"
done
"$cc" "${extra[@]}" "${cflags[@]}" "$here/hello.c" -o "$work/hello_static" "${static_libs[@]}"
! needs_libxchg "$work/hello_static" || fail "hello_static still needs libxchg.so"
"$work/hello_static" >"$work/out_static" || fail "hello_static failed"
grep -q "hello from xchg $version" "$work/out_static" || fail "hello_static printed: $(cat "$work/out_static")"

# The archive defines the API alone, as the .so exports it: the library's
# internal names are local, so that a program with a job_run or a
# reader_seek of its own links statically with the shuffle reader (whose
# job.c has a job_run) and runs.
toolchain='^(__odr_asan|__asan|__ubsan|__sanitizer|__tsan|___asan|\.)'
others=$(nm -g --defined-only "$libdir/libxchg.a" | awk 'NF == 3 {print $3}' |
         grep -Ev "$toolchain" | grep -v '^xchg_' || true)
[[ -z "$others" ]] || fail "libxchg.a defines names outside the API: $(echo $others | head -c 300)"
cat >"$work/clash.c" <<'C'
#include <stdio.h>
#include <xchg/xchg.h>
int job_run(void) { return 0; }
int reader_seek(void) { return 0; }
int main(void) {
  xchg_shuffle_reader *r;
  if (xchg_shuffle_reader_open(NULL, &r, NULL) != XCHG_OK) return 1;
  xchg_shuffle_reader_free(r);
  puts("no clash");
  return job_run() + reader_seek();
}
C
"$cc" "${extra[@]}" "${cflags[@]}" "$work/clash.c" -o "$work/clash" "${static_libs[@]}" ||
  fail "a program with its own job_run does not link with libxchg.a"
[[ "$("$work/clash")" == "no clash" ]] || fail "the clash program failed"

# The README's C examples build against the installed library as written:
# a program with main links and runs on a missing input and on one
# without the column it selects (it must fail cleanly, exit 1, naming the
# file or the column, and leak nothing in a sanitized build), and reads
# the input it was written for; a fragment without main compiles.
readme="$here/../../README.md"
examples=0
awk -v dir="$work" '/^```c$/ {n++; out = dir "/readme_" n ".c"; next}
                    /^```$/ {out = ""; next}
                    out != "" {print > out}' "$readme"
for ex in "$work"/readme_*.c; do
  [[ -f "$ex" ]] || continue
  examples=$((examples + 1))
  if grep -q 'int main' "$ex"; then
    "$cc" "${extra[@]}" -Wall -Werror "${cflags[@]}" "$ex" -o "${ex%.c}" "${libs[@]}" ||
      fail "README example $(basename "$ex") does not build"
    status=0
    LD_LIBRARY_PATH="$libdir" "${ex%.c}" "$work/no-such-file" 2>"$work/example.err" || status=$?
    [[ $status -eq 1 ]] && grep -q "no-such-file" "$work/example.err" &&
      ! grep -q "Sanitizer" "$work/example.err" ||
      fail "README example $(basename "$ex") on a missing file: exit $status, $(cat "$work/example.err")"
    if grep -q '"c4"' "$ex"; then
      "$prefix/bin/xchg" gen cache "$work/data.arrows" --rows 25000 --compression lz4 -f
      "$prefix/bin/xchg" gen broadcast "$work/no-c4.arrows" --rows 100 --outer none -f
      LD_LIBRARY_PATH="$libdir" "${ex%.c}" "$work/data.arrows" >"$work/example.out" ||
        fail "README example $(basename "$ex") on xchg gen cache: exit $?"
      [[ "$(cat "$work/example.out")" == $'10000 rows\n10000 rows\n5000 rows' ]] ||
        fail "README example $(basename "$ex") on xchg gen cache printed: $(cat "$work/example.out")"
      status=0
      LD_LIBRARY_PATH="$libdir" "${ex%.c}" "$work/no-c4.arrows" 2>"$work/example.err" || status=$?
      [[ $status -eq 1 ]] && grep -q "c4" "$work/example.err" &&
        ! grep -q "Sanitizer" "$work/example.err" ||
        fail "README example $(basename "$ex") on a file without c4: exit $status, $(cat "$work/example.err")"
    fi
  else
    "$cc" "${extra[@]}" -Wall -Werror "${cflags[@]}" -c "$ex" -o "${ex%.c}.o" ||
      fail "README example $(basename "$ex") does not compile"
  fi
done
[[ $examples -gt 0 ]] || fail "no C example found in README.md"

echo "install test: ok (prefix layout, self-contained headers, pkg-config, shared and static links, $examples README examples)"
