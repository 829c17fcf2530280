#pragma once
// The agent's own log: stderr, one line per event, as text or JSON lines. Never a secret in it.

#include <spdlog/spdlog.h>

#include <string>

namespace podium::worker {

// "text" (default) or "json"; false for anything else. Safe to call more than once.
bool configure_logging(const std::string& format);
spdlog::logger& log();

}  // namespace podium::worker
