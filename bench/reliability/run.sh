#!/usr/bin/env bash
# Reliability scenarios: crash soak, database outages under load, hostile clients, long fuzz runs.
#
#   bench/reliability/run.sh                 full run; writes bench/results/reliability.json
#   bench/reliability/run.sh --ci            5-kill soak + 1 outage; non-zero on any loss
#   bench/reliability/run.sh --scenarios hostile --idle-connections 5000
#   bench/reliability/run.sh --fuzz-seconds 3600   adds scripts/fuzz.sh TARGET 3600 per target
#
# Binaries from $PODIUM_BIN_DIR (default build/rel/bin; scripts/build.sh build/rel builds them).
# Needs PostgreSQL 15 (scripts/test-postgres.sh) and the project's Python environment (.venv from
# scripts/setup.sh: the reference workload on JAX, which the agents here run).
# Everything it starts (PostgreSQL clusters, servers, agents, ranks) is stopped when it exits,
# also on failure or Ctrl-C. See docs/reliability.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# 5,000 idle connections and the server's own files: raise the open-file limit (children
# inherit it).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
root="$(cd "$here/../.." && pwd)"
exec "${PODIUM_VENV:-$root/.venv}/bin/python" "$here/reliability.py" "$@"
