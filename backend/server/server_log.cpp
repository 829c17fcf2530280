#include "backend/server/server_log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>

#include <cstdio>
#include <mutex>

namespace podium::server {

namespace {

constexpr const char* kAccessLoggerName = "podium.access";

// Structured messages are JSON objects already; plain ones (from libraries) become JSON strings,
// so every line of the log stays parseable. The access logger's lines are built as JSON by
// App::record and copied as they are.
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string_view text(msg.payload.data(), msg.payload.size());
    // accept() validates without building the document.
    if (msg.logger_name == kAccessLoggerName ||
        (!text.empty() && text.front() == '{' && nlohmann::json::accept(text))) {
      dest.append(text.data(), text.data() + text.size());
      return;
    }
    const std::string out = nlohmann::json(std::string(text))
                                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(out.data(), out.data() + out.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

// stdout through its stdio buffer (so the plain lines main() prints with std::cout keep their
// place among the log's): flushed after every line but the access logger's.
class StdoutLineSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    std::fwrite(line.data(), 1, line.size(), stdout);
    if (msg.logger_name != kAccessLoggerName) std::fflush(stdout);
  }
  void flush_() override { std::fflush(stdout); }
};

std::unique_ptr<spdlog::formatter> make_formatter(const ServerConfig& c) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  if (c.log_format == "json")
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","event":%*})");
  else
    formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %l %v");
  return formatter;
}

}  // namespace

ServerLoggers make_loggers(const ServerConfig& c) {
  auto sink = std::make_shared<StdoutLineSink>();
  sink->set_formatter(make_formatter(c));
  ServerLoggers out{std::make_shared<spdlog::logger>("podium", sink),
                    std::make_shared<spdlog::logger>(kAccessLoggerName, sink)};
  for (const auto& logger : {out.log, out.access}) {
    logger->set_level(spdlog::level::from_str(c.log_level));
    // Registered: spdlog's flusher thread flushes registered loggers.
    spdlog::register_logger(logger);
  }
  return out;
}

void flush_access_log_every(std::chrono::seconds interval) {
  spdlog::flush_every(interval);
}

std::string jline(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace podium::server
