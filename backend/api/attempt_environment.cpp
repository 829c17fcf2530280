#include "backend/api/attempt_environment.h"

namespace podium::api {

namespace {

using nlohmann::json;

constexpr const char* kRankKeys[] = {"python",  "jax",        "jaxlib",        "libtpu",
                                     "maxtext", "git_commit", "maxtext_commit"};
constexpr const char* kRecordedKeys[] = {"code_digest", "image"};

json string_or_null(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? *it : json(nullptr);
}

}  // namespace

json attempt_environment_json(const json& recorded, const std::vector<json>& ranks) {
  json out = json::object();
  json differs = json::array();
  for (const char* key : kRankKeys) {
    out[key] = ranks.empty() ? json(nullptr) : string_or_null(ranks.front(), key);
    for (const json& r : ranks)
      if (string_or_null(r, key) != out[key]) {
        differs.push_back(key);
        break;
      }
  }
  for (const char* key : kRecordedKeys) out[key] = string_or_null(recorded, key);
  out["ranks_reported"] = ranks.size();
  out["differs"] = std::move(differs);
  return out;
}

}  // namespace podium::api
