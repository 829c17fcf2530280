#pragma once
// What each rank of an attempt runs: argv, environment, working directory (docs/agent-protocol.md,
// domain brief §4). Pure: the dispatcher passes what it read from the database.
//
// The environment is the union of the JAX, TPU, MEGASCALE, GPU and PyTorch conventions with this
// attempt's values, so MaxText on real TPU hosts and the reference workload here both find what
// they read. The command follows MaxText's form (`<base.yml> key=value ...`) for maxtext and
// reference workloads, with the same run_name on every attempt so a restart resumes from the
// latest finished checkpoint.

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/launch/maxtext_launch.h"

namespace podium::sched {

struct LaunchSettings {
  std::string python = "python3";  // interpreter of the reference workload on the hosts
  std::string reference_dir;       // engine/workloads/reference on the hosts
  std::string output_dir;          // base_output_directory when the spec sets none
  int grace_seconds = 10;
};

struct GangMember {
  int rank = 0;
  int gang_slice = 0;  // MEGASCALE_SLICE_ID
  int host_index = 0;  // TPU_WORKER_ID
  std::string address;
  int devices = 1;
};

struct LaunchInput {
  std::string run_id;
  std::string run_name;  // MaxText run_name: the same on every attempt of a run
  std::string attempt_id;
  int attempt_number = 1;
  nlohmann::json spec;                     // the stored run spec (engine/core/spec/run_spec.h form)
  std::optional<std::string> dataset_uri;  // the dataset's uri, when the run names one
  int gang_slices = 1;                     // slices this attempt runs on
  int requested_slices = 1;                // slices the run asked for (elastic: may differ)
  std::vector<GangMember> members;         // one per rank, sorted by rank
  int port = 8476;                         // coordinator port (MEGASCALE_PORT is port + 1)
  LaunchSettings settings;
  // The cluster's accelerator: "tpu", "gpu" or "cpu" ("" unknown), and its devices per host
  // (GPUS_PER_NODE on GPU nodes; 0: the agent's own count).
  std::string accelerator_kind;
  int devices_per_host = 0;
  // MaxText's entry point on these hosts (engine/core/launch/maxtext_launch.h): the run's or
  // cluster's declared version, else what rank 0's agent reported.
  core::MaxTextLayout maxtext_layout = core::MaxTextLayout::package;
  // The step directory of another run's checkpoint that the spec's init_from names (issue
  // 30.4): MaxText gets load_parameters_path=<dir>/items, the reference workload --init-from
  // <dir>. Both prefer the run's own checkpoints when it has some (a restart resumes).
  std::optional<std::string> init_from;
};

struct RankLaunch {
  int rank = 0;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  std::string workdir;                        // "" = the agent's own
  std::optional<std::string> checkpoint_dir;  // rank 0 and local outputs only
};

// The arguments that start a maxtext or reference run from `checkpoint_dir` (a step directory,
// <...>/checkpoints/<step>): MaxText reads its parameters from the step's `items` (Orbax's item
// of a MaxText training checkpoint); the reference workload takes the directory itself.
std::vector<std::string> init_from_arguments(bool maxtext, const std::string& checkpoint_dir);

// Throws std::invalid_argument when the spec cannot be launched (e.g. a command workload
// without a command); the dispatcher fails the run with that message.
std::vector<RankLaunch> build_launch(const LaunchInput& input);

// The compile check of a run whose rank 0 runs `launch` (docs/planner.md, "Compile check"):
// MaxText's train module becomes its train_compile (either launch form), the reference workload
// gets --compile-only; with a TPU `topology` (its accelerator type, e.g. "v5p-8"), both compile
// for that slice from the compile host's CPU (compile_topology, compile_topology_num_slices).
std::vector<std::string> compile_check_command(const std::vector<std::string>& launch,
                                               bool reference_workload, const std::string& topology,
                                               int num_slices);

// The base_output_directory a run uses, and whether it is a local path an agent can watch.
std::string output_directory(const nlohmann::json& spec, const LaunchSettings& settings);
bool is_local_path(const std::string& path);

// "12" for 12.0, "0.5" for 0.5: MaxText and the reference workload parse integers strictly.
std::string format_number(double v);

}  // namespace podium::sched
