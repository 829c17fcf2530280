#!/usr/bin/env bash
# A real two-node Slurm on this machine for the Slurm executor's tests (docs/executors.md):
# one munged, one slurmctld and two slurmd (nodes n1 and n2, each on its own port, both
# 127.0.0.1), all private to a state directory, all as root (SlurmUser=root,
# proctrack/linuxproc: no cgroups needed).
#
#   scripts/test-slurm.sh start   # prints the export lines: SLURM_CONF=... PODIUM_TEST_SLURM=1
#   scripts/test-slurm.sh stop
#   scripts/test-slurm.sh status
#
# The directory is $PODIUM_TEST_SLURM_DIR (default /tmp/podium-test-slurm). Ports come from a free
# range found at start. Commands (sbatch, squeue, scontrol, scancel) find this cluster through
# SLURM_CONF=<dir>/slurm.conf; nothing under /etc is changed.
set -euo pipefail

DIR=${PODIUM_TEST_SLURM_DIR:-/tmp/podium-test-slurm}
CONF="$DIR/slurm.conf"

die() { echo "test-slurm: $*" >&2; exit 1; }

need() {
  for c in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
    command -v "$c" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin" command -v "$c" >/dev/null 2>&1 ||
      die "$c not found: install slurm-wlm and munge (scripts/setup.sh does)"
  done
  export PATH="$PATH:/usr/sbin"
}

port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Four consecutive free ports from a range unlikely to collide with the other test services.
pick_ports() {
  local base
  for base in $(seq 46800 7 47400); do
    if port_free "$base" && port_free $((base + 1)) && port_free $((base + 2)); then
      echo "$base"
      return
    fi
  done
  die "no free ports in 46800..47400"
}

stop() {
  for f in "$DIR"/slurmd.n1.pid "$DIR"/slurmd.n2.pid "$DIR"/slurmctld.pid "$DIR"/munged.pid; do
    [ -f "$f" ] || continue
    local pid
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  # slurmd leaves slurmstepd children while a job step lingers: end them too.
  pkill -f "slurmstepd.*$DIR" 2>/dev/null || true
  for _ in $(seq 1 50); do
    local alive=0
    for f in "$DIR"/*.pid; do
      [ -f "$f" ] && kill -0 "$(cat "$f" 2>/dev/null)" 2>/dev/null && alive=1
    done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  rm -f "$DIR"/*.pid
}

start() {
  need
  stop
  mkdir -p "$DIR/state" "$DIR/spool.n1" "$DIR/spool.n2" "$DIR/munge" "$DIR/log"
  chmod 700 "$DIR/munge"
  if [ ! -s "$DIR/munge/munge.key" ]; then
    # A key of this cluster's own: 1024 random bytes, as mungekey makes.
    head -c 1024 /dev/urandom > "$DIR/munge/munge.key"
    chmod 400 "$DIR/munge/munge.key"
  fi
  munged --force --socket="$DIR/munge/munge.socket" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/munged.pid" --log-file="$DIR/log/munged.log" \
    --seed-file="$DIR/munge/munged.seed" 2>>"$DIR/log/munged.log" ||
    die "munged did not start: $(tail -3 "$DIR/log/munged.log")"

  local base
  base=$(pick_ports)
  local cpus
  cpus=$(nproc)
  cat > "$CONF" <<CONF
# Written by scripts/test-slurm.sh: a private two-node cluster on 127.0.0.1.
ClusterName=podiumtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$base
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool.%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/linear
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=1
SlurmdParameters=config_overrides
MinJobAge=600
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 1)) CPUs=$cpus State=UNKNOWN
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 2)) CPUs=$cpus State=UNKNOWN
PartitionName=podium Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
CONF
  export SLURM_CONF="$CONF"
  slurmctld -f "$CONF" 2>>"$DIR/log/slurmctld.stderr" || die "slurmctld did not start: $(tail -5 "$DIR/log/slurmctld.log" 2>/dev/null)"
  slurmd -f "$CONF" -N n1 2>>"$DIR/log/slurmd.stderr" || die "slurmd n1 did not start"
  slurmd -f "$CONF" -N n2 2>>"$DIR/log/slurmd.stderr" || die "slurmd n2 did not start"
  for _ in $(seq 1 150); do
    if [ "$(sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle')" = 2 ]; then
      echo "export SLURM_CONF=$CONF"
      return
    fi
    sleep 0.2
  done
  sinfo -N 2>&1 >&2 || true
  tail -20 "$DIR/log/slurmctld.log" >&2 || true
  die "the two nodes did not become idle within 30 s"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) need; SLURM_CONF="$CONF" sinfo -N ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
