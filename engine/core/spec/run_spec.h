#pragma once
// The run spec of the API contract (POST /api/v1/runs, POST /api/v1/plan): parsed from JSON into
// a struct with field-level validation errors [{field, message}]. Pure.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/spec/checkpoint_retention.h"
#include "engine/core/spec/maxtext_releases.h"
#include "engine/core/validation/field_error.h"
#include "engine/core/validation/parsed.h"

namespace podium::core {

enum class Workload { maxtext, reference, command };
std::string to_string(Workload w);

// Defaults of fields a spec may leave out. per_device_batch_size and max_target_length fall back
// to MaxText's own base.yml defaults, so the plan describes what MaxText would run.
inline constexpr double kDefaultPerDeviceBatchSize = 12.0;
inline constexpr int kDefaultMaxTargetLength = 2048;
inline constexpr int kDefaultMaxRestarts = 3;

// What Podium does when a running attempt stops making steps (docs/ARCHITECTURE.md, Stalls):
// alert only records it; restart resumes from the latest checkpoint as an infrastructure
// recovery (not from the restart budget); fail ends the run.
enum class OnStall { alert, restart, fail };
std::string to_string(OnStall s);

// init_from: the run starts from another run's checkpoint at a step.
struct InitFrom {
  std::string run;  // id or name of the source run
  std::int64_t step = 0;
};

struct RunSpec {
  std::string name;
  std::string cluster;
  std::optional<std::string> dataset;  // null: synthetic data
  std::optional<std::string> model;    // required for maxtext and reference
  Workload workload = Workload::maxtext;
  // workload=command: the command line, as a string (run through a shell) or an argv list.
  std::optional<std::string> command;
  std::vector<std::string> command_argv;
  std::int64_t steps = 0;  // required for maxtext and reference
  double per_device_batch_size = kDefaultPerDeviceBatchSize;
  int max_target_length = kDefaultMaxTargetLength;
  // MaxText parallelism without the "_parallelism" suffix: "ici_fsdp" -> 16, "dcn_data" -> 1.
  // ici_pipeline / dcn_pipeline are MaxText's names of the stage axis. Values >= 1, or -1 (fill).
  std::map<std::string, int> parallelism;
  nlohmann::json config = nlohmann::json::object();  // MaxText key=value overrides
  std::optional<std::int64_t> checkpoint_period;
  int max_restarts = kDefaultMaxRestarts;
  std::vector<int> restart_on_exit_codes;
  std::optional<int> min_slices;
  std::string priority = "medium";
  std::vector<std::string> tags;
  // Plan checks a submission skips (skippable_checks()); their errors are shown, not refused,
  // and each skip is audited. force (the older all-or-nothing form) skips every check.
  std::vector<std::string> skip_checks;
  bool force = false;
  std::optional<int> num_slices;  // overrides the cluster's slice count

  // Launch as data (maxtext and reference; command runs its own argv):
  // entrypoint: a Python module ("MaxText.train", run as python3 -u -m MODULE) or an argv;
  // config_file: the YAML the entrypoint reads first (MaxText: "MaxText/configs/base.yml");
  // workdir: the rank's working directory on the host; env: variables merged over Podium's
  // (the gang-forming ones, launch_env.h, are Podium's and may not be set here).
  std::optional<std::string> entrypoint_module;
  std::vector<std::string> entrypoint_argv;
  std::optional<std::string> config_file;
  std::optional<std::string> workdir;
  // image: the container image of the ranks on Kubernetes executors (over the cluster's).
  std::optional<std::string> image;
  // preflight: "compile": before the run is placed, a compile check (MaxText.train_compile, or
  // the reference workload's --compile-only) runs on a host of compile_cluster (default: the
  // run's own cluster) and the compiler's memory figure decides (docs/planner.md).
  bool preflight_compile = false;
  std::optional<std::string> compile_cluster;
  std::map<std::string, std::string> env;
  // code_bundle: "sha256:<hex>" of a bundle uploaded with PUT /api/v1/bundles/{digest}; each
  // rank runs in a fresh copy of it (and a relative workdir is a directory inside it).
  std::optional<std::string> code_bundle;
  // maxtext_version: the MaxText the hosts run ("auto": what the agents report; a release, a
  // commit, "fork" or "legacy"); it picks the launch module (engine/core/launch/maxtext_launch.h).
  std::string maxtext_version = "auto";
  // maxtext_fork: the fork's own base.yml keys and/or mesh_axes; config keys and the mesh are
  // then checked against them exactly (engine/core/spec/maxtext_releases.h).
  std::optional<MaxTextFork> maxtext_fork;

  // Running unattended (issue 30; engine/core/spec/run_spec_lifecycle.cpp):
  OnStall on_stall = OnStall::restart;
  std::optional<int> stall_seconds;  // null: the server's default (stalls.default_seconds)
  std::optional<InitFrom> init_from;
  std::optional<CheckpointRetention> checkpoint_retention;  // null: the cluster's, else keep all
  std::optional<int> max_recoveries;                        // null: unbounded
  std::optional<std::string> project;
  std::optional<std::string> notes;

  // ICI / DCN values keyed by mesh axis name ("fsdp", "tensor", "stage", ...).
  std::map<std::string, int> ici() const;
  std::map<std::string, int> dcn() const;
  // From config (MaxText default 1).
  int gradient_accumulation_steps() const;
};

// Validates types, ranges, enums and required fields; unknown top-level fields are errors.
// Config keys are only checked for being an object here (validate_config checks the keys).
Parsed<RunSpec> parse_run_spec(const nlohmann::json& body);

// Round trip: the normalized spec (defaults filled in).
nlohmann::json to_json(const RunSpec& spec);

// The plan checks skip_checks may name: model (unknown model, model config needed),
// config_keys, mesh, hbm, data.
const std::vector<std::string>& skippable_checks();

// Valid priorities, lowest first.
const std::vector<std::string>& run_priorities();

}  // namespace podium::core
