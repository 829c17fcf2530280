#include "engine/core/launch/maxtext_launch.h"

#include <cctype>

namespace podium::core {

namespace {

constexpr std::string_view kPackageTrain = "maxtext.trainers.pre_train.train";
constexpr std::string_view kPackageCompile = "maxtext.trainers.pre_train.train_compile";
constexpr std::string_view kLegacyTrain = "MaxText.train";
constexpr std::string_view kLegacyCompile = "MaxText.train_compile";

bool every_char_is(std::string_view s, bool (*pred)(unsigned char)) {
  for (unsigned char c : s)
    if (!pred(c)) return false;
  return !s.empty();
}
bool hex_digit(unsigned char c) {
  return std::isxdigit(c) != 0;
}
bool decimal_digit(unsigned char c) {
  return std::isdigit(c) != 0;
}

// "0.2.0", "v0.2.0", "maxtext-v0.2.0", "0.2.0rc1", "0.2.0.post1": digits and dots, a PEP 440
// suffix allowed after the last number.
bool is_release_version(std::string_view v) {
  if (v.rfind("maxtext-", 0) == 0) v.remove_prefix(8);
  if (!v.empty() && (v[0] == 'v' || v[0] == 'V')) v.remove_prefix(1);
  size_t i = 0, parts = 0;
  while (i < v.size()) {
    size_t start = i;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
    if (i == start) return false;
    ++parts;
    if (i == v.size()) break;
    if (v[i] == '.' && i + 1 < v.size() && std::isdigit(static_cast<unsigned char>(v[i + 1]))) {
      ++i;
      continue;
    }
    // A suffix (rc1, .post1, .dev3, +local): letters, digits, dots, plus.
    for (; i < v.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(v[i]);
      if (!std::isalnum(c) && c != '.' && c != '+') return false;
    }
  }
  return parts >= 2;
}

bool is_commit_hash(std::string_view v) {
  return v.size() >= 7 && v.size() <= 40 && every_char_is(v, hex_digit);
}

}  // namespace

std::string_view to_string(MaxTextLayout layout) {
  return layout == MaxTextLayout::legacy ? "legacy" : "package";
}

std::optional<MaxTextLayout> parse_maxtext_layout(std::string_view text) {
  if (text == "package") return MaxTextLayout::package;
  if (text == "legacy") return MaxTextLayout::legacy;
  return std::nullopt;
}

std::optional<std::string> maxtext_version_problem(std::string_view v) {
  if (v == "auto" || v == "fork" || v == "legacy" || is_commit_hash(v) || is_release_version(v))
    return std::nullopt;
  if (every_char_is(v, decimal_digit)) return "a release has dots (e.g. 0.2.0)";
  return "must be auto, fork, legacy, a MaxText release (e.g. 0.2.0) or a git commit (7-40 hex "
         "digits)";
}

std::optional<MaxTextLayout> layout_of_declared_version(std::string_view v) {
  if (v == "legacy") return MaxTextLayout::legacy;
  if (is_release_version(v) && !is_commit_hash(v)) return MaxTextLayout::package;
  return std::nullopt;
}

MaxTextLayout choose_maxtext_layout(std::string_view run_version, std::string_view cluster_version,
                                    std::optional<MaxTextLayout> reported) {
  for (std::string_view declared : {run_version, cluster_version}) {
    if (declared.empty() || declared == "auto") continue;
    if (auto layout = layout_of_declared_version(declared)) return *layout;
    break;  // a fork or a commit: the hosts know what they have
  }
  return reported.value_or(MaxTextLayout::package);
}

std::string_view maxtext_train_module(MaxTextLayout layout) {
  return layout == MaxTextLayout::legacy ? kLegacyTrain : kPackageTrain;
}

std::string_view maxtext_compile_module(MaxTextLayout layout) {
  return layout == MaxTextLayout::legacy ? kLegacyCompile : kPackageCompile;
}

std::string compile_module_for(std::string_view train_module) {
  if (train_module == kLegacyTrain) return std::string(kLegacyCompile);
  if (train_module == kPackageTrain) return std::string(kPackageCompile);
  return {};
}

std::map<std::string, std::string> maxtext_cpu_environment(std::string_view coordinator_host,
                                                           int rank, int world_size) {
  return {{"JAX_COORDINATOR_ADDRESS", std::string(coordinator_host)},
          {"JOB_INDEX", "0"},
          {"JOB_COMPLETION_INDEX", std::to_string(rank)},
          {"PROCESSES_IN_JOB", std::to_string(world_size)}};
}

std::vector<std::pair<std::string, std::string>> maxtext_cpu_arguments() {
  return {{"hardware", "cpu"}, {"jax_cache_dir", ""}};
}

}  // namespace podium::core
