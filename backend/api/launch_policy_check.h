#pragma once
// A cluster's launch policy (engine/core/launch/launch_policy.h) read from the database and applied
// to a submission: a member's command workload on a cluster that trusts only admins is a 403 naming
// the field at fault and the policy key that would allow it.

#include <string>

#include <nlohmann/json.hpp>

#include "backend/common/principal.h"
#include "backend/db/database.h"
#include "engine/core/launch/launch_policy.h"
#include "engine/core/spec/run_spec.h"

namespace podium::api {

// The stored policy with its defaults filled in (a column the server wrote, so always valid;
// anything else reads as the default policy, which is the strictest).
core::LaunchPolicy stored_launch_policy(const std::string& column_text);
nlohmann::json launch_policy_json(const std::string& column_text);

// Throws a 403 Problem when `principal` may not submit `spec` on the cluster `cluster_id` (and,
// for a compile check, on its compile cluster).
void enforce_launch_policy(db::Transaction& tx, const core::RunSpec& spec,
                           const std::string& cluster_id, const http::Principal& principal);

}  // namespace podium::api
