#!/usr/bin/env bash
# The dashboard at team scale (issue 31.5): builds what it needs, starts a throwaway PostgreSQL,
# runs bench/web/render.mjs in Debian's Chromium (runs page over 100,000 runs, run page of a
# 1,000,000-step run, compare of 20 runs; sizes from BENCH_RUNS, BENCH_STEPS, BENCH_COMPARED,
# BENCH_COMPARED_STEPS, loads from BENCH_REPEAT), writes bench/results/web_render.json. Not a
# test: figures, not assertions. bench/limits.py runs the same (its web_* rows of latest.json).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
./scripts/setup.sh
(cd web && npm run --silent build)
./scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release -DPODIUM_BENCH=OFF
export PODIUM_TEST_PG_DIR="${PODIUM_TEST_PG_DIR:-$root/build/bench-web-pg}"
PODIUM_TEST_DATABASE_URL="$(./scripts/test-postgres.sh start)"
export PODIUM_TEST_DATABASE_URL PODIUM_BIN_DIR="$root/build/release/bin" PODIUM_BENCH_SERVER_BUILD=build/release
trap './scripts/test-postgres.sh stop >/dev/null 2>&1 || true' EXIT
node bench/web/render.mjs
