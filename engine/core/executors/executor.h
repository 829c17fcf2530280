#pragma once
// Where a cluster's runs execute (../shared/api.md, "Clusters"): Podium's own agents, a Slurm
// cluster, or Kubernetes (JobSet + Kueue, as xpk does). Parsed and validated here so that the
// API, the dispatcher and the manifest builders share one reading. Pure: no I/O.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/executors/pod_template.h"
#include "engine/core/validation/parsed.h"

namespace podium::core {

enum class ExecutorKind { agent, slurm, kubernetes };
std::string_view to_string(ExecutorKind kind);

struct SlurmExecutor {
  std::string partition;  // "" = the cluster's default partition
  std::string account;
  std::string qos;
  std::vector<std::string> sbatch_args;  // extra sbatch options, e.g. "--gpus-per-node=8"
  std::map<std::string, std::string> env;
};

struct KubernetesExecutor {
  std::string context;  // kubectl context ("" = the current one)
  std::string namespace_name = "default";
  std::string queue;  // Kueue LocalQueue ("" = no queue label)
  std::string image;  // the training image (a run's `image` overrides it)
  std::string priority_class;
  std::string service_account;
  std::map<std::string, std::string> env;
  // xpk's parallel containers: on TPU hosts whose machine type xpk gives two (tpu7x with 4 chips
  // per VM, tpu7x-standard-4t), each pod runs two containers of 2 chips, one JAX process (rank)
  // each. false: one container with all the host's chips (xpk --no-use-parallel-containers).
  bool parallel_containers = true;
  // Annotations, node selectors, tolerations, volumes and mounts, resource claims added to every
  // pod (engine/core/executors/pod_template.h).
  PodTemplateExtensions pod;
};

struct Executor {
  ExecutorKind kind = ExecutorKind::agent;
  // kind == agent: the container image that carries podium-worker and the team's code, for the
  // provisioning paths that start the agents in containers (xpk workload, Vertex AI). Optional.
  std::string agent_image;
  SlurmExecutor slurm;            // kind == slurm
  KubernetesExecutor kubernetes;  // kind == kubernetes
  bool external() const { return kind != ExecutorKind::agent; }
};

// Reads the contract's JSON form. Unknown keys, wrong types, names that are not valid Slurm or
// Kubernetes names, sbatch options Podium sets itself (--nodes, --ntasks..., --job-name,
// --output) and environment names Podium owns (engine/core/launch/launch_env.h) are errors.
// Field paths start with "executor" ("executor.partition").
Parsed<Executor> parse_executor(const nlohmann::json& j);

// The contract's JSON form; parse_executor(to_json(e)) gives e back.
nlohmann::json to_json(const Executor& e);

// RFC 1123 label (Kubernetes namespaces, names of objects): [a-z0-9]([-a-z0-9]*[a-z0-9])?,
// at most 63 characters.
bool is_dns_label(std::string_view s);

}  // namespace podium::core
