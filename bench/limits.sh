#!/usr/bin/env bash
# Issue 11's benchmarks against the limits of the machine, each with a baseline from the same
# run: builds the Release podium-server and podium-worker in ./build-bench, then runs
# bench/limits.py, which writes bench/results/latest.json and the table in docs/benchmarks.md.
# Usage: bench/limits.sh [bench/limits.py options, e.g. --only ingest_logs,api_get_run]
# Everything runs under nice (PODIUM_BENCH_NICE, default 10; a negative one, as root, lets the
# bench run ahead of builds sharing the machine): every figure is read against a baseline that
# ran under the same conditions. The build keeps nice 10 whatever the bench's.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PODIUM_BENCH_BUILD:-$root/build-bench}"
jobs="${PODIUM_BENCH_JOBS:-2}"

# A unity build, as the README's first command makes: the same code, a shorter first build.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPODIUM_BENCH=ON -DCMAKE_UNITY_BUILD=ON \
  >/dev/null
nice -n 10 cmake --build "$build" --target podium-server podium-worker -j "$jobs"
exec nice -n "${PODIUM_BENCH_NICE:-10}" "${PODIUM_VENV:-$root/.venv}/bin/python" "$root/bench/limits.py" --bin-dir "$build/bin" "$@"
