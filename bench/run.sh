#!/usr/bin/env bash
# Builds the benchmarks in Release and runs every benchmark binary, writing
# bench/results/<name>.json (Google Benchmark's JSON) for each <name>_bench.
# Usage: bench/run.sh [build-dir]   (default: build-bench under the repository root)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-bench}"
jobs="${PODIUM_BENCH_JOBS:-2}"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPODIUM_BENCH=ON >/dev/null
cmake --build "$build" --target podium_benchmarks -j "$jobs"

mkdir -p "$root/bench/results"
# A throwaway PostgreSQL for the benchmarks that need one (ingest_bench), stopped at exit.
export PODIUM_TEST_PG_DIR="$build/bench-pg"
PODIUM_BENCH_DATABASE_URL="$("$root/scripts/test-postgres.sh" start)"
export PODIUM_BENCH_DATABASE_URL
trap '"$root/scripts/test-postgres.sh" stop >/dev/null 2>&1 || true' EXIT
found=0
for binary in "$build"/bin/*_bench; do
  [ -x "$binary" ] || continue
  found=1
  name="$(basename "$binary" _bench)"
  echo "== $name"
  "$binary" --benchmark_out="$root/bench/results/$name.json" --benchmark_out_format=json \
    --benchmark_repetitions="${PODIUM_BENCH_REPETITIONS:-5}" --benchmark_report_aggregates_only=true
done
if [ "$found" = 0 ]; then
  echo "no *_bench binaries under $build/bin" >&2
  exit 1
fi

# Issue 11's scenarios (ingestion vs COPY, GET /runs/{id} vs nginx, queries at 10 M metric rows
# and 100 M log lines vs psql, dispatch latency, agent scale, server memory): bench/limits.sh,
# which writes bench/results/latest.json and the table in docs/benchmarks.md.
PODIUM_BENCH_BUILD="$build" "$root/bench/limits.sh"
