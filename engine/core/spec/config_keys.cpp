#include "engine/core/spec/config_keys.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>

#include "engine/core/model/model_catalog.h"
#include "engine/core/plan/hbm.h"

namespace podium::core {

namespace {

// data/<workload>_keys_<version>.txt
constexpr std::string_view kKeyFileDir = "data/";
constexpr std::string_view kKeyFileInfix = "_keys_";
constexpr std::string_view kKeyFileSuffix = ".txt";

// Key sets are stored under "<workload>/<version>".
std::string set_name(std::string_view workload, std::string_view version) {
  return std::string(workload) + "/" + std::string(version);
}

std::vector<std::string> parse_key_file(std::string_view text) {
  std::vector<std::string> keys;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.remove_suffix(1);
    }
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) {
      line.remove_prefix(1);
    }
    if (!line.empty()) keys.emplace_back(line);
    pos = end + 1;
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

const std::map<std::string, std::vector<std::string>, std::less<>>& key_sets() {
  static const auto sets = [] {
    std::map<std::string, std::vector<std::string>, std::less<>> out;
    for (const detail::EmbeddedFile& f : detail::embedded_files()) {
      if (!f.path.starts_with(kKeyFileDir) || !f.path.ends_with(kKeyFileSuffix)) continue;
      const std::string_view stem = f.path.substr(
          kKeyFileDir.size(), f.path.size() - kKeyFileDir.size() - kKeyFileSuffix.size());
      const size_t infix = stem.find(kKeyFileInfix);
      if (infix == std::string_view::npos) continue;
      out[set_name(stem.substr(0, infix), stem.substr(infix + kKeyFileInfix.size()))] =
          parse_key_file(f.content);
    }
    return out;
  }();
  return sets;
}

// "fsdp_parallelism" is a word-boundary fragment of "ici_fsdp_parallelism".
bool is_fragment_of(std::string_view small, std::string_view big) {
  if (small.size() < 4 || small.size() >= big.size()) return false;
  for (size_t pos = big.find(small); pos != std::string_view::npos;
       pos = big.find(small, pos + 1)) {
    const bool left = pos == 0 || big[pos - 1] == '_';
    const bool right = pos + small.size() == big.size() || big[pos + small.size()] == '_';
    if (left && right) return true;
  }
  return false;
}

std::string value_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

}  // namespace

std::vector<std::string> config_key_versions(std::string_view workload) {
  const std::string prefix = set_name(workload, "");
  std::vector<std::string> versions;
  for (const auto& [name, keys] : key_sets()) {
    if (name.starts_with(prefix)) versions.push_back(name.substr(prefix.size()));
  }
  return versions;
}

const std::vector<std::string>& known_config_keys(std::string_view version,
                                                  std::string_view workload) {
  static const std::vector<std::string> empty;
  const auto& sets = key_sets();
  auto it = sets.find(set_name(workload, version));
  return it == sets.end() ? empty : it->second;
}

