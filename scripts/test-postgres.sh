#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for the integration and e2e tests.
#
#   scripts/test-postgres.sh start     initdb if needed, start, print the URL (idempotent)
#   scripts/test-postgres.sh url       print the URL of the running cluster
#   scripts/test-postgres.sh env       print "export PODIUM_TEST_DATABASE_URL=..."
#   scripts/test-postgres.sh status    exit 0 when running
#   scripts/test-postgres.sh pause     stop the server, keep data and port (tests: database down)
#   scripts/test-postgres.sh resume    start it again on the same port (tests: database back)
#   scripts/test-postgres.sh restart   pause + resume
#   scripts/test-postgres.sh stop      stop the server and delete the cluster
#
#   export PODIUM_TEST_DATABASE_URL=$(scripts/test-postgres.sh start)
#
# The cluster lives in $PODIUM_TEST_PG_DIR (default /tmp/podium-test-pg): data/, run/ (unix
# socket), postgres.log, port (see below when that directory does not suit PostgreSQL). It listens on 127.0.0.1 on a free port and on the socket, trusts
# every local connection, and trades durability for speed (fsync off): test data only.
# The URL is postgresql://postgres@127.0.0.1:PORT/podium_test. As root, PostgreSQL runs as the
# "postgres" account (it refuses root). Only the URL goes to stdout; messages go to stderr.
#
# Pausing a cluster stops it for every test using it: a test that takes the database down
# should start its own cluster with its own PODIUM_TEST_PG_DIR.
set -euo pipefail

