#pragma once
// JSON as compact text for a database column, a request body or a log record.
#include <string>

#include <nlohmann/json.hpp>

namespace podium::core {

// Bytes that are not valid UTF-8 (a rank's log line, a user's label) become U+FFFD instead of
// throwing: whatever reached a json value is stored rather than failing the write that carries it.
std::string json_text(const nlohmann::json& j);

}  // namespace podium::core
