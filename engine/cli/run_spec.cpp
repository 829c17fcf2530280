#include "engine/cli/run_spec.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace podium::cli {
namespace {

using json = Json;

struct ConversionError {
  std::string message;
};

std::string where(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.line < 0) return {};
  return "line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1) + ": ";
}

bool is_null_text(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::optional<bool> bool_text(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

bool all_of(std::string_view s, bool (*pred)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}

bool is_dec(char c) {
  return c >= '0' && c <= '9';
}
bool is_oct(char c) {
  return c >= '0' && c <= '7';
}
bool is_hex(char c) {
  return is_dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// YAML 1.2 core schema integers: [-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+.
// Returns nullopt when the text is not an integer; throws ConversionError when it is one that
// does not fit 64 bits (turning it into a float would silently lose digits).
std::optional<json> int_value(std::string_view s, const YAML::Node& node) {
  int base = 10;
  bool negative = false;
  std::string_view digits = s;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
    base = s[1] == 'o' ? 8 : 16;
    digits = s.substr(2);
    if (!all_of(digits, base == 8 ? is_oct : is_hex)) return std::nullopt;
  } else {
    if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) {
      negative = digits.front() == '-';
      digits.remove_prefix(1);
    }
    if (!all_of(digits, is_dec)) return std::nullopt;
  }
  std::uint64_t magnitude = 0;
  const auto [ptr, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    throw ConversionError{where(node) + "integer out of range: " + std::string(s)};
  }
  if (!negative) {
    if (magnitude <= static_cast<std::uint64_t>(INT64_MAX))
      return json(static_cast<std::int64_t>(magnitude));
    return json(magnitude);
  }
  if (magnitude > static_cast<std::uint64_t>(INT64_MAX) + 1) {
    throw ConversionError{where(node) + "integer out of range: " + std::string(s)};
  }
  if (magnitude == static_cast<std::uint64_t>(INT64_MAX) + 1) return json(INT64_MIN);
  return json(-static_cast<std::int64_t>(magnitude));
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool float_syntax(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t int_digits = 0;
  while (i < s.size() && is_dec(s[i])) ++i, ++int_digits;
  size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_dec(s[i])) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && is_dec(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

bool special_float(std::string_view s) {
  for (std::string_view v : {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
                             "-.INF", ".nan", ".NaN", ".NAN"}) {
    if (s == v) return true;
  }
  return false;
}

std::optional<json> float_value(std::string_view s, const YAML::Node& node) {
  if (special_float(s))
    throw ConversionError{where(node) + "JSON has no infinity or NaN: " + std::string(s)};
  if (!float_syntax(s)) return std::nullopt;
  std::string_view t = s;
  if (t.front() == '+') t.remove_prefix(1);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(v)) {
    throw ConversionError{where(node) + "number out of range: " + std::string(s)};
  }
  return json(v);
}

json scalar(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  const std::string& tag = node.Tag();
  // yaml-cpp tags quoted scalars "!" and plain ones "?"; explicit tags come through expanded.
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return text;
  if (tag == "tag:yaml.org,2002:null") return nullptr;
  if (tag == "tag:yaml.org,2002:bool") {
    if (auto b = bool_text(text)) return *b;
    throw ConversionError{where(node) + "not a boolean: " + text};
  }
  if (tag == "tag:yaml.org,2002:int") {
    if (auto v = int_value(text, node)) return *v;
    throw ConversionError{where(node) + "not an integer: " + text};
  }
  if (tag == "tag:yaml.org,2002:float") {
    if (auto v = float_value(text, node)) return *v;  // "3" is a valid !!float: 3.0
    throw ConversionError{where(node) + "not a number: " + text};
  }
  if (tag != "?" && !tag.empty())
    throw ConversionError{where(node) + "unsupported YAML tag " + tag};
  if (is_null_text(text)) return nullptr;
  if (auto b = bool_text(text)) return *b;
  if (auto v = int_value(text, node)) return *v;
  if (auto v = float_value(text, node)) return *v;
  return text;
}

json convert(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar(node);
    case YAML::NodeType::Sequence: {
      json arr = json::array();
      for (const auto& item : node) arr.push_back(convert(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      json obj = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar())
          throw ConversionError{where(kv.first) + "map keys must be plain values"};
        const std::string& key = kv.first.Scalar();
        if (obj.contains(key))
          throw ConversionError{where(kv.first) + "duplicate key '" + key + "'"};
        obj[key] = convert(kv.second);
      }
      return obj;
    }
  }
  return nullptr;
}

}  // namespace

YamlToJson yaml_to_json(const std::string& text) {
  YamlToJson out;
  try {
    const YAML::Node root = YAML::Load(text);
    out.value = convert(root);
  } catch (const ConversionError& e) {
    out.error = e.message;
  } catch (const YAML::Exception& e) {
    const std::string at = e.mark.is_null()
                               ? std::string()
                               : "line " + std::to_string(e.mark.line + 1) + ", column " +
                                     std::to_string(e.mark.column + 1) + ": ";
    out.error = at + e.msg;
  }
  return out;
}

YamlToJson load_run_spec(const std::string& text) {
  YamlToJson out = yaml_to_json(text);
  if (!out.value) return out;
  if (out.value->is_null()) {
    out.value.reset();
    out.error = "the run spec is empty";
  } else if (!out.value->is_object()) {
    out.value.reset();
    out.error = "the run spec must be a mapping of fields (name:, cluster:, model:, ...)";
  }
  return out;
}

}  // namespace podium::cli
