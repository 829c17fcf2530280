#pragma once
// A validator of JSON values against a Kubernetes structural OpenAPI v3 schema (the
// openAPIV3Schema of a CustomResourceDefinition), applying what the API server applies to an
// object sent with strict field validation (kubectl's default):
//   - type: object, array, string, integer, number, boolean (nullable allows null);
//   - properties, required, items, additionalProperties (a schema, or false);
//   - unknown fields are errors, unless x-kubernetes-preserve-unknown-fields: true (the server
//     would prune them, and strict validation reports that); the root's `metadata` (the schema
//     says only `type: object`) is checked as ObjectMeta, as the server does;
//   - x-kubernetes-embedded-resource (apiVersion, kind, metadata allowed);
//   - x-kubernetes-int-or-string (an integer or a string, whatever anyOf says);
//   - enum, pattern (ECMAScript regex, close enough for the patterns CRDs use), minLength,
//     maxLength, minimum, maximum, minItems, maxItems;
//   - format: int32 / int64 bound the integer; other formats (date-time, double, ...) are
//     accepted as they are;
//   - x-kubernetes-list-type map (the map keys present, no two items with the same keys) and set
//     (no duplicate items);
//   - anyOf, allOf, oneOf, not as value validations.
// Not evaluated: CEL rules (x-kubernetes-validations), defaults. Test-only, header-only.

#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::testing {

class StructuralSchema {
 public:
  explicit StructuralSchema(nlohmann::json schema) : schema_(std::move(schema)) {}

  // "path: problem" for every violation (path like ".spec.replicatedJobs[0].replicas", "<root>"
  // for the value itself); empty when the value is valid.
  std::vector<std::string> validate(const nlohmann::json& value) const {
    std::vector<std::string> errors;
    check(schema_, value, "", true, errors);
    return errors;
  }

 private:
  using json = nlohmann::json;

  static const json* field(const json& s, const char* key) {
    if (!s.is_object()) return nullptr;
    auto it = s.find(key);
    return it == s.end() ? nullptr : &*it;
  }
  static bool flag(const json& s, const char* key) {
    const json* v = field(s, key);
    return v && v->is_boolean() && v->get<bool>();
  }
  static std::string str(const json& s, const char* key) {
    const json* v = field(s, key);
    return v && v->is_string() ? v->get<std::string>() : std::string();
  }

