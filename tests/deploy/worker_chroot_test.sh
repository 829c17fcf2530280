#!/usr/bin/env bash
# The portable podium-worker on a system that has none of Podium's libraries: a minimal root
# filesystem of a Debian release (debootstrap --variant=minbase: libc, libstdc++, apt, no
# OpenSSL 3, libsodium, spdlog or fmt), as on a TPU VM or a MaxText image. Inside it the agent
# prints --version, then registers with a podium-server on this host (a chroot shares the
# host's loopback) and must appear in GET /api/v1/clusters/{id}/workers.
#
# Opt-in, not part of scripts/test.sh: it needs root, debootstrap and deb.debian.org on the first
# run (about 100 MB). The root filesystem is cached as build/chroot/<suite>-minbase.tar.zst, so a
# rerun only unpacks it.
#
# Usage (root): tests/deploy/worker_chroot_test.sh
#   PODIUM_CHROOT_SUITE    Debian release (default bookworm, glibc 2.36); the worker needs the
#                          glibc that scripts/build-portable-worker.sh prints
#   PODIUM_CHROOT_MIRROR   default http://deb.debian.org/debian
#   PODIUM_PORTABLE_WORKER the binary (default build/portable/dist/podium-worker, built if absent)
#   PODIUM_BIN_DIR         where podium-server (and the normal podium-worker) are: build/test/bin
#   PODIUM_TEST_DATABASE_URL  the server's PostgreSQL (default: its embedded one)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
suite="${PODIUM_CHROOT_SUITE:-bookworm}"
mirror="${PODIUM_CHROOT_MIRROR:-http://deb.debian.org/debian}"
bin_dir="${PODIUM_BIN_DIR:-$root/build/test/bin}"
worker="${PODIUM_PORTABLE_WORKER:-$root/build/portable/dist/podium-worker}"
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
echo "worker_chroot_test: root filesystem ready in $((SECONDS - t0)) s ($how," \
  "glibc $(chroot "$rootfs" ldd --version | head -1 | awk '{print $NF}'))"
mount -t proc proc "$rootfs/proc"
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

version="$(chroot "$rootfs" /usr/local/bin/podium-worker --version)" || fail "--version in the chroot"
case "$version" in "podium-worker "*) ;; *) fail "--version printed '$version'" ;; esac
echo "worker_chroot_test: chroot --version: $version"

# A server on this host, on a free loopback port.
admin="pdm_$(head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
server_env=(PODIUM_LISTEN=127.0.0.1:0 PODIUM_ADMIN_TOKEN="$admin")
if [ -n "${PODIUM_TEST_DATABASE_URL:-}" ]; then
  server_env+=(PODIUM_DATABASE_URL="$PODIUM_TEST_DATABASE_URL")
else
  mkdir -p "$work/server-data" && chmod 711 "$work" "$work/server-data"
  server_env+=(PODIUM_DATA_DIR="$work/server-data")
fi
env "${server_env[@]}" "$bin_dir/podium-server" > "$work/server.out" 2> "$work/server.log" &
pids+=($!)
url=""
for _ in $(seq 1 240); do
  url="$(sed -n 's/^podium-server listening on //p' "$work/server.out")"
  [ -n "$url" ] && curl -fsS "$url/readyz" >/dev/null 2>&1 && break
  kill -0 "${pids[0]}" 2>/dev/null || { tail -20 "$work/server.log" >&2; fail "podium-server exited"; }
  sleep 0.5
done
curl -fsS "$url/readyz" >/dev/null || fail "podium-server not ready at '$url'"

api() {  # api METHOD PATH [JSON] -> body; fails on a status other than 200/201
  local args=(-sS -X "$1" -H "Authorization: Bearer $admin" -o "$work/body" -w '%{http_code}')
  [ -n "${3:-}" ] && args+=(-H 'Content-Type: application/json' --data "$3")
  local status
  status="$(curl "${args[@]}" "$url$2")"
  case "$status" in 200 | 201) cat "$work/body" ;; *) fail "$1 $2: $status $(cat "$work/body")" ;; esac
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

cluster="chroot-$suite-$$-$RANDOM"
api POST /api/v1/clusters \
  "{\"name\":\"$cluster\",\"accelerator\":\"cpu-2x2\",\"num_slices\":1,\"capacity\":\"on-demand\"}" >/dev/null
token="$(api POST "/api/v1/clusters/$cluster/worker-tokens" | json "d['token']")"

# The token by environment (docs/operations.md); no Python in the image, so no software report.
PODIUM_TOKEN="$token" chroot "$rootfs" /usr/local/bin/podium-worker --server "$url" \
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
echo "worker_chroot_test: PASS in $((SECONDS - started)) s"
