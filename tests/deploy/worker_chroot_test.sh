#!/usr/bin/env bash
# The portable podium-worker on an older system that has none of Podium's libraries: a minimal
# root filesystem of a Debian release (debootstrap --variant=minbase: libc, libstdc++, apt, no
# OpenSSL 3, libsodium, spdlog or fmt), as on a TPU VM or a MaxText image. By default Debian 11
# (glibc 2.31, the floor scripts/build-portable-worker.sh links against; Ubuntu 20.04 has the
# same). Inside it the agent prints --version, reports a bad flag from a C++ exception, then
# registers (over https by default) with a podium-server on this host (a chroot shares the host's
# loopback), must appear in GET /api/v1/clusters/{id}/workers, and runs a `command` run (echo) to
# success, its output read back from GET /api/v1/runs/{id}/logs. Prints the chroot's glibc and
# the times.
#
# Opt-in, not part of scripts/test.sh: it needs root, debootstrap and deb.debian.org on the first
# run (about 100 MB). The root filesystem is cached as build/chroot/<suite>-minbase.tar.zst, so a
# rerun only unpacks it.
#
# Usage (root): tests/deploy/worker_chroot_test.sh
#   PODIUM_CHROOT_SUITE    Debian release (default bullseye, glibc 2.31; bookworm, 2.36, checks
#                          the build host's own); the worker needs the glibc that
#                          scripts/build-portable-worker.sh prints
#   PODIUM_CHROOT_MIRROR   default http://deb.debian.org/debian (http://archive.debian.org/debian
#                          for releases moved there)
#   PODIUM_CHROOT_TLS      1 (default): the server serves https with a certificate from a test CA
#                          (openssl), which the worker trusts by PODIUM_CA_FILE, so the static
#                          OpenSSL is checked too; 0: plain http
#   PODIUM_PORTABLE_WORKER the binary (default build/portable/dist/podium-worker, built if absent)
#   PODIUM_BIN_DIR         where podium-server (and the normal podium-worker) are: build/test/bin
#   PODIUM_TEST_DATABASE_URL  the server's PostgreSQL (default: its embedded one)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
suite="${PODIUM_CHROOT_SUITE:-bullseye}"
mirror="${PODIUM_CHROOT_MIRROR:-http://deb.debian.org/debian}"
bin_dir="${PODIUM_BIN_DIR:-$root/build/test/bin}"
worker="${PODIUM_PORTABLE_WORKER:-$root/build/portable/dist/podium-worker}"
tls="${PODIUM_CHROOT_TLS:-1}"
cache="$root/build/chroot/$suite-minbase.tar.zst"
started=$SECONDS

fail() { echo "worker_chroot_test: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (chroot, mount)"
command -v debootstrap >/dev/null || [ -s "$cache" ] || fail "needs debootstrap (apt-get install debootstrap)"
[ -x "$bin_dir/podium-server" ] || fail "no $bin_dir/podium-server (scripts/build.sh build/test ...)"
[ -x "$worker" ] || "$root/scripts/build-portable-worker.sh"

mkdir -p "$root/build/chroot"
work="$(mktemp -d "$root/build/chroot/run.XXXXXX")"
rootfs="$work/rootfs"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  mountpoint -q "$rootfs/proc" && umount "$rootfs/proc"
  rm -rf "$work"
}
trap cleanup EXIT

# The root filesystem: debootstrap once, then the cached tarball.
t0=$SECONDS
if [ ! -s "$cache" ]; then
  mkdir -p "$rootfs"
  debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; fail "debootstrap $suite"; }
  tar -C "$rootfs" --zstd -cf "$cache.tmp" . && mv "$cache.tmp" "$cache"
  how="debootstrap $suite"
else
  mkdir -p "$rootfs"
  tar -C "$rootfs" --zstd -xf "$cache"
  how="unpacked $cache"
fi
# awk reads all of ldd's output: with head, ldd could die of SIGPIPE and pipefail stop the test.
chroot_glibc="$(chroot "$rootfs" ldd --version | awk 'NR == 1 {print $NF}')"
echo "worker_chroot_test: root filesystem ready in $((SECONDS - t0)) s ($how, glibc $chroot_glibc)"
mount -t proc proc "$rootfs/proc"
# debootstrap writes no /etc/hosts; every installed system has this line, and the worker
# resolves localhost (the server certificate's name) through the chroot's own glibc.
grep -q -w localhost "$rootfs/etc/hosts" 2>/dev/null || echo "127.0.0.1 localhost" >> "$rootfs/etc/hosts"
install -m 755 "$worker" "$rootfs/usr/local/bin/podium-worker"