  static bool type_matches(const std::string& type, const json& v) {
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "integer") return v.is_number_integer();
    if (type == "number") return v.is_number();
    if (type == "boolean") return v.is_boolean();
    return true;  // no type: structural schemas allow it only under preserve-unknown-fields
  }

  // Fields of metav1.ObjectMeta, for the root `metadata`.
  static void check_object_meta(const json& v, const std::string& path,
                                std::vector<std::string>& errors) {
    if (!v.is_object()) {
      errors.push_back(path + ": must be of type object, not " + v.type_name());
      return;
    }
    static const std::set<std::string> strings = {"name",
                                                  "generateName",
                                                  "namespace",
                                                  "uid",
                                                  "resourceVersion",
                                                  "creationTimestamp",
                                                  "deletionTimestamp",
                                                  "selfLink"};
    static const std::set<std::string> others = {"generation",      "deletionGracePeriodSeconds",
                                                 "labels",          "annotations",
                                                 "ownerReferences", "finalizers",
                                                 "managedFields"};
    for (const auto& [key, child] : v.items()) {
      const std::string p = path + "." + key;
      if (strings.contains(key)) {
        if (!child.is_string()) errors.push_back(p + ": must be of type string");
      } else if (key == "labels" || key == "annotations") {
        if (!child.is_object()) {
          errors.push_back(p + ": must be a map of strings");
          continue;
        }
        for (const auto& [k, val] : child.items())
          if (!val.is_string()) errors.push_back(p + "." + k + ": must be of type string");
      } else if (!others.contains(key)) {
        errors.push_back(p + ": unknown field");
      }
    }
  }

  static void check(const json& s, const json& v, const std::string& path, bool root,
                    std::vector<std::string>& errors) {
    const std::string where = path.empty() ? "<root>" : path;
    if (!s.is_object()) return;
    if (v.is_null()) {
      if (!flag(s, "nullable")) errors.push_back(where + ": null is not allowed");
      return;
    }
    if (flag(s, "x-kubernetes-int-or-string")) {
      if (!v.is_number_integer() && !v.is_string())
        errors.push_back(where + ": must be an integer or a string, not " + v.type_name());
      else
        check_value(s, v, where, errors);  // a quantity's pattern applies to the string form
      return;
    }
    check_combinators(s, v, path, errors);
    const std::string type = str(s, "type");
    if (!type.empty() && !type_matches(type, v)) {
      errors.push_back(where + ": must be of type " + type + ", not " + v.type_name());
      return;
    }
    check_value(s, v, where, errors);
    if (v.is_array()) check_array(s, v, path, errors);
    if (v.is_object()) check_object(s, v, path, root, errors);
  }

  static void check_combinators(const json& s, const json& v, const std::string& path,
                                std::vector<std::string>& errors) {
    const std::string where = path.empty() ? "<root>" : path;
    auto passes = [&](const json& alt) {
      std::vector<std::string> e;
      check(alt, v, path, false, e);
      return e.empty();
    };
    if (const json* any = field(s, "anyOf"); any && any->is_array()) {
      bool ok = false;
      for (const auto& alt : *any) ok = ok || passes(alt);
      if (!ok) errors.push_back(where + ": matches none of anyOf");
    }
    if (const json* one = field(s, "oneOf"); one && one->is_array()) {
      int n = 0;
      for (const auto& alt : *one) n += passes(alt) ? 1 : 0;
      if (n != 1) errors.push_back(where + ": must match exactly one of oneOf");
    }
    if (const json* all = field(s, "allOf"); all && all->is_array())
      for (const auto& alt : *all) check(alt, v, path, false, errors);
    if (const json* no = field(s, "not"); no && no->is_object() && passes(*no))
      errors.push_back(where + ": must not match the schema under not");
  }

  static void check_value(const json& s, const json& v, const std::string& where,
                          std::vector<std::string>& errors) {
    if (const json* e = field(s, "enum"); e && e->is_array()) {
      bool found = false;
      for (const auto& option : *e) found = found || option == v;
      if (!found) errors.push_back(where + ": " + v.dump() + " is not one of " + e->dump());
    }
    if (v.is_string()) {
      const std::string text = v.get<std::string>();
      const std::string pattern = str(s, "pattern");
      if (!pattern.empty() && !std::regex_search(text, std::regex(pattern)))
        errors.push_back(where + ": \"" + text + "\" does not match " + pattern);
      if (const json* n = field(s, "maxLength");
          n && n->is_number_unsigned() && text.size() > n->get<size_t>())
        errors.push_back(where + ": longer than " + n->dump() + " characters");
      if (const json* n = field(s, "minLength");
          n && n->is_number_unsigned() && text.size() < n->get<size_t>())
        errors.push_back(where + ": shorter than " + n->dump() + " characters");
    }
    if (v.is_number()) {
      if (const json* n = field(s, "minimum");
          n && n->is_number() && v.get<double>() < n->get<double>())
        errors.push_back(where + ": below the minimum " + n->dump());
      if (const json* n = field(s, "maximum");
          n && n->is_number() && v.get<double>() > n->get<double>())
        errors.push_back(where + ": above the maximum " + n->dump());
    }
    if (v.is_number_integer()) {
      const std::string format = str(s, "format");
      const bool fits64 =
          v.is_number_unsigned() ? v.get<std::uint64_t>() <= std::uint64_t(INT64_MAX) : true;
      const std::int64_t n = fits64 ? v.get<std::int64_t>() : 0;
      if ((format == "int32" || format == "int64") && !fits64)
        errors.push_back(where + ": " + v.dump() + " is out of range for " + format);
      else if (format == "int32" && (n < INT32_MIN || n > INT32_MAX))
        errors.push_back(where + ": " + v.dump() + " is out of range for int32");
    }
  }

  static void check_array(const json& s, const json& v, const std::string& path,
                          std::vector<std::string>& errors) {
    const std::string where = path.empty() ? "<root>" : path;
    if (const json* n = field(s, "maxItems");
        n && n->is_number_unsigned() && v.size() > n->get<size_t>())
      errors.push_back(where + ": more than " + n->dump() + " items");
    if (const json* n = field(s, "minItems");
        n && n->is_number_unsigned() && v.size() < n->get<size_t>())
      errors.push_back(where + ": fewer than " + n->dump() + " items");
    if (const json* items = field(s, "items"))
      for (size_t i = 0; i < v.size(); ++i)
        check(*items, v[i], path + "[" + std::to_string(i) + "]", false, errors);
    const std::string list_type = str(s, "x-kubernetes-list-type");
    if (list_type == "set") {
      std::set<std::string> seen;
      for (size_t i = 0; i < v.size(); ++i)
        if (!seen.insert(v[i].dump()).second)
          errors.push_back(path + "[" + std::to_string(i) + "]: duplicate " + v[i].dump());
    } else if (list_type == "map") {
      const json* keys = field(s, "x-kubernetes-list-map-keys");
      if (!keys || !keys->is_array()) return;
      const json* item_properties =
          field(s, "items") ? field(*field(s, "items"), "properties") : nullptr;
      std::set<std::string> seen;
      for (size_t i = 0; i < v.size(); ++i) {
        json tuple = json::array();
        for (const auto& k : *keys) {
          if (!k.is_string() || !v[i].is_object()) continue;
          const std::string key = k.get<std::string>();
          if (v[i].contains(key)) {
            tuple.push_back(v[i][key]);
            continue;
          }
          // A key the server defaults (ports' protocol) may be left out.
          const json* ks = item_properties ? field(*item_properties, key.c_str()) : nullptr;
          const json* dflt = ks ? field(*ks, "default") : nullptr;
          if (dflt) {
            tuple.push_back(*dflt);
          } else {
            errors.push_back(path + "[" + std::to_string(i) + "]: map key " + key + " is missing");
          }
        }
        if (!seen.insert(tuple.dump()).second)
          errors.push_back(path + "[" + std::to_string(i) + "]: duplicate entry " + tuple.dump());
      }
    }
  }

  static void check_object(const json& s, const json& v, const std::string& path, bool root,
                           std::vector<std::string>& errors) {
    const std::string where = path.empty() ? "<root>" : path;
    if (const json* required = field(s, "required"); required && required->is_array())
      for (const auto& r : *required)
        if (r.is_string() && !v.contains(r.get<std::string>()))
          errors.push_back(where + ": required field " + r.get<std::string>() + " is missing");
    const json* properties = field(s, "properties");
    if (properties && !properties->is_object()) properties = nullptr;
    const json* additional = field(s, "additionalProperties");
    const bool preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
    const bool embedded = flag(s, "x-kubernetes-embedded-resource");
    for (const auto& [key, child] : v.items()) {
      const std::string child_path = path + "." + key;
      if (properties && properties->contains(key)) {
        const json& child_schema = (*properties)[key];
        // The server checks the root's metadata as ObjectMeta; the CRD says only "object".
        if (root && key == "metadata" && !field(child_schema, "properties"))
          check_object_meta(child, child_path, errors);
        else
          check(child_schema, child, child_path, false, errors);
      } else if (additional && additional->is_object()) {
        check(*additional, child, child_path, false, errors);
      } else if ((additional && additional->is_boolean() && additional->get<bool>()) || preserve) {
        // kept as it is
      } else if (embedded && (key == "apiVersion" || key == "kind" || key == "metadata")) {
        if (key != "metadata" && !child.is_string())
          errors.push_back(child_path + ": must be of type string");
        if (key == "metadata") check_object_meta(child, child_path, errors);
      } else {
        errors.push_back(child_path + ": unknown field");
      }
    }
  }

  json schema_;
};

}  // namespace podium::testing