bool is_known_config_key(std::string_view key, std::string_view version,
                         std::string_view workload) {
  const auto& keys = known_config_keys(version, workload);
  return std::binary_search(keys.begin(), keys.end(), key);
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> nearest_config_key(std::string_view key, std::string_view version,
                                              std::string_view workload) {
  return nearest_key_in(key, known_config_keys(version, workload));
}

std::optional<std::string> nearest_key_in(std::string_view key,
                                          const std::vector<std::string>& keys) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& k : keys) {
    // The length difference is a lower bound of the distance: skip keys that cannot win.
    const std::size_t length_gap =
        k.size() > key.size() ? k.size() - key.size() : key.size() - k.size();
    if (best && length_gap >= best_distance) continue;
    const std::size_t d = edit_distance(key, k);
    if (!best || d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  const std::size_t limit = std::max<std::size_t>(2, key.size() / 3);
  if (best && best_distance <= limit) return best;
  // No close typo. A key the input is a fragment of ("fsdp_parallelism" ->
  // "dcn_fsdp_parallelism") is the likelier intent; failing that, a key that is a fragment of
  // the input ("remat_policy_v2" -> "remat_policy"). Shortest first, then alphabetical.
  for (const bool input_inside_key : {true, false}) {
    std::optional<std::string> fragment;
    for (const std::string& k : keys) {
      const bool match = input_inside_key ? is_fragment_of(key, k) : is_fragment_of(k, key);
      if (match && (!fragment || k.size() < fragment->size())) fragment = k;
    }
    if (fragment) return fragment;
  }
  return std::nullopt;
}

std::vector<ConfigIssue> validate_config(const nlohmann::json& config, std::string_view version,
                                         std::string_view workload) {
  std::vector<ConfigIssue> issues;
  if (!config.is_object()) return issues;
  // No key list for this version (e.g. a mesh_axes release without a key file): checking
  // against nothing would call every key unknown. The planner warns instead.
  if (known_config_keys(version, workload).empty()) return issues;
  if (workload != kMaxTextWorkload) {
    // Another workload's trainer (the reference workload) rejects unknown keys the same way;
    // MaxText's value rules do not apply to it.
    for (const auto& [key, value] : config.items()) {
      if (is_known_config_key(key, version, workload)) continue;
      ConfigIssue issue{"unknown_config_key", key,
                        "config key '" + key + "' is not a key of the " + std::string(workload) +
                            " workload; it would reject it as \"not in valid fields\"",
                        "", nearest_config_key(key, version, workload)};
      issue.hint = issue.suggestion ? "did you mean '" + *issue.suggestion + "'?"
                                    : "valid: " + join(known_config_keys(version, workload));
      issues.push_back(std::move(issue));
    }
    return issues;
  }
  return validate_config_with_keys(config, known_config_keys(version, workload),
                                   "MaxText " + std::string(version));
}

std::vector<ConfigIssue> validate_config_with_keys(const nlohmann::json& config,
                                                   const std::vector<std::string>& keys,
                                                   std::string_view label) {
  std::vector<ConfigIssue> issues;
  if (!config.is_object() || keys.empty()) return issues;
  const auto known = [&keys](std::string_view key) {
    return std::binary_search(keys.begin(), keys.end(), key);
  };
  // Suggestions cost an edit distance against every known key: only the first unknown keys get
  // one, so that a body of thousands of unknown keys against a fork's long list stays cheap.
  constexpr size_t kMaxSuggestions = 20;
  size_t suggested = 0;
  const auto suggest = [&](std::string_view key) -> std::optional<std::string> {
    if (suggested >= kMaxSuggestions) return std::nullopt;
    ++suggested;
    return nearest_key_in(key, keys);
  };
  const std::string opt_type = config.contains("opt_type") && config["opt_type"].is_string()
                                   ? config["opt_type"].get<std::string>()
                                   : std::string("adamw");  // MaxText base.yml default

  for (const auto& [key, value] : config.items()) {
    if (key == "weight_decay" && !known(key)) {
      // MaxText has no plain weight_decay; pyconfig rejects it as "not in valid fields" after
      // scheduling. Which key the user meant depends on the optimizer.
      ConfigIssue issue{"unknown_config_key", key,
                        "config key 'weight_decay' is not a MaxText key (rejected as \"not in "
                        "valid fields\")",
                        "", std::nullopt};
      if (opt_type == "muon") {
        issue.hint =
            "with opt_type=muon set muon_weight_decay (matrices updated by Muon) and "
            "adam_weight_decay (embeddings and other parameters Muon leaves to AdamW)";
        issue.suggestion = "muon_weight_decay";
      } else {
        issue.hint = "use adam_weight_decay (opt_type=" + opt_type + ")";
        issue.suggestion = "adam_weight_decay";
      }
      issues.push_back(std::move(issue));
      continue;
    }
    if (!known(key)) {
      ConfigIssue issue{"unknown_config_key", key,
                        "config key '" + key + "' is not a key of " + std::string(label) +
                            "; MaxText would reject it as \"not in valid fields\"",
                        "", suggest(key)};
      issue.hint = issue.suggestion ? "did you mean '" + *issue.suggestion + "'?"
                                    : "see MaxText configs/base.yml for valid keys";
      issues.push_back(std::move(issue));
      continue;
    }
    if (key == "remat_policy") {
      const std::string v = value_text(value);
      if (!value.is_string() || !find_remat_policy(v)) {
        std::vector<std::string> names;
        for (const RematPolicyInfo& p : remat_policies()) names.push_back(p.name);
        std::optional<std::string> nearest;
        std::size_t best = 0;
        for (const std::string& n : names) {
          const std::size_t d = edit_distance(v, n);
          if (!nearest || d < best) {
            nearest = n;
            best = d;
          }
        }
        ConfigIssue issue{"invalid_config_value", key,
                          "remat_policy '" + v +
                              "' is not a MaxText "
                              "remat policy",
                          "valid: " + join(names), std::nullopt};
        if (nearest && best <= std::max<std::size_t>(2, v.size() / 3)) {
          issue.suggestion = nearest;
          issue.hint = "did you mean '" + *nearest + "'? " + issue.hint;
        }
        issues.push_back(std::move(issue));
      }
    } else if (key == "opt_type") {
      const std::string v = value_text(value);
      if (!value.is_string() || !optimizer_moments(v)) {
        issues.push_back({"invalid_config_value", key,
                          "opt_type '" + v + "' is not a MaxText optimizer",
                          "valid: adamw, adam_pax, sgd, muon", std::nullopt});
      }
    }
  }
  return issues;
}

}  // namespace podium::core
