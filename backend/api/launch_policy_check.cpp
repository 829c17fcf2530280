#include "backend/api/launch_policy_check.h"

#include "backend/api/resolve.h"
#include "backend/common/problem.h"

namespace podium::api {

core::LaunchPolicy stored_launch_policy(const std::string& column_text) {
  auto value = nlohmann::json::parse(column_text, nullptr, false);
  auto parsed = core::parse_launch_policy(value.is_discarded() ? nlohmann::json() : value);
  return parsed.value.value_or(core::LaunchPolicy{});
}

nlohmann::json launch_policy_json(const std::string& column_text) {
  return core::to_json(stored_launch_policy(column_text));
}

namespace {

void enforce_on(db::Transaction& tx, const core::RunSpec& spec, const std::string& cluster_id,
                const std::string& cluster_name, const http::Principal& principal) {
  auto r = tx.exec("SELECT launch_policy::text AS p FROM clusters WHERE id = $1", {cluster_id});
  if (r.empty()) return;  // resolved a moment ago in the same transaction
  const auto policy = stored_launch_policy(r.at(0, "p"));
  if (auto refusal = core::launch_refusal(policy, spec, http::role_name(principal.role))) {
    auto p = http::forbidden("cluster " + cluster_name + ": " + refusal->message);
    p.errors.push_back({refusal->field, refusal->message});
    throw p;
  }
}

}  // namespace

void enforce_launch_policy(db::Transaction& tx, const core::RunSpec& spec,
                           const std::string& cluster_id, const http::Principal& principal) {
  enforce_on(tx, spec, cluster_id, spec.cluster, principal);
  // A compile check runs the same code on a host of its compile cluster.
  if (spec.preflight_compile && spec.compile_cluster && *spec.compile_cluster != spec.cluster)
    if (auto other = find_cluster_id(tx, *spec.compile_cluster))
      enforce_on(tx, spec, *other, *spec.compile_cluster, principal);
}

}  // namespace podium::api
