#!/usr/bin/env bash
# The property-based API test: schemathesis generates requests for every operation of
# docs/openapi.yaml (its examples, the boundaries of every schema, then random valid and invalid
# data) against a live podium-server, and fails on any 5xx and on any response whose status,
# Content-Type or body the document does not describe.
#
#   tests/contract/schemathesis.sh            (scripts/test.sh runs it)
#
# Needs: the built podium-server ($PODIUM_BIN_DIR, default build/test/bin), the test PostgreSQL
# ($PODIUM_TEST_DATABASE_URL, from scripts/test-postgres.sh) and schemathesis in the project's
# Python environment ($PODIUM_VENV, default .venv; `scripts/setup.sh --tools` installs it from
# requirements/tools.txt). The server gets a database of its own, dropped at the end.
#
# Knobs: PODIUM_SCHEMATHESIS_EXAMPLES (test cases per operation and phase, default 12),
# PODIUM_SCHEMATHESIS_SEED (default: fixed, so that CI runs are reproducible), and any further
# arguments, passed to `schemathesis run` (e.g. --include-operation-id getRun).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin_dir="${PODIUM_BIN_DIR:-$root/build/test/bin}"
venv="${PODIUM_VENV:-$root/.venv}"
pg_bin="${PODIUM_PG_BIN_DIR:-/usr/lib/postgresql/15/bin}"
examples="${PODIUM_SCHEMATHESIS_EXAMPLES:-12}"
seed="${PODIUM_SCHEMATHESIS_SEED:-29}"
extra=("$@")
say() { printf 'schemathesis.sh: %s\n' "$*" >&2; }

[ -x "$bin_dir/podium-server" ] || { say "no $bin_dir/podium-server (build first)"; exit 1; }
[ -n "${PODIUM_TEST_DATABASE_URL:-}" ] || {
  say "PODIUM_TEST_DATABASE_URL is not set (scripts/test-postgres.sh start)"; exit 1; }

[ -x "$venv/bin/schemathesis" ] || {
  say "no schemathesis in $venv: scripts/setup.sh --tools installs requirements/tools.txt"; exit 1; }

work="$(mktemp -d /tmp/podium-contract.XXXXXX)"
chmod 0755 "$work"
database="podium_contract_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  "$pg_bin/psql" -X -q "$PODIUM_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" \
    >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$pg_bin/psql" -X -q "$PODIUM_TEST_DATABASE_URL" -c "CREATE DATABASE $database" >/dev/null
# The same server, user and options, another database (the URL's path is the database name).
base="${PODIUM_TEST_DATABASE_URL%%\?*}"
options="${PODIUM_TEST_DATABASE_URL#"$base"}"
database_url="${base%/*}/$database$options"

# A free loopback port, then the server with a known admin token (first start, empty database).
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
token="pdm_contract$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
PODIUM_ADMIN_TOKEN="$token" "$bin_dir/podium-server" --listen "127.0.0.1:$port" \
  --database-url "$database_url" --data-dir "$work/data" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 600); do
  grep -q "podium-server listening on" "$work/server.log" && break
  kill -0 "$server_pid" 2>/dev/null || { say "podium-server exited:"; tail -40 "$work/server.log" >&2; exit 1; }
  sleep 0.1
done
grep -q "podium-server listening on" "$work/server.log" || {
  say "podium-server not ready within 60 s:"; tail -40 "$work/server.log" >&2; exit 1; }

# Every operation as the admin (the role that may call all but the agent protocol, whose 403s
# the document states). Checks: no 5xx; status, Content-Type and body as documented. One worker:
# Hypothesis parses Python source in threads, which CPython 3.11 does not always survive.
run_schemathesis() {
  # In the scratch directory: schemathesis keeps a cache (.schemathesis/) where it runs.
  (cd "$work" && PYTHONPATH="$root/tests/contract" SCHEMATHESIS_HOOKS=schemathesis_hooks \
    "$venv/bin/schemathesis" run "$root/docs/openapi.yaml" \
    --url "http://127.0.0.1:$port" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --phases examples,coverage,fuzzing \
    --max-examples "$examples" --seed "$seed" \
    --workers 1 --request-timeout 30 --no-shrink \
    --suppress-health-check all \
    "$@")
}
status=0
# Revoking tokens is left to a pass of its own: schemathesis reuses ids it has seen in answers,
# and the admin's token revoked midway would turn every later request into a 401.
run_schemathesis --header "Authorization: Bearer $token" --exclude-operation-id revokeToken \
  --report junit --report-junit-path "$work/junit.xml" "${extra[@]}" || status=$?
# POST to the server as the admin (body $2, none when empty); prints the answer's member $3.
api_post() {
  python3 - "http://127.0.0.1:$port$1" "$token" "$2" "$3" <<'PY'
import json, sys, urllib.request
url, token, body, member = sys.argv[1:]
headers = {"Authorization": "Bearer " + token}
if body:
    headers["Content-Type"] = "application/json"
request = urllib.request.Request(url, method="POST", data=body.encode() or None, headers=headers)
print(json.load(urllib.request.urlopen(request, timeout=30))[member])
PY
}
# That pass, as another admin whose token it may revoke (401 from then on is documented).
revoker_token="$(api_post /api/v1/users '{"username":"contract-revoker","role":"admin"}' token)"
run_schemathesis --header "Authorization: Bearer $revoker_token" \
  --include-operation-id revokeToken "${extra[@]}" || status=$?
# The agent protocol answers the admin 403 only: once more as a worker of a cluster, so that its
# operations get past the access check.
api_post /api/v1/clusters '{"name":"contract","accelerator":"cpu-2"}' id >/dev/null
worker_token="$(api_post /api/v1/clusters/contract/worker-tokens '' token)"
run_schemathesis --header "Authorization: Bearer $worker_token" --include-tag agent \
  "${extra[@]}" || status=$?

if [ "$status" -ne 0 ]; then
  say "failed; the server's log ends:"
  tail -30 "$work/server.log" >&2
  grep -E '"level":"(error|critical)"|\[error\]|\[critical\]' "$work/server.log" | tail -20 >&2 || true
fi
exit "$status"
