#!/usr/bin/env bash
# Configures and builds one build tree. Usage: scripts/build.sh DIR [cmake options...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$1"
shift
jobs="${PODIUM_BUILD_JOBS:-$(nproc)}"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
# mold links the big test binaries about 3x faster than GNU ld (podium_integration_tests: 1.4 s
# instead of 4.6 s); scripts/setup.sh installs it.
linker=()
# ccache: the ASan, TSan, fuzz and test trees compile many of the same files, and a rebuild after
# a checkout or in a new clone reuses what an earlier build compiled. Paths are taken relative to
# the repository, so two clones of it share the cache.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
fi
command -v mold >/dev/null 2>&1 && linker=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=mold)
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$dir" "${generator[@]}" "${linker[@]}" "${launcher[@]}" "$@" >/dev/null
else
  cmake -S "$root" -B "$dir" "${linker[@]}" "${launcher[@]}" "$@" >/dev/null
fi
cmake --build "$dir" -j "$jobs"
