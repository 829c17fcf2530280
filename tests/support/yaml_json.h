#pragma once
// YAML and source files as the tests read them: a document as a JSON value (quoted scalars stay
// strings, plain ones resolve as YAML 1.2's core schema, which is what yaml-cpp resolves), every
// document of a multi-document text, and a file of the repository by its relative path.
// Test-only.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

namespace podium::testing {

// The text of <repository>/<relative>, "" when unreadable.
inline std::string read_source_file(const std::string& relative) {
  std::ifstream in(std::string(PODIUM_SOURCE_DIR) + "/" + relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One document as JSON.
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

}  // namespace podium::testing
