#pragma once
// A validator of JSON values against a Kubernetes structural OpenAPI v3 schema (the
// openAPIV3Schema of a CustomResourceDefinition), as the API server applies it to objects sent
// with strict field validation (kubectl's default): wrong types, missing required fields,
// values outside enum, pattern, length and item limits, and unknown fields are errors.
// Fields of an object whose schema lists no properties (root metadata, which the server checks
// as ObjectMeta itself) are accepted. CEL rules (x-kubernetes-validations) are not evaluated.
// Test-only, header-only.

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::testing {

class StructuralSchema {
 public:
  explicit StructuralSchema(nlohmann::json schema) : schema_(std::move(schema)) {}

  // "path: problem" for every violation; empty when the value is valid.
  std::vector<std::string> validate(const nlohmann::json& value) const {
    std::vector<std::string> errors;
    check(schema_, value, "", errors);
    return errors;
  }

 private:
  static bool type_matches(const std::string& type, const nlohmann::json& v) {
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "integer") return v.is_number_integer();
    if (type == "number") return v.is_number();
    if (type == "boolean") return v.is_boolean();
    return true;
  }

  static void check(const nlohmann::json& s, const nlohmann::json& v, const std::string& path,
                    std::vector<std::string>& errors) {
    const std::string where = path.empty() ? "<root>" : path;
    if (!s.is_object()) return;
    if (v.is_null()) {
      if (!s.value("nullable", false)) errors.push_back(where + ": null is not allowed");
      return;
    }
    if (s.value("x-kubernetes-int-or-string", false)) {
      if (!v.is_number_integer() && !v.is_string())
        errors.push_back(where + ": must be an integer or a string");
      return;
    }
    if (s.contains("anyOf") && s["anyOf"].is_array()) {
      bool any = false;
      for (const auto& alt : s["anyOf"]) {
        std::vector<std::string> e;
        check(alt, v, path, e);
        if (e.empty()) any = true;
      }
      if (!any) errors.push_back(where + ": matches none of anyOf");
    }
    if (s.contains("type") && s["type"].is_string()) {
      const std::string type = s["type"];
      if (!type_matches(type, v)) {
        errors.push_back(where + ": must be of type " + type + ", not " + v.type_name());
        return;
      }
    }
    if (s.contains("enum") && s["enum"].is_array()) {
      bool found = false;
      for (const auto& e : s["enum"])
        if (e == v) found = true;
      if (!found) errors.push_back(where + ": " + v.dump() + " is not one of " + s["enum"].dump());
    }
    if (v.is_string()) {
      const std::string str = v.get<std::string>();
      if (s.contains("pattern") && s["pattern"].is_string() &&
          !std::regex_search(str,
                             std::regex(s["pattern"].get<std::string>(), std::regex::ECMAScript)))
        errors.push_back(where + ": '" + str + "' does not match " + s["pattern"].dump());
      if (s.contains("maxLength") && str.size() > s["maxLength"].get<size_t>())
        errors.push_back(where + ": longer than " + s["maxLength"].dump());
      if (s.contains("minLength") && str.size() < s["minLength"].get<size_t>())
        errors.push_back(where + ": shorter than " + s["minLength"].dump());
    }
    if (v.is_number() && s.contains("minimum") && v.get<double>() < s["minimum"].get<double>())
      errors.push_back(where + ": below the minimum " + s["minimum"].dump());
    if (v.is_array()) {
      if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>())
        errors.push_back(where + ": more than " + s["maxItems"].dump() + " items");
      if (s.contains("items"))
        for (size_t i = 0; i < v.size(); ++i)
          check(s["items"], v[i], path + "[" + std::to_string(i) + "]", errors);
    }
    if (v.is_object()) {
      if (s.contains("required") && s["required"].is_array())
        for (const auto& r : s["required"])
          if (r.is_string() && !v.contains(r.get<std::string>()))
            errors.push_back(where + ": required field " + r.get<std::string>() + " is missing");
      const bool preserve = s.value("x-kubernetes-preserve-unknown-fields", false);
      const bool has_properties = s.contains("properties") && s["properties"].is_object();
      const nlohmann::json* additional =
          s.contains("additionalProperties") ? &s["additionalProperties"] : nullptr;
      for (const auto& [key, child] : v.items()) {
        const std::string child_path = path + "." + key;
        if (has_properties && s["properties"].contains(key)) {
          check(s["properties"][key], child, child_path, errors);
        } else if (additional && additional->is_object()) {
          check(*additional, child, child_path, errors);
        } else if (additional && additional->is_boolean() && !additional->get<bool>()) {
          errors.push_back(child_path + ": unknown field");
        } else if (has_properties && !preserve && !additional) {
          errors.push_back(child_path + ": unknown field");
        }
      }
    }
  }

  nlohmann::json schema_;
};

}  // namespace podium::testing