# The chroot is a real test: the normal build's worker, linked against the host's shared
# libraries, cannot even start there.
if [ -x "$bin_dir/podium-worker" ]; then
  install -m 755 "$bin_dir/podium-worker" "$rootfs/usr/local/bin/podium-worker-dynamic"
  if chroot "$rootfs" /usr/local/bin/podium-worker-dynamic --help > "$work/dynamic.out" 2>&1; then
    fail "the normal podium-worker started in the chroot: it proves nothing about the portable one"
  fi
  echo "worker_chroot_test: normal build in the chroot: $(head -1 "$work/dynamic.out")"
fi

t0=$(date +%s%N)
version="$(chroot "$rootfs" /usr/local/bin/podium-worker --version)" || fail "--version in the chroot"
startup_ms=$((($(date +%s%N) - t0) / 1000000))
case "$version" in "podium-worker "*) ;; *) fail "--version printed '$version'" ;; esac
echo "worker_chroot_test: chroot --version: $version ($startup_ms ms including chroot;" \
  "binary $(du -h "$worker" | cut -f1))"
# A flag without its value is reported from a C++ exception (CLI11's): the unwinder finds its
# tables through engine/worker/portable/dl_find_object.cpp on a glibc older than 2.35.
status=0
chroot "$rootfs" /usr/local/bin/podium-worker --cluster > "$work/throw.out" 2>&1 || status=$?
[ "$status" -eq 2 ] && grep -q -- '--cluster needs a value' "$work/throw.out" ||
  fail "a C++ exception in the chroot: exit $status, $(head -2 "$work/throw.out")"
echo "worker_chroot_test: chroot C++ exception caught: $(head -1 "$work/throw.out") (exit 2)"

# A server on this host, on a free loopback port.
admin="pdm_$(head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
server_env=(PODIUM_LISTEN=127.0.0.1:0 PODIUM_ADMIN_TOKEN="$admin")
if [ -n "${PODIUM_TEST_DATABASE_URL:-}" ]; then
  server_env+=(PODIUM_DATABASE_URL="$PODIUM_TEST_DATABASE_URL")
else
  mkdir -p "$work/server-data" && chmod 711 "$work" "$work/server-data"
  server_env+=(PODIUM_DATA_DIR="$work/server-data")
fi
server_args=()
curl_tls=()
worker_env=()
if [ "$tls" = 1 ]; then
  # A CA and a server certificate it signed for localhost (as tests/e2e/tls_test.cpp does).
  pki="$work/pki"
  mkdir -p "$pki"
  printf '%s\n' subjectAltName=DNS:localhost,IP:127.0.0.1 basicConstraints=CA:FALSE \
    keyUsage=digitalSignature,keyEncipherment extendedKeyUsage=serverAuth > "$pki/ext.cnf"
  ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  (cd "$pki" && openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 2 -subj "/CN=Podium chroot CA" &&
    openssl req "${ec[@]}" -keyout server.key -out server.csr -subj /CN=localhost &&
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
      -days 2 -extfile ext.cnf) > "$pki/openssl.log" 2>&1 || { cat "$pki/openssl.log" >&2; fail "openssl"; }
  server_args=(--set "tls.cert_file=$pki/server.pem" --set "tls.key_file=$pki/server.key")
  curl_tls=(--cacert "$pki/ca.pem")
  install -m 644 "$pki/ca.pem" "$rootfs/etc/podium-test-ca.pem"
  worker_env=(PODIUM_CA_FILE=/etc/podium-test-ca.pem)
