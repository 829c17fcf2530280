#!/usr/bin/env bash
# README command 1: installs what is missing, builds (Release), and runs Podium on its embedded
# default: podium-server with its own PostgreSQL in ./var, a local demo cluster of worker agents
# (when the worker is built), the dashboard URL and an admin token printed. Ctrl-C stops it all.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

./scripts/setup.sh
if [ -f web/package.json ]; then (cd web && npm run --silent build); fi
# A unity build (CMake combines each library's sources into a few translation units): the
# first build compiles the heavy headers (Asio, Beast, nlohmann-json) once per batch instead of
# once per file, which on two cores is most of a new user's wait (docs/benchmarks.md,
# quickstart). Development builds (scripts/test.sh) stay per-file for quick rebuilds.
./scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release -DPODIUM_BENCH=OFF -DPODIUM_TESTS=OFF \
  -DCMAKE_UNITY_BUILD=ON
bin="$root/build/release/bin"

export PODIUM_DATA_DIR="${PODIUM_DATA_DIR:-$root/var}"
# As root, the embedded PostgreSQL runs as the unprivileged 'postgres' account, which must be
# able to reach the data directory. A checkout under a private home (e.g. /root) is not
# reachable: keep the state under /var/lib/podium instead and say so.
if [ "$(id -u)" -eq 0 ] && id postgres >/dev/null 2>&1; then
  mkdir -p "$PODIUM_DATA_DIR"
  if ! runuser -u postgres -- test -x "$PODIUM_DATA_DIR" 2>/dev/null; then
    PODIUM_DATA_DIR="/var/lib/podium/$(printf '%s' "$root" | sha256sum | cut -c1-12)"
    echo "run: the postgres account cannot reach $root; state goes to $PODIUM_DATA_DIR"
  fi
fi
export PODIUM_LISTEN="${PODIUM_LISTEN:-127.0.0.1:8080}"
mkdir -p "$PODIUM_DATA_DIR"
chmod 711 "$PODIUM_DATA_DIR"
# The admin token is chosen here on the first start and kept (mode 600) so that every start of
# the demo can print it; the server stores only its hash.
token_file="$PODIUM_DATA_DIR/admin-token"
if [ ! -s "$token_file" ]; then
  (umask 077 && head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' | sed 's/^/pdm_/' > "$token_file")
fi
export PODIUM_ADMIN_TOKEN="$(cat "$token_file")"
url="http://$PODIUM_LISTEN"

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

"$bin/podium-server" > "$PODIUM_DATA_DIR/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do
  if curl -fsS "$url/readyz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "${pids[0]}" 2>/dev/null; then
    echo "podium-server exited; last lines of $PODIUM_DATA_DIR/server.log:" >&2
    tail -20 "$PODIUM_DATA_DIR/server.log" >&2
    exit 1
  fi
  sleep 0.5
done
curl -fsS "$url/readyz" >/dev/null

if [ -x "$bin/podium-worker" ] && [ -x scripts/demo-cluster.sh ]; then
  PODIUM_SERVER="$url" PODIUM_TOKEN="$PODIUM_ADMIN_TOKEN" PODIUM_BIN_DIR="$bin" ./scripts/demo-cluster.sh pids.tmp
  while read -r p; do pids+=("$p"); done < pids.tmp
  rm -f pids.tmp
fi

cat <<MSG

Podium is running (embedded PostgreSQL in $PODIUM_DATA_DIR).
  dashboard:          $url/login   (sign in with the admin token below)
  API:                $url/api/v1
  admin token:        $PODIUM_ADMIN_TOKEN
  server log:         $PODIUM_DATA_DIR/server.log

Try:  export PODIUM_SERVER=$url PODIUM_TOKEN=$PODIUM_ADMIN_TOKEN
      $bin/podium clusters list
      $bin/podium runs submit -f examples/reference.yaml     # the demo cluster runs it
      $bin/podium logs <run id> -f                            # follow it live
Press Ctrl-C to stop.
MSG
wait "${pids[0]}"
