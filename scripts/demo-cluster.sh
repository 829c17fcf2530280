#!/usr/bin/env bash
# The local demo of README command 1: a `cpu-2x2` cluster named "demo" with 2 slices of 2 hosts
# (2 JAX devices each), a generated text dataset "demo-text", and 4 podium-worker agents on this
# machine, so that
#   podium runs submit -f examples/reference.yaml
# runs the reference workload at once. Idempotent: what exists is reused.
#
# Usage: PODIUM_SERVER=URL PODIUM_TOKEN=ADMIN_TOKEN PODIUM_BIN_DIR=DIR demo-cluster.sh PID_FILE
# Writes the workers' pids to PID_FILE (one per line). State goes to $PODIUM_DATA_DIR/demo.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pid_file="$1"
: "${PODIUM_SERVER:?}" "${PODIUM_TOKEN:?}" "${PODIUM_BIN_DIR:?}"
state="${PODIUM_DATA_DIR:-$root/var}/demo"
mkdir -p "$state"
# The project's Python environment (scripts/setup.sh): the agents report its jax and MaxText.
py="${PODIUM_VENV:-$root/.venv}/bin/python"

api() {  # api METHOD PATH [JSON] -> body on stdout, HTTP status in $status_file
  local method=$1 path=$2 body=${3:-}
  local args=(-sS -X "$method" -H "Authorization: Bearer $PODIUM_TOKEN" -o "$state/.body"
              -w '%{http_code}' "$PODIUM_SERVER$path")
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data "$body")
  curl "${args[@]}" > "$state/.status"
  cat "$state/.body"
}
status() { cat "$state/.status"; }
field() { $py -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

api GET /api/v1/clusters/demo >/dev/null
if [ "$(status)" = 404 ]; then
  api POST /api/v1/clusters '{"name":"demo","accelerator":"cpu-2x2","num_slices":2,"capacity":"on-demand","labels":{"purpose":"local demo"}}' >/dev/null
  [ "$(status)" = 201 ] || { echo "demo: cannot create cluster demo: $(cat "$state/.body")" >&2; exit 1; }
  echo "demo: created cluster demo (cpu-2x2: 2 slices x 2 hosts x 2 devices)"
fi

data="$state/demo-text.txt"
[ -s "$data" ] || $py "$root/engine/workloads/reference/make_dataset.py" "$data" --size 2M >/dev/null
api GET /api/v1/datasets/demo-text >/dev/null
if [ "$(status)" = 404 ]; then
  api POST /api/v1/datasets "{\"name\":\"demo-text\",\"uri\":\"$data\",\"format\":\"text\"}" >/dev/null
  [ "$(status)" = 201 ] || { echo "demo: cannot register dataset: $(cat "$state/.body")" >&2; exit 1; }
  echo "demo: registered dataset demo-text ($data)"
fi

# One worker token for the demo, kept (mode 600) so restarts reuse it.
token_file="$state/worker-token"
if [ ! -s "$token_file" ]; then
  token=$(api POST /api/v1/clusters/demo/worker-tokens | field token)
  (umask 077 && printf '%s' "$token" > "$token_file")
fi
worker_token=$(cat "$token_file")

: > "$pid_file"
for slice in 0 1; do
  for host in 0 1; do
    dir="$state/workers/slice$slice-host$host"
    mkdir -p "$dir"
    # The token goes by environment, not argv, where every local user could read it in ps.
    # The demo's ranks run as whoever started it (--run-as is required of an agent run as root;
    # on a shared host, name an unprivileged account: docs/operations.md).
    PODIUM_TOKEN="$worker_token" "$PODIUM_BIN_DIR/podium-worker" --server "$PODIUM_SERVER" \
      --cluster demo --slice "$slice" --host "$host" --workdir "$dir" --address 127.0.0.1 \
      --run-as "$(id -un)" --python "$py" --log-format text > "$dir/agent.out" 2> "$dir/agent.log" &
    echo $! >> "$pid_file"
  done
done
# Wait until the four agents registered (each prints one line when it did).
for _ in $(seq 1 60); do
  n=$(cat "$state"/workers/*/agent.out 2>/dev/null | grep -c 'registered as' || true)
  [ "$n" -ge 4 ] && break
  sleep 0.5
done
echo "demo: 4 workers running for cluster demo (logs in $state/workers/)"
