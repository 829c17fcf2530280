#pragma once
// Reading untrusted JSON request bodies: parse once, read fields with type checks, collect every
// problem as a field error (so a client sees all of them at once), report unknown fields.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/common/http_message.h"
#include "backend/common/problem.h"
#include "engine/core/text/utf8.h"

namespace podium::http {

// Parses the body as a JSON object; throws Problem 400 (malformed) or 415 (wrong content type).
// Depth is limited so a deeply nested body cannot exhaust the stack.
nlohmann::json parse_json_object(const Request& req);

class ObjectReader {
 public:
  explicit ObjectReader(const nlohmann::json& object, std::string prefix = "");

  std::optional<std::string> string(const std::string& key, bool required, size_t max_len = 256);
  std::optional<int64_t> integer(const std::string& key, bool required, int64_t min = INT64_MIN,
                                 int64_t max = INT64_MAX);
  std::optional<double> number(const std::string& key, bool required, double min = -1e300,
                               double max = 1e300);
  std::optional<bool> boolean(const std::string& key, bool required);
  // Any JSON object (e.g. labels): string values only when string_values is set.
  std::optional<nlohmann::json> object(const std::string& key, bool required,
                                       bool string_values = false);
  std::optional<nlohmann::json> any(const std::string& key);  // accepted as is
  std::optional<std::vector<std::string>> string_array(const std::string& key, bool required,
                                                       size_t max_items = 100);
  // A string that must be one of choices.
  std::optional<std::string> choice(const std::string& key, bool required,
                                    const std::vector<std::string>& choices);
  bool present(const std::string& key) const;
  bool is_null(const std::string& key) const;

  void error(const std::string& key, std::string message);
  // Fields present in the object that no accessor asked for.
  void reject_unknown_fields();
  const std::vector<FieldError>& errors() const { return errors_; }
  // Throws Problem 400 listing every field error (missing, wrong type, out of range, unknown).
  void finish(const std::string& detail = "the request body is invalid");

 private:
  const nlohmann::json* get(const std::string& key);
  std::optional<int64_t> integer_check(const std::string& key, int64_t value, int64_t min,
                                       int64_t max);
  const nlohmann::json& obj_;
  std::string prefix_;
  std::set<std::string> seen_;
  std::vector<FieldError> errors_;
};

// Strict RFC 3629 (no overlong forms, surrogates or code points above U+10FFFF): path and query
// parameters are checked with it before any of them reaches SQL, since PostgreSQL refuses
// invalid UTF-8 only after the request got that far.
using core::valid_utf8;

}  // namespace podium::http
