#pragma once
// podium-server's log: one line per event on stdout, text or JSON (log.format), UTC.

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/common/config.h"

namespace podium::server {

std::shared_ptr<spdlog::logger> make_logger(const ServerConfig& c);

// A structured event as one line (invalid UTF-8 replaced, never thrown on).
std::string jline(const nlohmann::json& j);

}  // namespace podium::server
