#include "tests/integration/support/json_schema.h"

#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <utility>

namespace podium::it {

namespace {

using nlohmann::json;

// Keywords that only describe; they never make an instance invalid.
const std::set<std::string>& annotation_keywords() {
  static const std::set<std::string> k = {
      "description",      "title",           "examples", "example",
      "default",          "deprecated",      "readOnly", "writeOnly",
      "$comment",         "discriminator",   "xml",      "externalDocs",
      "contentMediaType", "contentEncoding", "$schema",  "$id"};
  return k;
}

std::string short_dump(const json& v) {
  std::string s = v.dump();
  return s.size() > 120 ? s.substr(0, 117) + "..." : s;
}

// JSON pointer escaping of one reference token (RFC 6901).
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

bool is_integer(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool has_type(const json& v, const std::string& type) {
  if (type == "null") return v.is_null();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "integer") return is_integer(v);
  return false;
}

std::string type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  if (is_integer(v)) return "integer";
  return "number";
}

// Numbers compare by value (1 == 1.0), everything else structurally.
bool json_equal(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!json_equal(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!b.contains(it.key()) || !json_equal(it.value(), b[it.key()])) return false;
    return true;
  }
  return a == b;
}

// Code points, not bytes: maxLength counts characters (the server's bodies are UTF-8).
size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

const std::regex& compiled(const std::string& pattern) {
  thread_local std::map<std::string, std::regex> cache;
  auto it = cache.find(pattern);
  if (it == cache.end())
    it = cache.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
  return it->second;
}

class Validation {
 public:
  Validation(const json& document, std::vector<std::string>& errors)
      : document_(document), errors_(errors) {}

