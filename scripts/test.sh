#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs every test: unit (also under
# ASan+UBSan), ThreadSanitizer, integration (real PostgreSQL), e2e (real processes), fuzz corpora
# and short fuzz runs, browser, and the CI-size reliability scenarios.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
started=$(date +%s)
mkdir -p build
times_file="$root/build/.test-times"
# Each step line carries the wall time so far and the CPU seconds (user + system) the finished
# child processes used so far: on a 2-core machine the CPU total, not the wall, says what to trim.
# `times` is a builtin redirected in this shell (a $(...) subshell would not see its children).
step() {
  local line cpu=0 t
  times >"$times_file"
  line=$(sed -n 2p "$times_file")
  for t in $line; do
    [[ $t =~ ^([0-9]+)m([0-9]+)\.[0-9]+s$ ]] && cpu=$((cpu + BASH_REMATCH[1] * 60 + 10#${BASH_REMATCH[2]}))
  done
  printf '\n== %s (%ss, %s CPU-s)\n' "$*" "$(( $(date +%s) - started ))" "$cpu"
}

step "setup"
# PODIUM_MAXTEXT_E2E=1: also real MaxText 0.2.0 in .venv-maxtext/ for its e2e test
# (tests/e2e/maxtext_run_test.cpp; docs/maxtext-on-cpu.md). Opt-in: its first install downloads
# 129 packages (29 min on this machine kind with an empty pip cache), more than the whole suite's
# budget; reused when unchanged (4 s). Without it the test says how to run it and skips.
if [ "${PODIUM_MAXTEXT_E2E:-0}" = 1 ]; then
  ./scripts/setup.sh --tools --maxtext
else
  ./scripts/setup.sh --tools
fi

# In CI nobody attaches a debugger: -g1 keeps functions and line tables for stack traces and
# compiles faster than full debug info. Locally the builds keep -g.
# CI also builds from nothing every time: the product's libraries compile as a unity build (a
# few combined translation units per library, the heavy headers parsed once per batch; tests
# stay one file each). Locally each file is its own unit, so that an edit rebuilds one file.
# The unit tests compile once in CI: in the clang ASan+UBSan tree (warnings as errors there too),
# which runs them, and not again with g++ in build/test (locally they are in both, so that ctest
# in build/test runs them after an edit).
debug=()
unit_tests=()
if [ "${CI:-}" = "true" ]; then
  debug=(-DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_UNITY_BUILD=ON)
  unit_tests=(-DPODIUM_UNIT_TESTS=OFF)
fi

step "build (Debug, all targets)"
maxtext_e2e=OFF
[ "${PODIUM_MAXTEXT_E2E:-0}" = 1 ] && maxtext_e2e=ON
./scripts/build.sh build/test -DCMAKE_BUILD_TYPE=Debug -DPODIUM_BENCH=OFF "${debug[@]}" \
  "${unit_tests[@]}" -DPODIUM_MAXTEXT_E2E="$maxtext_e2e"

step "test PostgreSQL"
export PODIUM_TEST_PG_DIR="${PODIUM_TEST_PG_DIR:-$root/build/test-pg}"
./scripts/test-postgres.sh start
PODIUM_TEST_DATABASE_URL="$(./scripts/test-postgres.sh url)"
export PODIUM_TEST_DATABASE_URL

step "test Slurm (slurmctld and two slurmd on this machine)"
export PODIUM_TEST_SLURM_DIR="${PODIUM_TEST_SLURM_DIR:-$root/build/test-slurm}"
eval "$(./scripts/test-slurm.sh start)"

# The sanitizer and fuzz builds run beside the ctest run at the lowest priority: the integration
# and e2e tests spend much of their time waiting on processes, deadlines and timeouts, and the
# builds take only the CPU the tests leave idle (nice 19 weighs 15 against the tests' 1024).
step "build in the background: clang ASan+UBSan (fuzz targets and the unit tests), ThreadSanitizer (server, database, hub, worker)"
sanitizer_builds_log=build/sanitizer-builds.log
mkdir -p build
(
  set -e
  # One clang tree: the fuzz targets and podium_unit_tests over the same instrumented libraries
  # (a separate g++ ASan tree compiled every library a second time).
  echo "== ASan+UBSan build (clang: fuzz targets and unit tests)"
  nice -n 19 ./scripts/fuzz.sh --build-only "${debug[@]}"
  echo "== ThreadSanitizer build"
  nice -n 19 ./scripts/build.sh build/tsan -DCMAKE_BUILD_TYPE=Debug -DPODIUM_TSAN=ON "${debug[@]}"
) >"$sanitizer_builds_log" 2>&1 &
builds_pid=$!
trap 'kill "$builds_pid" 2>/dev/null || true; ./scripts/test-postgres.sh stop >/dev/null 2>&1 || true; ./scripts/test-slurm.sh stop >/dev/null 2>&1 || true' EXIT

status=0
step "unit, integration and e2e tests"
# Every response the integration and e2e tests receive is checked against docs/openapi.yaml
# (tests/integration/support/openapi_contract.h); each test process adds its tally here.
export PODIUM_CONTRACT_TALLY_FILE="$root/build/test/contract-tally.txt"
rm -f "$PODIUM_CONTRACT_TALLY_FILE"
set +e
ctest --test-dir build/test --output-on-failure -j "$(nproc)" --timeout 600 2>&1 | tee build/test/ctest.log
ctest_status=${PIPESTATUS[0]}
set -e
[ "$ctest_status" -eq 0 ] || status=1
# An honest gate: in CI a test that skipped (no database, no Slurm, ...) checked nothing, so it
# fails the run like a failure would. Locally a skip stays a skip.
if [ "${CI:-}" = "true" ] && grep -q '(Skipped)' build/test/ctest.log; then
  echo "CI: these tests were skipped, which counts as failing here:"
  grep '(Skipped)' build/test/ctest.log
  status=1
fi

if [ -f "$PODIUM_CONTRACT_TALLY_FILE" ]; then
  awk '{c+=$1;f+=$3} END {printf "responses checked against docs/openapi.yaml: %d (not conforming: %d)\n",c,f}' \
    "$PODIUM_CONTRACT_TALLY_FILE"
fi

step "contract: schemathesis, every operation of docs/openapi.yaml against a live server"
PODIUM_BIN_DIR="$root/build/test/bin" tests/contract/schemathesis.sh || status=1

step "waiting for the background builds"
if ! wait "$builds_pid"; then
  echo "the sanitizer or fuzz build failed:"; tail -60 "$sanitizer_builds_log"; exit 1
fi

step "unit tests under ASan+UBSan"
# Each test binary runs once as a whole: one process per test (ctest's way) costs ASan's start
# and leak check 390 times, over two minutes, for a suite that runs in seconds.
# In CI the unit tests run only here, so the skip gate above applies here too.
for binary in build/fuzz/bin/*_tests; do
  log="build/fuzz/$(basename "$binary").log"
  set +e
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$binary" --gtest_brief=1 2>&1 | tee "$log"
  binary_status=${PIPESTATUS[0]}
  set -e
  [ "$binary_status" -eq 0 ] || status=1
  if [ "${CI:-}" = "true" ] && grep -q '^\[  SKIPPED \]' "$log"; then
    echo "CI: unit tests skipped in $binary, which counts as failing here:"
    grep '^\[  SKIPPED \]' "$log"
    status=1
  fi
done

step "server, database, hub and worker tests under ThreadSanitizer"
# Suppressions only for third-party code, each explained in the file.
for binary in build/tsan/bin/podium_worker_tests build/tsan/bin/podium_db_tests; do
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan/suppressions.txt" \
    "$binary" --gtest_brief=1 || status=1
done

step "fuzz targets: committed corpora replayed, then each fuzzed briefly (clang, libFuzzer)"
# A few seconds each, one target per core: a regression check beside the committed corpora; the
# long runs are bench/reliability's (docs/reliability.md).
PODIUM_FUZZ_SECONDS="${PODIUM_FUZZ_SECONDS:-5}" PODIUM_FUZZ_PARALLEL="$(nproc)" ./scripts/fuzz.sh || status=1

if [ -f web/package.json ]; then
  step "dashboard unit and browser tests"
  (cd web && npm run --silent check:api-types && npm run --silent build && npm run --silent test && PODIUM_BIN_DIR="$root/build/test/bin" npm run --silent test:browser) || status=1
fi

step "reliability (CI size): 5 server kills under live runs, one database outage under load"
# Nothing acknowledged lost or duplicated across SIGKILLs of the server; 503s answer quickly
# while the database is down and service resumes by itself (docs/reliability.md).
PODIUM_BIN_DIR="$root/build/test/bin" bench/reliability/run.sh --ci || status=1

step "done"
exit $status
