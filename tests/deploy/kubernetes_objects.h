#pragma once
// Kubernetes YAML as the tests read it: documents as JSON values (quoted scalars stay strings,
// plain ones resolve as YAML 1.2's core schema), and the vendored object schemas of
// tests/deploy/data/kubernetes/ (README.md there) by apiVersion and kind. Test-only.

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "tests/engine/core/structural_schema.h"

namespace podium::testing {

inline std::string read_source_file(const std::string& relative) {
  std::ifstream in(std::string(PODIUM_SOURCE_DIR) + "/" + relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline nlohmann::json yaml_to_json(const YAML::Node& n) {
  using nlohmann::json;
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& item : n) a.push_back(yaml_to_json(item));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      if (s == "true") return true;
      if (s == "false") return false;
      if (s == "null" || s == "~") return nullptr;
      json num = json::parse(s, nullptr, false);
      return !num.is_discarded() && num.is_number() ? num : json(s);
    }
    default:
      return nullptr;
  }
}

// Every document of a multi-document YAML text (empty documents skipped).
inline std::vector<nlohmann::json> yaml_documents(const std::string& text) {
  std::vector<nlohmann::json> out;
  for (const auto& doc : YAML::LoadAll(text))
    if (doc.IsDefined() && !doc.IsNull()) out.push_back(yaml_to_json(doc));
  return out;
}

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
