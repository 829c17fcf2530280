// /healthz on the liveness lane: with every handler thread blocked (two requests waiting on a row
// lock the test holds), the liveness probe still answers, so an orchestrator does not restart a
// server whose handlers are busy. Handler threads are few (limits.handler_threads scales with the
// cores), which makes that a common state under load rather than a rare one.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "backend/db/connection.h"
#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

TEST(HealthLane, HealthzAnswersWhileEveryHandlerThreadIsBlocked) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium podium({.settings = {"limits.handler_threads=2"}});
  auto member = podium.create_user("member");
  podium.create_cluster("pod", "cpu-1");
  const std::string id = podium.submit_run(member.api, "pod")["id"];

  // The test's own transaction holds the run's row; each cancel waits for it in a handler thread.
  const auto deadline = [] { return db::Clock::now() + 30s; };
  auto holder = db::Connection::open({.conninfo = podium.db().url()});
  holder->exec("BEGIN", {}, deadline());
  holder->exec("SELECT id FROM runs WHERE id = $1 FOR UPDATE", {id}, deadline());
  std::vector<std::future<Reply>> cancels;
  for (int i = 0; i < 2; ++i)
    cancels.push_back(std::async(std::launch::async, [&podium, &member, &id] {
      Api api = podium.as(member.token);
      api.set_timeout(60s);
      return api.post("/api/v1/runs/" + id + "/cancel");
    }));
  const std::string waiting =
      "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
      "wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'";
  while (podium.db().scalar(waiting) != "2") std::this_thread::sleep_for(20ms);

  // Both handler threads are blocked: a standard-lane request would queue until the lock goes,
  // which is only after this probe has answered (or given up).
  Api probe = podium.anonymous();
  probe.set_timeout(10s);
  const Reply health = probe.get("/healthz");
  const bool still_blocked = podium.db().scalar(waiting) == "2";
  holder->exec("ROLLBACK", {}, deadline());
  EXPECT_EQ(health.status, 200) << health;
  EXPECT_TRUE(still_blocked) << "the cancels stopped waiting before the probe answered";
  for (auto& c : cancels) {
    const Reply r = c.get();
    EXPECT_TRUE(r.status == 200 || r.status == 409) << r;  // the second finds it cancelled
  }
}

}  // namespace
}  // namespace podium::it
