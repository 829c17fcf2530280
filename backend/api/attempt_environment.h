#pragma once
// An attempt's environment as the API shows it (GET /runs/{id}/attempts, a run's latest attempt
// in GET /runs/{id}): what its ranks reported running with (attempt_hosts.environment, probed by
// each rank's agent before the rank started) over what the server recorded when it created the
// attempt (attempts.environment: code bundle digest, image). Pure.

#include <vector>

#include <nlohmann/json.hpp>

namespace podium::api {

// {"python","jax","jaxlib","libtpu","maxtext","git_commit","maxtext_commit","code_digest",
//  "image" (each a string or null), "ranks_reported": how many ranks reported,
//  "differs": [the keys whose value is not the same on every rank that reported]}.
// The values are those of the lowest rank that reported (rank 0 normally). `ranks` in rank
// order, only those that reported; `recorded` may be null (attempts from before migration 0017).
nlohmann::json attempt_environment_json(const nlohmann::json& recorded,
                                        const std::vector<nlohmann::json>& ranks);

}  // namespace podium::api
