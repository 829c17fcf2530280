#pragma once
// Opaque pagination cursors: base64url(JSON) + "." + MAC. A client cannot forge or alter one
// without the server's key; a tampered cursor is rejected with 400 instead of being trusted.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace podium::http {

std::string encode_cursor(std::string_view key, const nlohmann::json& position);
std::optional<nlohmann::json> decode_cursor(std::string_view key, std::string_view cursor);

}  // namespace podium::http
