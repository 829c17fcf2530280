#include "engine/core/plan/plan_alternatives.h"

#include <array>
#include <charconv>

namespace podium::core {

namespace {

// Spec fields that live at the top level of a run spec rather than under "config".
constexpr std::array<std::string_view, 4> kAlternativeTopLevelFields = {
    "per_device_batch_size", "max_target_length", "steps", "checkpoint_period"};

nlohmann::json scalar_value(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  double d = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec == std::errc() && end == text.data() + text.size()) {
    if (d == static_cast<double>(static_cast<std::int64_t>(d))) return static_cast<std::int64_t>(d);
    return d;
  }
  return text;
}

bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

nlohmann::json mesh_alternative_json(const MeshAlternative& a) {
  nlohmann::json j = to_json(a);
  j["kind"] = "mesh";
  nlohmann::json parallelism = nlohmann::json::object();
  for (const auto& [axis, value] : a.ici) parallelism["ici_" + axis] = value;
  for (const auto& [axis, value] : a.dcn) parallelism["dcn_" + axis] = value;
  j["set"] = {{"parallelism", parallelism}};
  return j;
}

std::optional<nlohmann::json> memory_change_patch(const std::string& change) {
  const auto eq = change.find('=');
  if (eq == std::string::npos || eq == 0) return std::nullopt;
  const std::string key = change.substr(0, eq);
  for (char c : key) {
    if (!is_key_char(c)) return std::nullopt;
  }
  std::string value = change.substr(eq + 1);
  if (const auto space = value.find(' '); space != std::string::npos) value.resize(space);
  if (value.empty()) return std::nullopt;
  for (std::string_view top : kAlternativeTopLevelFields) {
    if (key == top) return nlohmann::json{{key, scalar_value(value)}};
  }
  return nlohmann::json{{"config", {{key, scalar_value(value)}}}};
}

nlohmann::json data_alternative_json(std::int64_t steps_that_fit) {
  return {{"kind", "data"},
          {"description", "steps=" + std::to_string(steps_that_fit)},
          {"set", {{"steps", steps_that_fit}}}};
}

}  // namespace podium::core
