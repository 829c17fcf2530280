#pragma once
// Who may decide what runs on a cluster's hosts (a cluster's `launch_policy`). A `command`
// workload is any program; a custom entrypoint, a code bundle or an environment variable that
// changes which program loads (LD_PRELOAD, PYTHONPATH, ...) is too. The policy names the roles
// trusted with that and the entrypoints everyone else may pick from. Pure: no I/O.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/spec/run_spec.h"
#include "engine/core/validation/field_error.h"
#include "engine/core/validation/parsed.h"

namespace podium::core {

struct LaunchPolicy {
  // Roles ("admin", "member") that may submit `command` workloads, name any entrypoint and set
  // any environment variable. Default: admins only.
  std::vector<std::string> command_roles{"admin"};
  // Entrypoints the other roles may name on maxtext/reference runs besides the workload's own
  // default: a Python module ("MaxText.train") or an absolute executable path as argv[0]
  // ("/opt/maxtext/train.sh"). Default: none.
  std::vector<std::string> entrypoints;
  // Roles that may submit runs with a code bundle (its files are code that runs on the hosts).
  // Default: admins and members, who ship their own training code.
  std::vector<std::string> code_bundle_roles{"admin", "member"};
};

// Reads the contract's JSON form; absent keys take the defaults above, unknown keys, unknown
// roles and malformed entrypoints are errors. null is the default policy.
// Field paths start with "launch_policy" ("launch_policy.command_roles[1]").
Parsed<LaunchPolicy> parse_launch_policy(const nlohmann::json& j);
nlohmann::json to_json(const LaunchPolicy& policy);

// Why `role` may not submit `spec` on a cluster with `policy`: the spec field at fault and a
// sentence naming the policy key that would allow it. nullopt when allowed.
std::optional<FieldError> launch_refusal(const LaunchPolicy& policy, const RunSpec& spec,
                                         const std::string& role);

// Environment variables that choose which code a process loads (dynamic loader, interpreter
// search paths, shell start-up files): setting them is as good as naming the program.
bool selects_code(const std::string& env_name);

}  // namespace podium::core
