#pragma once
// podium-server's log: one line per event on stdout, text or JSON (log.format), UTC.

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/common/config.h"

namespace podium::server {

// Two loggers over one stdout sink, lines in the order they were logged. `log` writes each line
// out at once (events, errors, libraries' lines); `access` (a line per request) leaves its lines
// in stdout's buffer, written when the buffer fills, when any `log` line is written and about once
// a second (flush_access_log_every): a write(2) per request under the sink's lock was a
// measurable part of a small response's cost. At most about a second of access lines is lost if
// the process is killed.
struct ServerLoggers {
  std::shared_ptr<spdlog::logger> log;
  std::shared_ptr<spdlog::logger> access;
};
ServerLoggers make_loggers(const ServerConfig& c);

// Starts the periodic flush of every registered logger (spdlog's flusher thread).
void flush_access_log_every(std::chrono::seconds interval);

// A structured event as one line (invalid UTF-8 replaced, never thrown on).
std::string jline(const nlohmann::json& j);

}  // namespace podium::server
