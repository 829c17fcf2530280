#include "engine/core/launch/launch_env.h"

namespace podium::core {

const std::set<std::string, std::less<>>& gang_environment_keys() {
  // What MaxText's and JAX's multi-host initialisation read (jax.distributed.initialize on TPU
  // from TPU_WORKER_ID / TPU_WORKER_HOSTNAMES and MEGASCALE_* for multislice; on GPU
  // JAX_COORDINATOR_IP/PORT with NNODES, NODE_RANK, GPUS_PER_NODE; on CPU JOB_INDEX,
  // JOB_COMPLETION_INDEX, PROCESSES_IN_JOB, see maxtext_launch.h), torch.distributed's
  // variables, and Podium's own identity of the attempt.
  static const std::set<std::string, std::less<>> keys = {"JAX_COORDINATOR_ADDRESS",
                                                          "JAX_COORDINATOR_IP",
                                                          "JAX_COORDINATOR_PORT",
                                                          "JAX_PROCESS_COUNT",
                                                          "JAX_PROCESS_ID",
                                                          "JOB_INDEX",
                                                          "JOB_COMPLETION_INDEX",
                                                          "PROCESSES_IN_JOB",
                                                          "TPU_WORKER_ID",
                                                          "TPU_WORKER_HOSTNAMES",
                                                          "MEGASCALE_COORDINATOR_ADDRESS",
                                                          "MEGASCALE_NUM_SLICES",
                                                          "MEGASCALE_SLICE_ID",
                                                          "MEGASCALE_PORT",
                                                          "NODE_RANK",
                                                          "NNODES",
                                                          "GPUS_PER_NODE",
                                                          "MASTER_ADDR",
                                                          "MASTER_PORT",
                                                          "RANK",
                                                          "WORLD_SIZE",
                                                          "LOCAL_RANK",
                                                          "PODIUM_RUN_ID",
                                                          "PODIUM_RUN_NAME",
                                                          "PODIUM_ATTEMPT_ID",
                                                          "PODIUM_ATTEMPT_NUMBER"};
  return keys;
}

bool is_gang_environment_key(std::string_view name) {
  return gang_environment_keys().contains(name);
}

bool is_environment_name(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit))) return false;
  }
  return true;
}

}  // namespace podium::core
