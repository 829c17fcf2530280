#pragma once
// Field readers shared by the run spec's parsers (run_spec.cpp, run_spec_lifecycle.cpp): each
// reads one JSON value and records a field error instead of throwing. Internal to engine/core/spec.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/validation/field_error.h"

namespace podium::core::spec_detail {

using nlohmann::json;

inline const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    case json::value_t::number_float:
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "number";
    default:
      return "value";
  }
}

// Collects field errors into the caller's list.
class Parser {
 public:
  explicit Parser(std::vector<FieldError>& errors) : errors_(errors) {}

  void error(const std::string& field, const std::string& message) {
    errors_.push_back({field, message});
  }

  // Integral JSON numbers (an integral float such as 10.0 is accepted too).
  std::optional<std::int64_t> integer(const json& v, const std::string& field, std::int64_t lo,
                                      std::int64_t hi) {
    std::optional<std::int64_t> out;
    if (v.is_number_integer()) {
      out = v.get<std::int64_t>();
    } else if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        error(field, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
        return std::nullopt;
      }
      out = static_cast<std::int64_t>(u);
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e15) {
        error(field, "must be an integer");
        return std::nullopt;
      }
      out = static_cast<std::int64_t>(d);
    } else {
      error(field, std::string("must be an integer, got ") + type_name(v));
      return std::nullopt;
    }
    if (*out < lo || *out > hi) {
      error(field, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                       ", got " + std::to_string(*out));
      return std::nullopt;
    }
    return out;
  }

  std::optional<std::string> string(const json& v, const std::string& field, bool non_empty) {
    if (!v.is_string()) {
      error(field, std::string("must be a string, got ") + type_name(v));
      return std::nullopt;
    }
    std::string s = v.get<std::string>();
    if (non_empty && s.empty()) {
      error(field, "must not be empty");
      return std::nullopt;
    }
    return s;
  }

 private:
  std::vector<FieldError>& errors_;
};

inline constexpr size_t kMaxNameLength = 128;

// Names end up in MaxText's run_name, checkpoint paths and xpk workload names: a conservative
// character set avoids quoting problems everywhere.
inline bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  if (!std::isalnum(static_cast<unsigned char>(s.front()))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace podium::core::spec_detail
