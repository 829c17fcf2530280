#pragma once
// JSON as compact text for a database column, a request body or a log record.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace podium::core {

// Bytes that are not valid UTF-8 (a rank's log line, a user's label) become U+FFFD instead of
// throwing: whatever reached a json value is stored rather than failing the write that carries it.
std::string json_text(const nlohmann::json& j);

// Appends s as a JSON string (quoted and escaped; bytes that are not UTF-8 become U+FFFD, as in
// sanitize_utf8) without building a json value: for a line written per request (the access log).
void append_json_string(std::string& out, std::string_view s);

}  // namespace podium::core