REQUESTED=${PODIUM_TEST_PG_DIR:-/tmp/podium-test-pg}
# Relative to where the caller stands (the checks below run from /).
case $REQUESTED in /*) ;; *) REQUESTED=$PWD/$REQUESTED ;; esac
BIN=${PODIUM_PG_BIN_DIR:-/usr/lib/postgresql/15/bin}
DB=podium_test

say() { echo "test-postgres: $*" >&2; }
die() { say "$*"; exit 1; }

[ -x "$BIN/pg_ctl" ] || die "$BIN/pg_ctl not found: install postgresql-15 (scripts/setup.sh)"

# The cluster goes to $REQUESTED unless the database account cannot reach it (a checkout under
# /root when running as root) or the socket path would exceed the 107 bytes a unix socket may
# have; then to a directory under /tmp named after it, the same one at every invocation.
DIR=$REQUESTED
nearest=$REQUESTED
while [ ! -e "$nearest" ]; do nearest=$(dirname "$nearest"); done
if [ ${#REQUESTED} -gt 80 ] || { [ "$(id -u)" -eq 0 ] && ! (cd / && runuser -u postgres -- test -x "$nearest") 2>/dev/null; }; then
  DIR=/tmp/podium-test-pg-$(printf '%s' "$REQUESTED" | md5sum | cut -c1-16)
fi
DATA=$DIR/data
RUN=$DIR/run
LOG=$DIR/postgres.log
PORT_FILE=$DIR/port
MARKER=$DIR/.podium-test-pg

# Run as the database account: PostgreSQL refuses root. From / so that an unreadable current
# directory (/root) does not produce warnings. Without fd 9 (the lock): a postmaster that
# inherited it would hold the lock for its whole life.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root needs the 'postgres' account (install postgresql-15)"
    (cd / && runuser -u postgres -- "$@" 9>&-)
  else
    (cd / && "$@" 9>&-)
  fi
}

running() { [ -f "$DATA/PG_VERSION" ] && as_pg "$BIN/pg_ctl" status -D "$DATA" >/dev/null 2>&1; }

url() { echo "postgresql://postgres@127.0.0.1:$(cat "$PORT_FILE")/$DB"; }

# SO_REUSEADDR as PostgreSQL sets it: connections in TIME_WAIT after a stop do not make the
# port unusable for the next start.
port_free() {
  if command -v /usr/bin/python3 >/dev/null 2>&1; then
    /usr/bin/python3 -c 'import socket,sys
s=socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try: s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError: sys.exit(1)' "$1"
  else
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}

free_port() {
  if command -v /usr/bin/python3 >/dev/null 2>&1; then
    /usr/bin/python3 -c 'import socket
s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
  else
    local p
    for _ in $(seq 200); do
      p=$((20000 + RANDOM % 40000))
      if port_free "$p"; then echo "$p"; return; fi
    done
    die "no free port found"
  fi
}

# Serializes concurrent invocations (two CI jobs, parallel test processes).
lock() {
  mkdir -p "$DIR"
  exec 9>"$DIR/.lock"
  flock 9
}

init_cluster() {
  [ -f "$DATA/PG_VERSION" ] && return
  touch "$MARKER" "$LOG"
  # pg_ctl -l opens the log as the database account.
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$DIR" "$LOG"; fi
  as_pg test -w "$DIR" || die "$DIR is not writable by the database account (is a parent directory private?)"
  rm -rf "$DATA.tmp"
  mkdir -p "$RUN"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$RUN"; fi
  chmod 700 "$RUN"
  [ "$DIR" = "$REQUESTED" ] || say "$REQUESTED is out of the database account's reach or too long for a socket path: using $DIR"
  say "initdb in $DATA"
  as_pg "$BIN/initdb" -D "$DATA.tmp" -U postgres -E UTF8 --locale=C.UTF-8 -A trust --no-sync \
    --no-instructions >>"$LOG" 2>&1 || { tail -n 20 "$LOG" >&2; die "initdb failed"; }
  cat >>"$DATA.tmp/postgresql.conf" <<CONF

# scripts/test-postgres.sh: settings for tests (port and socket are passed at start)
listen_addresses = '127.0.0.1'
unix_socket_directories = '$RUN'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 300
CONF
  mv "$DATA.tmp" "$DATA"
}

# start_server strict: strict=1 keeps the stored port or fails (resume must not change the URL).
start_server() {
  local strict=$1 port=""
  [ -f "$PORT_FILE" ] && port=$(cat "$PORT_FILE")
  if running; then return; fi
  if [ -n "$port" ] && ! port_free "$port"; then
    [ "$strict" = 1 ] && die "port $port is taken by another process; cannot resume on the same URL"
    say "port $port is taken; choosing another"
    port=""
  fi
  [ -n "$port" ] || port=$(free_port)
  echo "$port" >"$PORT_FILE"
  # A postmaster.pid left by a killed server names a dead (or reused) pid.
  if [ -f "$DATA/postmaster.pid" ]; then
    local pid
    pid=$(head -n1 "$DATA/postmaster.pid")
    if ! [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = postgres ]; then
      say "removing stale postmaster.pid (pid $pid)"
      rm -f "$DATA/postmaster.pid" "$RUN"/.s.PGSQL.*
    fi
  fi
  as_pg "$BIN/pg_ctl" start -D "$DATA" -l "$LOG" -w -t 60 -o "-p $port" >/dev/null 2>>"$LOG" \
    || { tail -n 20 "$LOG" >&2; die "pg_ctl start failed (log: $LOG)"; }
  if ! as_pg "$BIN/psql" -X -h "$RUN" -p "$port" -U postgres -d postgres -tAc \
       "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
    as_pg "$BIN/createdb" -h "$RUN" -p "$port" -U postgres "$DB"
  fi
  say "running on 127.0.0.1:$port (data $DATA)"
}

stop_server() {
  if running; then
    as_pg "$BIN/pg_ctl" stop -D "$DATA" -m fast -w -t 60 >/dev/null 2>>"$LOG" \
      || as_pg "$BIN/pg_ctl" stop -D "$DATA" -m immediate -w >/dev/null 2>>"$LOG"
    say "stopped"
  fi
}

cmd=${1:-}
case "$cmd" in
  start)
    lock
    init_cluster
    start_server 0
    url
    ;;
  url)
    running || die "not running (scripts/test-postgres.sh start)"
    url
    ;;
  env)
    running || die "not running (scripts/test-postgres.sh start)"
    echo "export PODIUM_TEST_DATABASE_URL=$(url)"
    ;;
  status)
    if running; then say "running: $(url)"; else say "not running"; exit 1; fi
    ;;
  pause)
    lock
    stop_server
    ;;
  resume)
    lock
    [ -f "$DATA/PG_VERSION" ] || die "no cluster in $DIR (scripts/test-postgres.sh start)"
    start_server 1
    url
    ;;
  restart)
    lock
    [ -f "$DATA/PG_VERSION" ] || die "no cluster in $DIR (scripts/test-postgres.sh start)"
    stop_server
    start_server 1
    url
    ;;
  stop)
    lock
    stop_server
    # Delete only what this script created.
    if [ -f "$MARKER" ]; then
      rm -rf "$DATA" "$DATA.tmp" "$RUN" "$PORT_FILE" "$LOG" "$MARKER" "$DIR/.lock"
      rmdir "$DIR" 2>/dev/null || true
    fi
    ;;
  *)
    echo "usage: $0 start|url|env|status|pause|resume|restart|stop" >&2
    exit 2
    ;;
esac