fi
# Created here: the background shell opens it later, and the first read below may come first.
: > "$work/server.out"
env "${server_env[@]}" "$bin_dir/podium-server" "${server_args[@]}" > "$work/server.out" 2> "$work/server.log" &
pids+=($!)
url=""
for _ in $(seq 1 240); do
  # By the certificate's name over https.
  url="$(sed -n 's/^podium-server listening on //p' "$work/server.out" | sed 's|^https://127\.0\.0\.1:|https://localhost:|')"
  [ -n "$url" ] && curl -fsS "${curl_tls[@]}" "$url/readyz" >/dev/null 2>&1 && break
  kill -0 "${pids[0]}" 2>/dev/null || { tail -20 "$work/server.log" >&2; fail "podium-server exited"; }
  sleep 0.5
done
curl -fsS "${curl_tls[@]}" "$url/readyz" >/dev/null || fail "podium-server not ready at '$url'"
echo "worker_chroot_test: podium-server at $url"

api() {  # api METHOD PATH [JSON] -> body; fails on a status other than 200/201
  local args=(-sS "${curl_tls[@]}" -X "$1" -H "Authorization: Bearer $admin" -o "$work/body" -w '%{http_code}')
  [ -n "${3:-}" ] && args+=(-H 'Content-Type: application/json' --data "$3")
  local status
  status="$(curl "${args[@]}" "$url$2")"
  case "$status" in 200 | 201) cat "$work/body" ;; *) fail "$1 $2: $status $(cat "$work/body")" ;; esac
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

cluster="chroot-$suite-$$-$RANDOM"
api POST /api/v1/clusters \
  "{\"name\":\"$cluster\",\"accelerator\":\"cpu-1\",\"num_slices\":1,\"capacity\":\"on-demand\"}" >/dev/null
token="$(api POST "/api/v1/clusters/$cluster/worker-tokens" | json "d['token']")"

# The token by environment (docs/operations.md); no Python in the image, so no software report.
env PODIUM_TOKEN="$token" "${worker_env[@]}" chroot "$rootfs" /usr/local/bin/podium-worker --server "$url" \
  --cluster "$cluster" --slice 0 --host 0 --workdir /var/lib/podium-worker --address 127.0.0.1 \
  --hostname chroot-host --run-as root --python none --metadata-url none \
  > "$work/worker.out" 2> "$work/worker.log" &
pids+=($!)
listed=""
for _ in $(seq 1 60); do
  listed="$(api GET "/api/v1/clusters/$cluster/workers" |
    json "' '.join(w['hostname'] for w in d['items'] if w['slice'] == 0 and w['host'] == 0)")"
  [ "$listed" = chroot-host ] && break
  kill -0 "${pids[1]}" 2>/dev/null || { tail -20 "$work/worker.log" >&2; fail "the worker exited"; }
  sleep 0.5
done
[ "$listed" = chroot-host ] || { tail -20 "$work/worker.log" >&2; fail "the worker never appeared in GET /api/v1/clusters/$cluster/workers"; }
echo "worker_chroot_test: registered from the chroot: $(head -1 "$work/worker.out")"

# One rank through the whole path: the agent claims it, spawns echo as --run-as, streams its
# output back and reports the exit code.
greeting="hello from $suite glibc $chroot_glibc"
run="$(api POST /api/v1/runs "{\"name\":\"chroot-echo-$$-$RANDOM\",\"cluster\":\"$cluster\",\"workload\":\"command\",\"command\":[\"/bin/echo\",\"$greeting\"],\"max_restarts\":0}" |
  json "d['id']")"
t0=$(date +%s%N)
state=""
for _ in $(seq 1 240); do
  state="$(api GET "/api/v1/runs/$run" | json "d['state']")"
  case "$state" in succeeded | failed | cancelled) break ;; esac
  kill -0 "${pids[1]}" 2>/dev/null || { tail -20 "$work/worker.log" >&2; fail "the worker exited"; }
  sleep 0.5
done
[ "$state" = succeeded ] || { tail -20 "$work/worker.log" >&2; fail "run $run ended '$state', not succeeded"; }
lines="$(api GET "/api/v1/runs/$run/logs?rank=0" | json "'\\n'.join(i['line'] for i in d['items'])")"
grep -q -x -F "$greeting" <<<"$lines" || fail "run $run's log has no '$greeting': $lines"
echo "worker_chroot_test: command run $run succeeded in the chroot $((($(date +%s%N) - t0) / 1000000)) ms after submission: $greeting"
echo "worker_chroot_test: PASS on $suite (glibc $chroot_glibc) in $((SECONDS - started)) s"
