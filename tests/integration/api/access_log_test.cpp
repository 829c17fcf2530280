// The access log (backend/api/app.cpp writes the line, backend/server/server_log.cpp the log):
// one JSON line per request holding what an operator looks for and nothing secret, written out
// within about a second even when nothing else is logged (the access lines are not flushed one
// by one).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// The "event" of the server log's line whose request_id is `id`; null if there is none yet.
json find_request_line(const std::filesystem::path& log, const std::string& id,
                       std::string& whole_log) {
  std::ifstream in(log);
  whole_log.clear();
  json found;
  for (std::string line; std::getline(in, line);) {
    whole_log += line + "\n";
    auto parsed = json::parse(line, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("event")) continue;
    const json& event = parsed["event"];
    if (event.is_object() && event.value("request_id", "") == id) found = event;
  }
  return found;
}

// Polls the server's log for the access line of request `id` (5 s at most).
json wait_for_request_line(Podium& podium, const std::string& id, std::string& whole_log) {
  json event;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (event.is_null() && std::chrono::steady_clock::now() < deadline) {
    event = find_request_line(podium.server().log_path(), id, whole_log);
    if (event.is_null()) std::this_thread::sleep_for(50ms);
  }
  return event;
}

TEST(AccessLog, ALineParsesHoldsNoSecretsAndIsWrittenWithinSeconds) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium podium;
  const auto reply = podium.admin().raw(
      "GET", "/api/v1/runs/run_%22quote?token=SEKRET_QUERY", "",
      {{"Cookie", "podium_session=SEKRET_COOKIE"}, {"X-Request-Id", "access-log-check-1"}});
  ASSERT_EQ(reply.status, 404) << reply;
  ASSERT_EQ(reply.header("x-request-id"), "access-log-check-1");

  // Nothing else is asked of the server meanwhile: the line must come out on its own.
  std::string whole_log;
  const json event = wait_for_request_line(podium, "access-log-check-1", whole_log);
  ASSERT_FALSE(event.is_null()) << "no access line within 5 s; the log:\n" << whole_log;
  EXPECT_EQ(event["msg"], "request");
  EXPECT_EQ(event["method"], "GET");
  EXPECT_EQ(event["route"], "/api/v1/runs/{id}");
  EXPECT_EQ(event["path"], "/api/v1/runs/run_\"quote");
  EXPECT_EQ(event["status"], 404);
  EXPECT_EQ(event["bytes"], reply.body.size());
  ASSERT_TRUE(event["duration_ms"].is_number()) << event;
  EXPECT_GE(event["duration_ms"].get<double>(), 0.0);
  EXPECT_EQ(event["user"], "admin");
  EXPECT_EQ(event["remote"], "127.0.0.1");

  // A path that decodes to bytes that are not UTF-8: the line still parses.
  const auto bad = podium.anonymous().raw("GET", "/api/v1/runs/run_%FF%C3", "",
                                          {{"X-Request-Id", "access-log-check-2"}});
  ASSERT_NE(bad.status, 0) << bad;
  const json second = wait_for_request_line(podium, "access-log-check-2", whole_log);
  ASSERT_FALSE(second.is_null()) << "no access line within 5 s; the log:\n" << whole_log;
  EXPECT_EQ(second["path"], "/api/v1/runs/run_\xef\xbf\xbd\xef\xbf\xbd") << second;
  EXPECT_EQ(second["status"], bad.status);
  EXPECT_EQ(second["user"], "");

  EXPECT_EQ(whole_log.find("SEKRET"), std::string::npos) << whole_log;
  EXPECT_EQ(whole_log.find(podium.server().admin_token()), std::string::npos);
}

}  // namespace
}  // namespace podium::it
