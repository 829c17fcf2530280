#!/usr/bin/env bash
# Builds the portable podium-worker: the agent for hosts and images that carry none of Podium's
# libraries (TPU VM images, MaxText containers). Release, in a tree of its own (the normal build
# is untouched): libstdc++/libgcc, OpenSSL, zlib and libsodium linked statically from Debian's
# archives, spdlog and fmt compiled in header-only (Debian ships no archives of them), glibc left
# dynamic (a static glibc loses getaddrinfo's NSS modules). Fails unless the result needs nothing
# but glibc, and prints the lowest glibc it runs on.
# Usage: scripts/build-portable-worker.sh [BUILD_DIR]   (default build/portable)
# Output: BUILD_DIR/bin/podium-worker and a stripped copy BUILD_DIR/dist/podium-worker.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-$root/build/portable}"
jobs="${PODIUM_BUILD_JOBS:-$(nproc)}"

archive() {  # the full path of a static archive the compiler finds, or fail
  local path
  path="$(gcc -print-file-name="$1")"
  [ -f "$path" ] || { echo "build-portable-worker: $1 not found (Debian: $2)" >&2; exit 1; }
  echo "$path"
}
libz="$(archive libz.a zlib1g-dev)"
libsodium="$(archive libsodium.a libsodium-dev)"
archive libssl.a libssl-dev >/dev/null

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
fi
# The imported spdlog/fmt targets define SPDLOG_COMPILED_LIB and FMT_SHARED; CMAKE_CXX_FLAGS come
# after a target's definitions on the compiler's command line, so these -U win.
header_only="-USPDLOG_COMPILED_LIB -USPDLOG_SHARED_LIB -DSPDLOG_HEADER_ONLY -UFMT_SHARED -DFMT_HEADER_ONLY"
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DPODIUM_WORKER_PORTABLE=ON -DPODIUM_TESTS=OFF
  -DPODIUM_BENCH=OFF "-DCMAKE_CXX_FLAGS=$header_only"
  -DOPENSSL_USE_STATIC_LIBS=TRUE "-DZLIB_LIBRARY=$libz" "-Dpkgcfg_lib_SODIUM_sodium=$libsodium")
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$dir" "${generator[@]}" "${launcher[@]}" "${cmake_args[@]}" >/dev/null
else
  cmake -S "$root" -B "$dir" "${launcher[@]}" "${cmake_args[@]}" >/dev/null
fi
cmake --build "$dir" -j "$jobs" --target podium-worker

bin="$dir/bin/podium-worker"
# Only glibc's own objects may be left: anything else would have to be on the image.
extra="$(ldd "$bin" | awk '{print $1}' |
  grep -v -E '^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|/lib64/ld-linux-x86-64\.so\.2)$' || true)"
if [ -n "$extra" ]; then
  echo "build-portable-worker: $bin still needs: $extra" >&2
  exit 1
fi
mkdir -p "$dir/dist"
strip -o "$dir/dist/podium-worker" "$bin"
glibc="$(objdump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sort -V -u | tail -1)"
echo "build-portable-worker: $dir/dist/podium-worker ($(du -h "$dir/dist/podium-worker" | cut -f1)," \
  "needs glibc >= ${glibc#GLIBC_})"
