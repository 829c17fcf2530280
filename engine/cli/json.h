#pragma once
// The CLI keeps JSON objects in the order the server (or run.yaml) wrote them, so that `get`
// views read top-down the way the API documents them instead of alphabetically.

#include <nlohmann/json.hpp>

namespace podium::cli {
using Json = nlohmann::ordered_json;
}  // namespace podium::cli
