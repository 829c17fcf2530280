#include "engine/core/launch/launch_policy.h"

#include <algorithm>
#include <array>
#include <functional>
#include <string_view>

namespace podium::core {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 2> kRoles = {"admin", "member"};
// A policy is read on every run submission to its cluster and shown on the cluster's page: a
// list the size of a request body would cost every submission and say nothing useful.
constexpr size_t kMaxEntrypoints = 64;

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// "only admin, member", or "nobody" for an empty list.
std::string only(const std::vector<std::string>& list) {
  if (list.empty()) return "nobody";
  std::string out = "only ";
  for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + list[i];
  return out;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  });
}

// "MaxText.train": dotted Python identifiers, as `python3 -m` takes them.
bool is_module_name(std::string_view s) {
  if (s.empty() || s.size() > 200) return false;
  size_t start = 0;
  for (;;) {
    const size_t dot = s.find('.', start);
    if (!is_identifier(s.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// "/opt/maxtext/train.sh": absolute, no "." or ".." component, printable, no empty component.
bool is_executable_path(std::string_view s) {
  if (s.size() < 2 || s.size() > 4096 || s[0] != '/' || s.back() == '/') return false;
  if (!std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c != 0x7f; })) return false;
  size_t start = 1;
  for (;;) {
    const size_t slash = s.find('/', start);
    const auto part = s.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

// A list of strings at `field`, each checked by `valid` (its complaint when not).
std::optional<std::vector<std::string>> read_list(
    const json& j, const std::string& field, std::vector<FieldError>& errors,
    const std::function<std::optional<std::string>(const std::string&)>& invalid) {
  if (!j.is_array()) {
    errors.push_back({field, "must be a list of strings"});
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = field + "[" + std::to_string(i) + "]";
    if (!j[i].is_string()) {
      errors.push_back({at, "must be a string"});
      continue;
    }
    const std::string value = j[i].get<std::string>();
    if (auto why = invalid(value)) {
      errors.push_back({at, *why});
      continue;
    }
    if (!contains(out, value)) out.push_back(value);
  }
  return out;
}

std::optional<std::string> invalid_role(const std::string& role) {
  if (std::find(kRoles.begin(), kRoles.end(), role) != kRoles.end()) return std::nullopt;
  return "unknown role '" + role + "' (roles that submit runs: admin, member)";
}

std::optional<std::string> invalid_entrypoint(const std::string& e) {
  if (is_module_name(e) || is_executable_path(e)) return std::nullopt;
  return "'" + e +
         "' is neither a Python module name (MaxText.train) nor an absolute executable path";
}

}  // namespace

bool selects_code(const std::string& name) {
  static const std::array<std::string_view, 10> kNames = {
      "PATH",     "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONPLATLIBDIR",
      "BASH_ENV", "ENV",        "PERL5LIB",   "NODE_OPTIONS"};
  if (name.rfind("LD_", 0) == 0) return true;  // LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, ...
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

Parsed<LaunchPolicy> parse_launch_policy(const json& j) {
  if (j.is_null()) return Parsed<LaunchPolicy>::from(LaunchPolicy{}, {});
  if (!j.is_object()) return Parsed<LaunchPolicy>::failure("launch_policy", "must be an object");
  std::vector<FieldError> errors;
  LaunchPolicy p;
  for (const auto& [key, value] : j.items()) {
    const std::string field = "launch_policy." + key;
    if (key == "command_roles") {
      if (auto v = read_list(value, field, errors, invalid_role)) p.command_roles = *v;
    } else if (key == "code_bundle_roles") {
      if (auto v = read_list(value, field, errors, invalid_role)) p.code_bundle_roles = *v;
    } else if (key == "entrypoints") {
      if (value.is_array() && value.size() > kMaxEntrypoints)
        errors.push_back({field, "at most " + std::to_string(kMaxEntrypoints) + " entrypoints (" +
                                     std::to_string(value.size()) + " given)"});
      else if (auto v = read_list(value, field, errors, invalid_entrypoint))
        p.entrypoints = *v;
    } else {
      errors.push_back(
          {field, "unknown key (known: command_roles, entrypoints, code_bundle_roles)"});
    }
  }
  return Parsed<LaunchPolicy>::from(std::move(p), std::move(errors));
}

json to_json(const LaunchPolicy& p) {
  return {{"command_roles", p.command_roles},
          {"entrypoints", p.entrypoints},
          {"code_bundle_roles", p.code_bundle_roles}};
}

std::optional<FieldError> launch_refusal(const LaunchPolicy& policy, const RunSpec& spec,
                                         const std::string& role) {
  // Roles trusted with any program need no further look.
  if (contains(policy.command_roles, role)) return std::nullopt;
  const std::string trusted = only(policy.command_roles);
  if (spec.workload == Workload::command)
    return FieldError{"workload", "this cluster lets " + trusted +
                                      " submit command workloads (launch_policy.command_roles)"};
  if (spec.entrypoint_module && !contains(policy.entrypoints, *spec.entrypoint_module))
    return FieldError{"entrypoint", "module " + *spec.entrypoint_module +
                                        " is not among this cluster's entrypoints "
                                        "(launch_policy.entrypoints) and " +
                                        trusted + " may name any"};
  if (!spec.entrypoint_argv.empty() && !contains(policy.entrypoints, spec.entrypoint_argv[0]))
    return FieldError{"entrypoint", spec.entrypoint_argv[0] +
                                        " is not among this cluster's entrypoints "
                                        "(launch_policy.entrypoints) and " +
                                        trusted + " may name any"};
  for (const auto& [name, value] : spec.env)
    if (selects_code(name))
      return FieldError{"env." + name, name + " chooses which code the ranks load; " + trusted +
                                           " may set it (launch_policy.command_roles)"};
  if (spec.image)
    return FieldError{"image", "a run's own image is a program of its choosing; " + trusted +
                                   " may set it (launch_policy.command_roles)"};
  if (spec.code_bundle && !contains(policy.code_bundle_roles, role))
    return FieldError{"code_bundle", "this cluster lets " + only(policy.code_bundle_roles) +
                                         " submit code bundles "
                                         "(launch_policy.code_bundle_roles)"};
  return std::nullopt;
}

}  // namespace podium::core
