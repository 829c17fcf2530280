#include "engine/worker/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <mutex>
#include <nlohmann/json.hpp>

namespace podium::worker {

namespace {

// The message as a JSON string, so every line of the JSON log parses.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string out = nlohmann::json(std::string(msg.payload.data(), msg.payload.size()))
                                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(out.data(), out.data() + out.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

std::mutex g_mu;
std::shared_ptr<spdlog::logger> g_logger;

std::shared_ptr<spdlog::logger> make_logger() {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("podium-worker", sink);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %l %v", spdlog::pattern_time_type::utc);
  logger->flush_on(spdlog::level::trace);
  return logger;
}

}  // namespace

bool configure_logging(const std::string& format) {
  if (format != "text" && format != "json") return false;
  std::lock_guard lock(g_mu);
  if (!g_logger) g_logger = make_logger();
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","msg":%*})");
    g_logger->set_formatter(std::move(formatter));
  } else {
    g_logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %l %v", spdlog::pattern_time_type::utc);
  }
  return true;
}

spdlog::logger& log() {
  std::lock_guard lock(g_mu);
  if (!g_logger) g_logger = make_logger();
  return *g_logger;
}

}  // namespace podium::worker
