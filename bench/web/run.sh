#!/usr/bin/env bash
# Dashboard rendering benchmark: builds what it needs, starts a throwaway PostgreSQL, runs
# bench/web/render.mjs (10,000 runs, a 100,000-step run) in Debian's Chromium, writes
# bench/results/web_render.json. Not a test: figures, not assertions.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
./scripts/setup.sh
(cd web && npm run --silent build)
./scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release -DPODIUM_BENCH=OFF
export PODIUM_TEST_PG_DIR="${PODIUM_TEST_PG_DIR:-$root/build/bench-web-pg}"
PODIUM_TEST_DATABASE_URL="$(./scripts/test-postgres.sh start)"
export PODIUM_TEST_DATABASE_URL PODIUM_BIN_DIR="$root/build/release/bin"
trap './scripts/test-postgres.sh stop >/dev/null 2>&1 || true' EXIT
node bench/web/render.mjs
