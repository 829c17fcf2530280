#include "backend/common/json_input.h"

#include <cmath>

namespace podium::http {

namespace {
int max_depth(const std::string& body) {
  int depth = 0, worst = 0;
  bool in_string = false, escape = false;
  for (char c : body) {
    if (in_string) {
      if (escape)
        escape = false;
      else if (c == '\\')
        escape = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[')
      worst = std::max(worst, ++depth);
    else if (c == '}' || c == ']')
      --depth;
  }
  return worst;
}
}  // namespace

nlohmann::json parse_json_object(const Request& req) {
  if (auto ct = req.header("content-type"); ct && !req.body.empty()) {
    std::string v(*ct);
    if (v.find("json") == std::string::npos)
      throw Problem{415,
                    "",
                    "expected Content-Type application/json, got '" + v + "'",
                    {},
                    nlohmann::json::object()};
  }
  if (req.body.empty()) throw bad_request("the request body is empty; expected a JSON object");
  if (max_depth(req.body) > 32) throw bad_request("the JSON body is nested deeper than 32 levels");
  auto j = nlohmann::json::parse(req.body, nullptr, false);
  if (j.is_discarded()) throw bad_request("the request body is not valid JSON");
  if (!j.is_object()) throw bad_request("the request body must be a JSON object");
  return j;
}

ObjectReader::ObjectReader(const nlohmann::json& object, std::string prefix)
    : obj_(object), prefix_(std::move(prefix)) {}

const nlohmann::json* ObjectReader::get(const std::string& key) {
  seen_.insert(key);
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool ObjectReader::present(const std::string& key) const {
  return obj_.contains(key);
}
bool ObjectReader::is_null(const std::string& key) const {
  return obj_.contains(key) && obj_.at(key).is_null();
}

void ObjectReader::error(const std::string& key, std::string message) {
  errors_.push_back({prefix_ + key, std::move(message)});
}

std::optional<std::string> ObjectReader::string(const std::string& key, bool required,
                                                size_t max_len) {
  const auto* v = get(key);
  if (!v) {
    if (required) error(key, "is required");
    return std::nullopt;
  }
  if (!v->is_string()) {
    error(key, "must be a string");
    return std::nullopt;
  }
  auto s = v->get<std::string>();
  if (s.size() > max_len) {
    error(key, "must be at most " + std::to_string(max_len) + " characters");
    return std::nullopt;
  }
  if (required && s.empty()) {
    error(key, "must not be empty");
    return std::nullopt;
  }
  return s;
}

std::optional<int64_t> ObjectReader::integer(const std::string& key, bool required, int64_t min,
                                             int64_t max) {
  const auto* v = get(key);
  if (!v) {
    if (required) error(key, "is required");
    return std::nullopt;
  }
  if (!v->is_number_integer()) {
    if (v->is_number_float()) {
      double d = v->get<double>();
      if (std::floor(d) == d && std::fabs(d) < 9e15)
        return integer_check(key, static_cast<int64_t>(d), min, max);
    }
    error(key, "must be an integer");
    return std::nullopt;
  }
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    error(key, "is out of range");
    return std::nullopt;
  }
  return integer_check(key, v->get<int64_t>(), min, max);
}

std::optional<int64_t> ObjectReader::integer_check(const std::string& key, int64_t value,
                                                   int64_t min, int64_t max) {
  if (value < min || value > max) {
    error(key, "must be between " + std::to_string(min) + " and " + std::to_string(max));
    return std::nullopt;
  }
  return value;
}

std::optional<double> ObjectReader::number(const std::string& key, bool required, double min,
                                           double max) {
  const auto* v = get(key);
  if (!v) {
    if (required) error(key, "is required");
    return std::nullopt;
  }
  if (!v->is_number()) {
    error(key, "must be a number");
    return std::nullopt;
  }
  double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    error(key, "is out of range");
    return std::nullopt;
  }
  return d;
}

std::optional<bool> ObjectReader::boolean(const std::string& key, bool required) {
  const auto* v = get(key);
  if (!v) {
    if (required) error(key, "is required");
    return std::nullopt;
  }
  if (!v->is_boolean()) {
    error(key, "must be true or false");
    return std::nullopt;
  }
  return v->get<bool>();
}

std::optional<nlohmann::json> ObjectReader::object(const std::string& key, bool required,
                                                   bool string_values) {
  const auto* v = get(key);
  if (!v) {
    if (required) error(key, "is required");
    return std::nullopt;
  }
  if (!v->is_object()) {
    error(key, "must be an object");
    return std::nullopt;
  }
  if (string_values) {
    for (const auto& [k, val] : v->items()) {
      if (!val.is_string()) {
        error(key + "." + k, "must be a string");
        return std::nullopt;
      }
    }
  }
  return *v;
}

std::optional<nlohmann::json> ObjectReader::any(const std::string& key) {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  return *v;
}

std::optional<std::vector<std::string>> ObjectReader::string_array(const std::string& key,
                                                                   bool required,
                                                                   size_t max_items) {
  const auto* v = get(key);
  if (!v) {
    if (required) error(key, "is required");
    return std::nullopt;
  }
  if (!v->is_array() || v->size() > max_items) {
    error(key, "must be an array of at most " + std::to_string(max_items) + " strings");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const auto& item : *v) {
    if (!item.is_string() || item.get<std::string>().size() > 256) {
      error(key, "must contain strings of at most 256 characters");
      return std::nullopt;
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::optional<std::string> ObjectReader::choice(const std::string& key, bool required,
                                                const std::vector<std::string>& choices) {
  auto s = string(key, required);
  if (!s) return std::nullopt;
  for (const auto& c : choices)
    if (c == *s) return s;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  error(key, "must be one of: " + list);
  return std::nullopt;
}

void ObjectReader::reject_unknown_fields() {
  for (const auto& [k, v] : obj_.items())
    if (!seen_.count(k)) error(k, "is not a known field");
}

void ObjectReader::finish(const std::string& detail) {
  if (!errors_.empty()) throw bad_request(detail, errors_);
}

}  // namespace podium::http
