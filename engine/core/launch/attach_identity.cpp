#include "engine/core/launch/attach_identity.h"

#include <charconv>

namespace podium::core {

namespace {

std::optional<int> non_negative(const std::optional<std::string>& text) {
  if (!text || text->empty() || text->size() > 9) return std::nullopt;
  int v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

AttachIdentityResult identify_rank(const EnvLookup& env) {
  AttachIdentityResult out;
  auto fail = [&](std::string why) {
    out.error = std::move(why);
    return out;
  };
  std::string engine = env("PODIUM_ENGINE").value_or("");
  if (engine.empty()) {
    if (env("SLURM_PROCID"))
      engine = "slurm";
    else if (env("JOB_COMPLETION_INDEX") || env("TPU_WORKER_ID"))
      engine = "kubernetes";
    else
      return fail(
          "no engine environment: expected SLURM_PROCID (Slurm) or JOB_COMPLETION_INDEX "
          "(Kubernetes Indexed Job); podium-worker attach runs inside a job Podium submitted");
  }
  const auto hosts = non_negative(env("PODIUM_HOSTS_PER_SLICE"));
  const auto slices = non_negative(env("PODIUM_NUM_SLICES"));
  if (!hosts || *hosts < 1) return fail("PODIUM_HOSTS_PER_SLICE must be a positive integer");
  if (!slices || *slices < 1) return fail("PODIUM_NUM_SLICES must be a positive integer");
  AttachIdentity id;
  id.engine = engine;
  id.world = *hosts * *slices;
  int ranks_per_slice = *hosts;
  if (engine == "slurm") {
    const auto rank = non_negative(env("SLURM_PROCID"));
    if (!rank) return fail("SLURM_PROCID must be a non-negative integer");
    const auto ntasks = non_negative(env("SLURM_NTASKS"));
    if (!ntasks) return fail("SLURM_NTASKS must be a non-negative integer");
    if (*ntasks != id.world)
      return fail("SLURM_NTASKS is " + std::to_string(*ntasks) + " but the gang has " +
                  std::to_string(id.world) + " hosts (" + std::to_string(*slices) + " x " +
                  std::to_string(*hosts) + "): one task per node is required");
    id.rank = *rank;
    id.slice = id.rank / *hosts;
    id.host = id.rank % *hosts;
    id.engine_job = env("SLURM_JOB_ID").value_or("");
    id.node = env("SLURMD_NODENAME").value_or("");
  } else if (engine == "kubernetes") {
    auto host = non_negative(env("JOB_COMPLETION_INDEX"));
    if (!host) host = non_negative(env("TPU_WORKER_ID"));
    if (!host)
      return fail(
          "JOB_COMPLETION_INDEX (or TPU_WORKER_ID) must be a non-negative integer: the pod "
          "must belong to an Indexed Job");
    const auto slice =
        env("PODIUM_SLICE") ? non_negative(env("PODIUM_SLICE")) : std::optional<int>(0);
    if (!slice)
      return fail(
          "PODIUM_SLICE (the jobset.sigs.k8s.io/job-index label) must be a "
          "non-negative integer");
    // xpk's parallel containers: several ranks per VM (PODIUM_RANKS_PER_HOST, default 1), the
    // container's place on its VM in PODIUM_RANK_IN_HOST. `host` is then the rank's index
    // within its slice (TPU_WORKER_ID), not the VM's.
    const auto per_vm = env("PODIUM_RANKS_PER_HOST") ? non_negative(env("PODIUM_RANKS_PER_HOST"))
                                                     : std::optional<int>(1);
    if (!per_vm || *per_vm < 1) return fail("PODIUM_RANKS_PER_HOST must be a positive integer");
    const auto in_vm = env("PODIUM_RANK_IN_HOST") ? non_negative(env("PODIUM_RANK_IN_HOST"))
                                                  : std::optional<int>(0);
    if (!in_vm || *in_vm >= *per_vm)
      return fail("PODIUM_RANK_IN_HOST must be an integer from 0 to PODIUM_RANKS_PER_HOST - 1");
    ranks_per_slice = *hosts * *per_vm;
    id.world = ranks_per_slice * *slices;
    id.slice = *slice;
    id.host = *host * *per_vm + *in_vm;
    id.rank = id.slice * ranks_per_slice + id.host;
    id.engine_job = env("PODIUM_JOBSET").value_or("");
    id.engine_restart = env("PODIUM_ENGINE_RESTART").value_or("");
    id.node = env("HOSTNAME").value_or("");
  } else {
    return fail("PODIUM_ENGINE must be slurm or kubernetes, not '" + engine.substr(0, 32) + "'");
  }
  if (id.slice >= *slices || id.host >= ranks_per_slice || id.rank >= id.world)
    return fail("rank " + std::to_string(id.rank) + " (slice " + std::to_string(id.slice) +
                ", host " + std::to_string(id.host) + ") is outside the gang of " +
                std::to_string(*slices) + " x " + std::to_string(ranks_per_slice));
  out.identity = id;
  return out;
}

nlohmann::json to_json(const AttachIdentity& id) {
  return {{"engine", id.engine},
          {"rank", id.rank},
          {"world", id.world},
          {"slice", id.slice},
          {"host", id.host},
          {"engine_job", id.engine_job},
          {"engine_restart", id.engine_restart},
          {"node", id.node}};
}

}  // namespace podium::core
