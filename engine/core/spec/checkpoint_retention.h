#pragma once
// Checkpoint retention as a run spec and a cluster carry it: {"keep_last": N, "keep_every": K}
// keeps the newest N checkpoints and every one whose step is a multiple of K (either or both).
// Which checkpoints are never deleted whatever the policy says is the retention module's rule.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/validation/field_error.h"

namespace podium::core {

struct CheckpointRetention {
  std::optional<int> keep_last;
  std::optional<std::int64_t> keep_every;
};

inline constexpr int kMaxKeepLast = 1'000'000;

// Reads {"keep_last","keep_every"} at `field` ("checkpoint_retention"); errors name
// "<field>.keep_last" etc. An object with neither member is an error (it would keep nothing
// in particular and delete everything else). nullopt when errors were recorded.
std::optional<CheckpointRetention> parse_checkpoint_retention(const nlohmann::json& v,
                                                              const std::string& field,
                                                              std::vector<FieldError>& errors);

nlohmann::json to_json(const CheckpointRetention& r);

}  // namespace podium::core
