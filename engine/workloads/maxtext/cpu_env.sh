#!/bin/sh
# Run a command with Podium's JAX variables translated into what MaxText 0.2.0 reads on CPU.
#
# With hardware=cpu, maxtext.utils.max_utils.initialize_jax_for_cpu calls
#   jax.distributed.initialize(coordinator_address=gethostbyname($JAX_COORDINATOR_ADDRESS) + ":1234",
#                              process_id=$JOB_INDEX * $PROCESSES_IN_JOB + $JOB_COMPLETION_INDEX,
#                              num_processes=$JAX_PROCESS_COUNT)
# i.e. it wants a bare host name (a "host:port" value fails gethostbyname 50 times, 5 s apart),
# always uses port 1234, and ignores JAX_PROCESS_ID. Podium sets JAX_COORDINATOR_ADDRESS=host:port,
# JAX_PROCESS_COUNT and JAX_PROCESS_ID; this maps them (one job: JOB_INDEX=0). Podium's port is
# dropped because MaxText cannot take one: port 1234 must be free on the coordinator host.
#
# Usage: cpu_env.sh python3 -m maxtext.trainers.pre_train.train tiny.yml run_name=... key=value ...
set -eu
: "${JAX_COORDINATOR_ADDRESS:?Podium sets JAX_COORDINATOR_ADDRESS=host:port}"
: "${JAX_PROCESS_COUNT:?Podium sets JAX_PROCESS_COUNT}"
: "${JAX_PROCESS_ID:?Podium sets JAX_PROCESS_ID}"
# host:port -> host (MaxText resolves it with socket.gethostbyname, IPv4 only).
host=${JAX_COORDINATOR_ADDRESS%:*}
JAX_COORDINATOR_ADDRESS=$host
JOB_INDEX=0
JOB_COMPLETION_INDEX=$JAX_PROCESS_ID
PROCESSES_IN_JOB=$JAX_PROCESS_COUNT
export JAX_COORDINATOR_ADDRESS JOB_INDEX JOB_COMPLETION_INDEX PROCESSES_IN_JOB
echo "cpu_env.sh: MaxText coordinator ${host}:1234, process ${JOB_COMPLETION_INDEX} of ${PROCESSES_IN_JOB}" >&2
exec "$@"
