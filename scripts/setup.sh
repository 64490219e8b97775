#!/bin/sh
# Installs everything xchg needs to build and test on Debian 12, from a bare
# system: as root directly, otherwise through sudo.  Both commands at the top
# of the README call it; it is safe to run again (apt skips what is there).
#   scripts/setup.sh          build + test dependencies, and the npm packages of
#                             the interop tests (tests/interop/*)
#   scripts/setup.sh --build  only what the release build and its benchmark need
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-all}
case $mode in
  all|--build) ;;
  *) echo "usage: scripts/setup.sh [--build]" >&2; exit 2 ;;
esac

if [ "$(id -u)" -eq 0 ]; then
  as_root=""
elif command -v sudo >/dev/null 2>&1; then
  as_root="sudo"
else
  echo "scripts/setup.sh: installing packages needs root or sudo" >&2
  exit 1
fi

build_pkgs="build-essential cmake pkg-config liblz4-dev libzstd-dev libsnappy-dev"
test_pkgs="zlib1g-dev libjansson-dev clang clang-format libclang-rt-14-dev doxygen nodejs npm ca-certificates
  openjdk-17-jdk-headless liblz4-java libsnappy-java libzstd-jni-java"
pkgs=$build_pkgs
[ "$mode" = all ] && pkgs="$build_pkgs $test_pkgs"

missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# A machine may carry its own Node.js outside Debian's packages: keep it.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  missing=$(echo "$missing" | tr ' ' '\n' | grep -vx -e nodejs -e npm | tr '\n' ' ')
fi
if [ -n "$(echo "$missing" | tr -d ' ')" ]; then
  # Slim Debian images drop man pages, and the JDK's postinst then fails to
  # register its man-page alternatives unless the directory exists.
  $as_root mkdir -p /usr/share/man/man1
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # shellcheck disable=SC2086 # a list of packages
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing </dev/null
fi

if [ "$mode" = all ]; then
  for d in "$here"/tests/interop/*/; do
    [ -f "$d/package-lock.json" ] || continue
    (cd "$d" && npm ci --no-audit --no-fund --loglevel=error)
  done
fi
