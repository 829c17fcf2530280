#!/usr/bin/env bash
# The planner against real JAX/XLA (issue 26; docs/planner.md "Fidelity against JAX"):
#   bench/fidelity/run.sh [--fresh] [--jobs N] [--cached-only] [--reuse-mesh]
# builds planner_verdicts in build/test (or $PODIUM_BUILD_DIR), asks JAX and the planner every
# case of bench/fidelity/mesh_corpus.jsonl, compiles the HBM grid for TPU topologies on this CPU
# host (figures cached in bench/fidelity/compiled_cache.json; --fresh recompiles all, which takes
# minutes of CPU per case), and writes bench/results/fidelity.json and fidelity.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${PODIUM_BUILD_DIR:-$root/build/test}"
python="${PODIUM_PYTHON:-${PODIUM_VENV:-$root/.venv}/bin/python}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  "$root/scripts/build.sh" "$build" -DCMAKE_BUILD_TYPE=Debug -DPODIUM_BENCH=OFF
fi
cmake --build "$build" --target planner_verdicts >/dev/null
cd "$root"
exec "$python" bench/fidelity/report.py --planner "$build/bin/planner_verdicts" "$@"
