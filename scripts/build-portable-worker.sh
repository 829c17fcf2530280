#!/usr/bin/env bash
# Builds the portable podium-worker: the agent for hosts and images that carry none of Podium's
# libraries (TPU VM images, MaxText containers, older distributions). Release, in a tree of its own
# (the normal build is untouched): libstdc++/libgcc, OpenSSL, zlib and libsodium linked statically
# from Debian's archives, spdlog and fmt compiled in header-only, glibc left dynamic (so the host's
# NSS modules, e.g. OS Login's, resolve --run-as) but linked against glibc 2.31: Debian 11's libc6
# and libc6-dev, fetched once from the Debian mirror, checked against the SHA-256 below and unpacked
# into BUILD_DIR/glibc-2.31 (engine/worker/CMakeLists.txt, PODIUM_WORKER_GLIBC_SYSROOT).
# Fails unless the result needs nothing but glibc's own libraries and no symbol version newer
# than 2.31, and prints the lowest glibc it runs on.
# Usage: scripts/build-portable-worker.sh [BUILD_DIR]   (default build/portable)
#   PODIUM_GLIBC_MIRROR  Debian mirror with bullseye's pool (default http://deb.debian.org/debian;
#                        http://archive.debian.org/debian once bullseye moves there)
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

# glibc 2.31 for the link: Debian 11.11's final glibc (bullseye no longer changes), pinned by hash.
glibc_floor=2.31
sysroot="$dir/glibc-$glibc_floor"
glibc_debs=(
  "libc6_2.31-13+deb11u11_amd64.deb 05f7264da867b37f4c5ce49266b558ea1e81e05a9464f623152fca70f3550282"
  "libc6-dev_2.31-13+deb11u11_amd64.deb e7f7b45d9c5cfcf37609f0b6efd3c645272c812144703af89dfd32218fcb0fd3"
)
# The stamp names the packages, so a change of the list above fetches again.
if [ "$(cat "$sysroot/.complete" 2>/dev/null)" != "${glibc_debs[*]}" ]; then
  mirror="${PODIUM_GLIBC_MIRROR:-http://deb.debian.org/debian}"
  rm -rf "$sysroot" && mkdir -p "$sysroot/.debs"
  for entry in "${glibc_debs[@]}"; do
    read -r deb sha <<<"$entry"
    curl -fsS --retry 3 -o "$sysroot/.debs/$deb" "$mirror/pool/main/g/glibc/$deb" ||
      { echo "build-portable-worker: cannot fetch $mirror/pool/main/g/glibc/$deb" >&2; exit 1; }
    echo "$sha  $sysroot/.debs/$deb" | sha256sum -c --quiet - ||
      { echo "build-portable-worker: $deb does not match its SHA-256" >&2; exit 1; }
    dpkg-deb -x "$sysroot/.debs/$deb" "$sysroot"
  done
  # The packages' symbolic links are absolute (libpthread.so -> /lib/.../libpthread.so.0): point
  # them inside the sysroot, or the link would pick up the build host's libraries.
  find "$sysroot" -type l -lname '/*' | while read -r link; do
    ln -sfn "$sysroot$(readlink "$link")" "$link"
  done
  rm -rf "$sysroot/.debs" && echo "${glibc_debs[*]}" > "$sysroot/.complete"
fi

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
  -DPODIUM_BENCH=OFF "-DCMAKE_CXX_FLAGS=$header_only" "-DPODIUM_WORKER_GLIBC_SYSROOT=$sysroot"
  -DOPENSSL_USE_STATIC_LIBS=TRUE "-DZLIB_LIBRARY=$libz" "-Dpkgcfg_lib_SODIUM_sodium=$libsodium")
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$dir" "${generator[@]}" "${launcher[@]}" "${cmake_args[@]}" >/dev/null
else
  cmake -S "$root" -B "$dir" "${launcher[@]}" "${cmake_args[@]}" >/dev/null
fi
cmake --build "$dir" -j "$jobs" --target podium-worker

bin="$dir/bin/podium-worker"
# Only glibc's own libraries may be needed: anything else would have to be on the image.
extra="$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
  grep -v -x -E 'libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-x86-64\.so\.2' || true)"
if [ -n "$extra" ]; then
  echo "build-portable-worker: $bin still needs: $extra" >&2
  exit 1
fi
# The versions the loader will ask glibc for (.gnu.version_r, GLIBC_ABI_DT_RELR included).
needed="$(readelf -V "$bin" | grep -o 'Name: GLIBC_[0-9A-Z_.]*' | sed 's/Name: GLIBC_//' | sort -V -u)"
newest="$(grep -E '^[0-9.]+$' <<<"$needed" | tail -1)"
too_new="$(while read -r version; do
  [[ "$version" =~ ^[0-9.]+$ ]] && [ "$(printf '%s\n' "$version" "$glibc_floor" | sort -V | tail -1)" = "$glibc_floor" ] ||
    echo "GLIBC_$version"
done <<<"$needed" | xargs)"
if [ -n "$too_new" ]; then
  echo "build-portable-worker: $bin asks for more than glibc $glibc_floor: $too_new" >&2
  exit 1
fi
mkdir -p "$dir/dist"
strip -o "$dir/dist/podium-worker" "$bin"
echo "build-portable-worker: $dir/dist/podium-worker ($(du -h "$dir/dist/podium-worker" | cut -f1)," \
  "linked against glibc $glibc_floor, needs glibc >= $newest and no other shared library)"
