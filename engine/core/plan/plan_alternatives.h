#pragma once
// The plan's proposed alternatives as run-spec patches a client can apply in one step.
//
// Each alternative carries "set": a partial run spec (top-level fields, "parallelism" keys in
// MaxText form without the _parallelism suffix, "config" keys) that, merged over the submitted
// spec, is the change the alternative describes. Clients (the dashboard's "apply" button, the
// CLI) never parse the human description.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/topology/mesh.h"

namespace podium::core {

// {"kind":"mesh", ..., "set":{"parallelism":{"ici_fsdp":16,"dcn_data":1,...}}}
nlohmann::json mesh_alternative_json(const MeshAlternative& a);

// A memory suggestion "key=value" (optionally followed by a parenthesised remark) as a patch;
// nullopt when the change is not a single key assignment (e.g. a prose suggestion).
std::optional<nlohmann::json> memory_change_patch(const std::string& change);

// {"kind":"data","description":"steps=N","set":{"steps":N}}: the largest step count the dataset
// feeds.
nlohmann::json data_alternative_json(std::int64_t steps_that_fit);

}  // namespace podium::core
