#pragma once
// Which MaxText module a host runs (domain brief §3). MaxText moved its entry points: releases up
// to early 2026 run `python3 -m MaxText.train <MaxText/configs/base.yml> key=value ...`; the
// shims were removed on 2026-04-08, and the PyPI package (0.1.0 of 2025-09 onwards) runs
// `python3 -m maxtext.trainers.pre_train.train [config.yml] key=value ...`. Release 0.2.0 has
// both. A host's MaxText decides: the agent reports what it finds importable, a cluster or a run
// may declare a version. Pure.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace podium::core {

enum class MaxTextLayout {
  package,  // maxtext.trainers.pre_train.train (config file optional)
  legacy,   // MaxText.train <base.yml>
};

std::string_view to_string(MaxTextLayout layout);
std::optional<MaxTextLayout> parse_maxtext_layout(std::string_view text);

// A declared maxtext_version: "auto" (what the agents report), "fork", a release ("0.2.0",
// "v0.2.0", "maxtext-v0.2.0"), a git commit (7-40 hex digits), or "legacy" (a checkout from
// before the package layout). Returns the error message for anything else.
std::optional<std::string> maxtext_version_problem(std::string_view version);

// The layout a declared version implies, when it implies one: a release of the package has the
// package module (0.2.0 has both; the package form is the one that keeps working), "legacy" the
// legacy one; "auto", "fork" and commits say nothing.
std::optional<MaxTextLayout> layout_of_declared_version(std::string_view version);

// The launch form of an attempt: the run's declaration, else the cluster's, else what the rank-0
// host reported, else the package form (today's MaxText).
MaxTextLayout choose_maxtext_layout(std::string_view run_version, std::string_view cluster_version,
                                    std::optional<MaxTextLayout> reported);

// The train module of a layout, and its ahead-of-time compile module.
std::string_view maxtext_train_module(MaxTextLayout layout);
std::string_view maxtext_compile_module(MaxTextLayout layout);
// The compile module for a train module named in a command ("" when it is not a MaxText one).
std::string compile_module_for(std::string_view train_module);

// MaxText on CPU hosts (`hardware=cpu`) joins its processes its own way (0.2.0:
// maxtext.utils.max_utils.initialize_jax_for_cpu, written for XPK's Kubernetes Jobs):
//   jax.distributed.initialize(
//       coordinator_address = gethostbyname($JAX_COORDINATOR_ADDRESS) + ":1234",
//       process_id = $JOB_INDEX * $PROCESSES_IN_JOB + $JOB_COMPLETION_INDEX,
//       num_processes = $JAX_PROCESS_COUNT)
// It resolves the whole variable as a host name (the "host:port" form every other workload reads
// fails gethostbyname, 50 tries 5 s apart), ignores JAX_PROCESS_ID and always uses port 1234, so
// the attempt's coordinator port plays no part and one such gang at a time can have its rank 0 on
// a host. These are the values each rank needs (one job: JOB_INDEX 0); they replace
// JAX_COORDINATOR_ADDRESS in the rank's environment.
inline constexpr int kMaxTextCpuCoordinatorPort = 1234;
std::map<std::string, std::string> maxtext_cpu_environment(std::string_view coordinator_host,
                                                           int rank, int world_size);
// The key=value arguments Podium adds for MaxText on a CPU cluster, before the run's own config
// (which may override them): hardware=cpu selects the initialisation above (MaxText's default,
// tpu, would call jax.distributed.initialize() with no arguments, which on CPU finds no process
// count), and jax_cache_dir= (empty) turns off MaxText's persistent compilation cache
// (base.yml: ~/jax_cache). With the cache on, a relaunched process that finds the train step
// cached reaches the first cross-process collective tens of seconds before one that compiles it,
// and gloo's fixed 30 s rendezvous fails (docs/maxtext-on-cpu.md).
std::vector<std::pair<std::string, std::string>> maxtext_cpu_arguments();

}  // namespace podium::core
