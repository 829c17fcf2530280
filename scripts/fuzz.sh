#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang and runs them (docs/reliability.md).
#
#   scripts/fuzz.sh                    # replay every committed corpus, then fuzz each target 15 s
#   scripts/fuzz.sh TARGET SECONDS     # one target for a long run, e.g. maxtext_log_fuzzer 3600
#   scripts/fuzz.sh --build-only [cmake options...]
#                                      # build the targets and the unit tests under the same
#                                      # sanitizers, run nothing (the test command does so beside
#                                      # the other tests; CI adds -DCMAKE_UNITY_BUILD=ON)
#   PODIUM_FUZZ_RUNS=10000000 scripts/fuzz.sh TARGET 7200
#                                      # stop after that many executions (SECONDS stays the bound)
#   PODIUM_FUZZ_TIMEOUT=60             # seconds one input may take (default 10). libFuzzer's bound
#                                      # is wall clock: a long run at low priority beside other
#                                      # work needs a larger one, or a slow input reads as a hang
#
# New inputs that grow coverage are written to build/fuzz-corpus/<target>/ (the committed seeds
# under fuzz/corpus/ stay as they are); crashes to build/fuzz-artifacts/. Exit 1 on any crash,
# leak or timeout (10 s per input unless PODIUM_FUZZ_TIMEOUT says otherwise), with the
# reproducer's path printed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build=build/fuzz
seconds_each="${PODIUM_FUZZ_SECONDS:-15}"

command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (scripts/setup.sh installs clang)" >&2; exit 1; }
# -O1 and line tables only: what libFuzzer's docs suggest, enough for symbolized stacks, and a
# shorter compile than -O2 -g on two cores. The same tree builds podium_unit_tests under
# ASan+UBSan (tests/CMakeLists.txt): the test command runs it, so the libraries compile once for
# both. scripts/build.sh adds Ninja, mold and ccache.
# PODIUM_FUZZ_SKIP_BUILD=1: the caller built the targets already (bench/reliability runs several
# targets at once from one build directory, which concurrent builds would corrupt).
if [ "${PODIUM_FUZZ_SKIP_BUILD:-}" != 1 ]; then
  extra=()
  [ "${1:-}" = "--build-only" ] && extra=("${@:2}")
  CXX=clang++ ./scripts/build.sh "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DPODIUM_UNIT_ONLY=ON -DPODIUM_FUZZ=ON -DPODIUM_BENCH=OFF "${extra[@]}"
fi
[ "${1:-}" = "--build-only" ] && exit 0

targets=$(ls fuzz/*_fuzzer.cpp | xargs -n1 basename | sed 's/\.cpp$//')
if [ $# -ge 1 ]; then targets="$1"; seconds_each="${2:-$seconds_each}"; fi

mkdir -p build/fuzz-artifacts
# One target: replay its committed corpus, then fuzz it. Prints its result; non-zero on a failure.
fuzz_one() {
  local t="$1" seeds work max_len execs took runs
  seeds="fuzz/corpus/$t"
  work="build/fuzz-corpus/$t"
  mkdir -p "$work" "$seeds"
  # 1. Replay: every committed input must pass.
  if ! "$build/fuzz/$t" -runs=0 "$seeds" >"build/fuzz-artifacts/$t.replay.log" 2>&1; then
    echo "fuzz: $t failed on its committed corpus:"; tail -30 "build/fuzz-artifacts/$t.replay.log"; return 1
  fi
  # 2. Fuzz for a bounded time from the seeds and what earlier runs found.
  runs=()
  [ -n "${PODIUM_FUZZ_RUNS:-}" ] && runs=(-runs="$PODIUM_FUZZ_RUNS")
  # The largest input worth trying. 64 KB by default; two targets get a bound near the largest
  # real input, because libFuzzer grows inputs towards the bound and these two slow down 3-4
  # times on long ones without reaching new code: a server config (deploy/podium.example.yaml,
  # every key documented, is 7.5 KB) and an accelerator with its mesh axes (under 1 KB).
  max_len=65536
  case "$t" in
    config_yaml_fuzzer) max_len=16384 ;;
    accelerator_mesh_fuzzer) max_len=4096 ;;
  esac
  if "$build/fuzz/$t" "${runs[@]}" -max_total_time="$seconds_each" \
       -timeout="${PODIUM_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
       -max_len="$max_len" -artifact_prefix="build/fuzz-artifacts/$t-" -print_final_stats=1 \
       "$work" "$seeds" >"build/fuzz-artifacts/$t.log" 2>&1; then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build/fuzz-artifacts/$t.log" | grep -o '[0-9]*$' || echo "?")
    took=$(grep -o 'Done [0-9]* runs in [0-9]* second' "build/fuzz-artifacts/$t.log" | grep -o '[0-9]* second' | grep -o '[0-9]*' || echo "$seconds_each")
    echo "fuzz: $t ok: $execs executions in ${took} s, 0 crashes"
  else
    echo "fuzz: $t FAILED:"; grep -E "ERROR|SUMMARY|Test unit written" "build/fuzz-artifacts/$t.log" | head -10; return 1
  fi
}

# PODIUM_FUZZ_PARALLEL=N: N targets at a time (libFuzzer runs one process on one core; the test
# command uses every core). Each target's line is printed whole when it ends.
parallel="${PODIUM_FUZZ_PARALLEL:-1}"
status=0
pids=()
outs=()
for t in $targets; do
  out="build/fuzz-artifacts/$t.summary"
  fuzz_one "$t" >"$out" 2>&1 &
  pids+=($!)
  outs+=("$out")
  if [ "${#pids[@]}" -ge "$parallel" ]; then
    wait "${pids[0]}" || status=1
    cat "${outs[0]}"
    pids=("${pids[@]:1}")
    outs=("${outs[@]:1}")
  fi
done
for k in "${!pids[@]}"; do
  wait "${pids[$k]}" || status=1
  cat "${outs[$k]}"
done
exit $status
