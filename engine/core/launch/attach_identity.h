#pragma once
// Where one rank of an external engine's job sits in the gang, read from the environment that
// engine gives its tasks (docs/executors.md). Pure: the environment comes in as a lookup.
//
//   engine      | rank                                     | slice            | host
//   ------------+------------------------------------------+------------------+------------------
//   slurm       | SLURM_PROCID (one task per node)         | rank / hosts     | rank % hosts
//   kubernetes  | slice * hosts + host                     | PODIUM_SLICE     |
//   JOB_COMPLETION_INDEX
//               |                                          | (job-index label)| (else
//               TPU_WORKER_ID)
//
// Kubernetes with xpk's parallel containers (PODIUM_RANKS_PER_HOST = k > 1, tpu7x): each of a
// VM's k containers is a rank, PODIUM_RANK_IN_HOST = c its place; host = JOB_COMPLETION_INDEX * k
// + c (the rank's index in its slice), rank = slice * hosts * k + host, world = slices * hosts * k.
//
// hosts = PODIUM_HOSTS_PER_SLICE, slices = PODIUM_NUM_SLICES (set by Podium's submission). The
// world the engine reports (SLURM_NTASKS) must equal hosts * slices: a job resized behind
// Podium's back cannot form the gang Podium planned.

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace podium::core {

struct AttachIdentity {
  std::string engine;  // "slurm" | "kubernetes"
  int rank = 0;
  int world = 1;
  int slice = 0;
  int host = 0;
  std::string engine_job;      // SLURM_JOB_ID, or the JobSet's name
  std::string engine_restart;  // JobSet restart-attempt label ("" when none)
  std::string node;            // SLURMD_NODENAME, or the pod's HOSTNAME
};

struct AttachIdentityResult {
  std::optional<AttachIdentity> identity;
  std::string error;  // one line naming the variable at fault
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// engine: PODIUM_ENGINE, else detected (SLURM_PROCID present: slurm; JOB_COMPLETION_INDEX or
// TPU_WORKER_ID present: kubernetes).
AttachIdentityResult identify_rank(const EnvLookup& env);

// The body of POST /api/v1/agent/attach for this identity.
nlohmann::json to_json(const AttachIdentity& id);

}  // namespace podium::core
