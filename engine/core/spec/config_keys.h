#pragma once
// Validation of MaxText key=value overrides before a run starts. MaxText's pyconfig rejects an
// unknown key only after the job is scheduled ("... not in valid fields"); Podium checks the run
// spec's "config" object against the known keys of a MaxText release (versioned data embedded
// from engine/core/data/maxtext_keys_<version>.txt) and suggests the nearest valid key.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::core {

inline constexpr std::string_view kDefaultMaxTextVersion = "current";

// Key lists exist per workload: "maxtext" (MaxText's base.yml) and "reference" (Podium's
// reference workload, engine/workloads/reference/base.yml); files
// engine/core/data/<workload>_keys_<version>.txt.
inline constexpr std::string_view kMaxTextWorkload = "maxtext";

// Versions with a key list, e.g. {"current"}.
std::vector<std::string> config_key_versions(std::string_view workload = kMaxTextWorkload);

// Sorted known keys of a version; empty for an unknown version.
const std::vector<std::string>& known_config_keys(std::string_view version = kDefaultMaxTextVersion,
                                                  std::string_view workload = kMaxTextWorkload);
bool is_known_config_key(std::string_view key, std::string_view version = kDefaultMaxTextVersion,
                         std::string_view workload = kMaxTextWorkload);

// Levenshtein distance (insert, delete, substitute: cost 1 each).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The known key closest to `key` by edit distance, when close enough to be a plausible typo
// (distance <= max(2, len/3)) or when one contains the other as a word-boundary fragment
// ("fsdp_parallelism" -> "ici_fsdp_parallelism"). Ties go to the alphabetically first key.
std::optional<std::string> nearest_config_key(std::string_view key,
                                              std::string_view version = kDefaultMaxTextVersion,
                                              std::string_view workload = kMaxTextWorkload);

// The same over an explicit list (sorted, unique): a fork's own keys.
std::optional<std::string> nearest_key_in(std::string_view key,
                                          const std::vector<std::string>& keys);

struct ConfigIssue {
  std::string code;  // "unknown_config_key" or "invalid_config_value"
  std::string key;
  std::string message;
  std::string hint;
  std::optional<std::string> suggestion;  // the key (or value) to use instead
};

// Checks every key of `config` (a JSON object of MaxText overrides). Besides unknown keys, it
// applies the rules MaxText enforces late:
// - opt_type=muon: the weight decay keys are adam_weight_decay and muon_weight_decay; a
//   `weight_decay` key is reported with both names in the hint.
// - remat_policy and opt_type must be values MaxText accepts (invalid_config_value).
// For another workload ("reference") only unknown keys are reported, against its own list.
// A version without a key list yields no issues (nothing to check against).
// Non-object input yields no issues (the run spec parser reports the type error).
std::vector<ConfigIssue> validate_config(const nlohmann::json& config,
                                         std::string_view version = kDefaultMaxTextVersion,
                                         std::string_view workload = kMaxTextWorkload);

// validate_config's MaxText rules against an explicit key list (sorted, unique), e.g. a fork's
// own base.yml keys; `label` names the list in messages ("MaxText 0.2.0", "the run's
// maxtext_fork keys"). An empty list yields no issues.
std::vector<ConfigIssue> validate_config_with_keys(const nlohmann::json& config,
                                                   const std::vector<std::string>& keys,
                                                   std::string_view label);

}  // namespace podium::core
