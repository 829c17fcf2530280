#include "backend/common/cursor.h"

#include "backend/common/secrets.h"

namespace podium::http {

std::string encode_cursor(std::string_view key, const nlohmann::json& position) {
  std::string payload = secrets::base64url_encode(position.dump());
  return payload + "." + secrets::mac(key, payload).substr(0, 32);
}

std::optional<nlohmann::json> decode_cursor(std::string_view key, std::string_view cursor) {
  if (cursor.size() > 4096) return std::nullopt;
  size_t dot = cursor.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view payload = cursor.substr(0, dot);
  std::string_view tag = cursor.substr(dot + 1);
  if (!secrets::constant_time_equal(tag, secrets::mac(key, payload).substr(0, 32)))
    return std::nullopt;
  auto raw = secrets::base64url_decode(payload);
  if (!raw) return std::nullopt;
  auto j = nlohmann::json::parse(*raw, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

}  // namespace podium::http
