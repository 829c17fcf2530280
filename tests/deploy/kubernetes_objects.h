#pragma once
// Kubernetes objects as the tests check them: the vendored object schemas of
// tests/deploy/data/kubernetes/ (README.md there) by apiVersion and kind. Documents are read
// with tests/support/yaml_json.h. Test-only.

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/engine/core/structural_schema.h"
#include "tests/support/yaml_json.h"

namespace podium::testing {

// The schema file of an object's apiVersion and kind ("apps/v1" Deployment ->
// deployment-apps-v1.json), as the vendored set names them; "" when the set has none.
inline std::string kubernetes_schema_file(const nlohmann::json& object) {
  if (!object.is_object() || !object.contains("apiVersion") || !object.contains("kind") ||
      !object["apiVersion"].is_string() || !object["kind"].is_string())
    return "";
  std::string version = object["apiVersion"];
  std::string kind = object["kind"];
  for (auto& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string group;
  if (auto slash = version.find('/'); slash != std::string::npos) {
    group = version.substr(0, slash);
    version = version.substr(slash + 1);
    if (auto dot = group.find('.'); dot != std::string::npos) group = group.substr(0, dot);
  }
  return kind + "-" + (group.empty() ? "" : group + "-") + version + ".json";
}

// Validates against the vendored schema; an object without one is an error too.
inline std::vector<std::string> validate_kubernetes_object(const nlohmann::json& object) {
  static std::map<std::string, StructuralSchema> cache;
  const std::string file = kubernetes_schema_file(object);
  if (file.empty()) return {"<root>: no apiVersion and kind"};
  auto it = cache.find(file);
  if (it == cache.end()) {
    const std::string text = read_source_file("tests/deploy/data/kubernetes/" + file);
    if (text.empty()) return {"<root>: no vendored schema " + file};
    it = cache.emplace(file, StructuralSchema(nlohmann::json::parse(text))).first;
  }
  return it->second.validate(object);
}

}  // namespace podium::testing