  void check(const json& v, const json& schema, const std::string& at, int depth = 0) {
    if (depth > 64) return fail(at, "schema nesting over 64 levels (a $ref cycle?)");
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) fail(at, "no value is allowed here");
      return;
    }
    if (!schema.is_object()) return fail(at, "schema is not an object: " + short_dump(schema));
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      const std::string& k = it.key();
      const json& s = it.value();
      if (k == "$ref") {
        const json* target = resolve(s);
        if (!target) return fail(at, "unresolvable $ref " + short_dump(s));
        check(v, *target, at, depth + 1);
      } else if (k == "type") {
        check_type(v, s, at);
      } else if (k == "enum") {
        bool found = false;
        for (const auto& e : s) found = found || json_equal(v, e);
        if (!found) fail(at, short_dump(v) + " is not one of " + short_dump(s));
      } else if (k == "const") {
        if (!json_equal(v, s)) fail(at, short_dump(v) + " is not " + short_dump(s));
      } else if (k == "properties") {
        if (!v.is_object()) continue;
        for (auto p = s.begin(); p != s.end(); ++p)
          if (v.contains(p.key()))
            check(v[p.key()], p.value(), at + "/" + pointer_token(p.key()), depth + 1);
      } else if (k == "required") {
        if (!v.is_object()) continue;
        for (const auto& name : s)
          if (!v.contains(name.get<std::string>()))
            fail(at, "required property '" + name.get<std::string>() + "' is missing");
      } else if (k == "additionalProperties") {
        if (!v.is_object()) continue;
        const json* props = schema.contains("properties") ? &schema["properties"] : nullptr;
        for (auto p = v.begin(); p != v.end(); ++p) {
          if (props && props->contains(p.key())) continue;
          if (s.is_boolean() && !s.get<bool>())
            fail(at, "property '" + p.key() + "' is not in the schema");
          else
            check(p.value(), s, at + "/" + pointer_token(p.key()), depth + 1);
        }
      } else if (k == "minProperties") {
        if (v.is_object() && v.size() < s.get<size_t>())
          fail(at, "fewer than " + s.dump() + " properties");
      } else if (k == "maxProperties") {
        if (v.is_object() && v.size() > s.get<size_t>())
          fail(at, "more than " + s.dump() + " properties");
      } else if (k == "items") {
        if (!v.is_array()) continue;
        for (size_t i = 0; i < v.size(); ++i)
          check(v[i], s, at + "/" + std::to_string(i), depth + 1);
      } else if (k == "minItems") {
        if (v.is_array() && v.size() < s.get<size_t>())
          fail(at, "fewer than " + s.dump() + " items");
      } else if (k == "maxItems") {
        if (v.is_array() && v.size() > s.get<size_t>())
          fail(at, "more than " + s.dump() + " items");
      } else if (k == "uniqueItems") {
        if (!v.is_array() || !s.get<bool>()) continue;
        for (size_t i = 0; i < v.size(); ++i)
          for (size_t j = i + 1; j < v.size(); ++j)
            if (json_equal(v[i], v[j]))
              fail(at, "items " + std::to_string(i) + " and " + std::to_string(j) + " are equal");
      } else if (k == "minimum") {
        if (v.is_number() && v.get<double>() < s.get<double>())
          fail(at, short_dump(v) + " is below the minimum " + s.dump());
      } else if (k == "maximum") {
        if (v.is_number() && v.get<double>() > s.get<double>())
          fail(at, short_dump(v) + " is above the maximum " + s.dump());
      } else if (k == "exclusiveMinimum") {
        if (v.is_number() && v.get<double>() <= s.get<double>())
          fail(at, short_dump(v) + " is not above " + s.dump());
      } else if (k == "exclusiveMaximum") {
        if (v.is_number() && v.get<double>() >= s.get<double>())
          fail(at, short_dump(v) + " is not below " + s.dump());
      } else if (k == "minLength") {
        if (v.is_string() && code_points(v.get<std::string>()) < s.get<size_t>())
          fail(at, "shorter than " + s.dump() + " characters");
      } else if (k == "maxLength") {
        if (v.is_string() && code_points(v.get<std::string>()) > s.get<size_t>())
          fail(at, "longer than " + s.dump() + " characters");
      } else if (k == "pattern") {
        if (v.is_string() &&
            !std::regex_search(v.get<std::string>(), compiled(s.get<std::string>())))
          fail(at, short_dump(v) + " does not match " + s.get<std::string>());
      } else if (k == "format") {
        if (s == "date-time" && v.is_string() && !is_rfc3339_date_time(v.get<std::string>()))
          fail(at, short_dump(v) + " is not an RFC 3339 date-time");
      } else if (k == "allOf") {
        for (const auto& sub : s) check(v, sub, at, depth + 1);
      } else if (k == "anyOf" || k == "oneOf") {
        check_alternatives(v, s, k, at, depth);
      } else if (k == "not") {
        if (sub_errors(v, s, at, depth).empty())
          fail(at, short_dump(v) + " matches a schema it must not");
      } else if (annotation_keywords().count(k) == 0 && k.rfind("x-", 0) != 0) {
        fail(at, "schema keyword '" + k + "' is not supported by this validator");
      }
    }
  }

 private:
  void fail(const std::string& at, const std::string& what) {
    errors_.push_back((at.empty() ? std::string("/") : at) + ": " + what);
  }

  const json* resolve(const json& ref) const {
    if (!ref.is_string()) return nullptr;
    const std::string r = ref.get<std::string>();
    if (r.rfind("#/", 0) != 0) return nullptr;
    try {
      const json& target = document_.at(json::json_pointer(r.substr(1)));
      return &target;
    } catch (const json::exception&) {
      return nullptr;
    }
  }

  void check_type(const json& v, const json& s, const std::string& at) {
    if (s.is_string()) {
      if (!has_type(v, s.get<std::string>()))
        fail(at, type_name(v) + " " + short_dump(v) + " where " + s.get<std::string>() +
                     " is expected");
      return;
    }
    for (const auto& t : s)
      if (has_type(v, t.get<std::string>())) return;
    fail(at, type_name(v) + " " + short_dump(v) + " where one of " + s.dump() + " is expected");
  }

  std::vector<std::string> sub_errors(const json& v, const json& schema, const std::string& at,
                                      int depth) {
    std::vector<std::string> errors;
    Validation(document_, errors).check(v, schema, at, depth + 1);
    return errors;
  }

  void check_alternatives(const json& v, const json& alternatives, const std::string& keyword,
                          const std::string& at, int depth) {
    std::vector<std::vector<std::string>> failures;
    size_t matched = 0;
    for (const auto& sub : alternatives) {
      auto errors = sub_errors(v, sub, at, depth);
      if (errors.empty())
        ++matched;
      else
        failures.push_back(std::move(errors));
    }
    if (keyword == "oneOf" && matched > 1)
      return fail(at, "matches " + std::to_string(matched) + " of the oneOf alternatives, not one");
    if (matched >= 1) return;
    std::string why = "matches none of the " + keyword + " alternatives:";
    for (size_t i = 0; i < failures.size(); ++i) {
      why += " [" + std::to_string(i) + "] " + failures[i].front();
      if (failures[i].size() > 1) why += " (+" + std::to_string(failures[i].size() - 1) + " more)";
      if (i + 1 < failures.size()) why += ";";
    }
    fail(at, why);
  }

  const json& document_;
  std::vector<std::string>& errors_;
};

}  // namespace

JsonSchema::JsonSchema(nlohmann::json document) : document_(std::move(document)) {}

std::vector<std::string> JsonSchema::validate(const nlohmann::json& instance,
                                              const nlohmann::json& schema) const {
  std::vector<std::string> errors;
  Validation(document_, errors).check(instance, schema, "");
  return errors;
}

bool is_rfc3339_date_time(const std::string& s) {
  static const std::regex re(
      R"(^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$)");
  return std::regex_match(s, re);
}

}  // namespace podium::it
