#include "backend/server/server_log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace podium::server {

namespace {

// Structured messages are JSON objects already; plain ones (from libraries) become JSON strings,
// so every line of the log stays parseable.
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string_view text(msg.payload.data(), msg.payload.size());
    std::string out;
    // accept() validates without building the document: this runs for every logged line,
    // the access log's one per request included.
    if (!text.empty() && text.front() == '{' && nlohmann::json::accept(text))
      out = std::string(text);
    else
      out = nlohmann::json(std::string(text))
                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(out.data(), out.data() + out.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

}  // namespace

std::shared_ptr<spdlog::logger> make_logger(const ServerConfig& c) {
  auto logger = spdlog::stdout_logger_mt("podium");
  if (c.log_format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","event":%*})");
    logger->set_formatter(std::move(formatter));
  } else
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %l %v", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog::level::from_str(c.log_level));
  logger->flush_on(spdlog::level::info);
  return logger;
}

std::string jline(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace podium::server
