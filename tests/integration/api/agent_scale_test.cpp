// A pod's worth of agents on a server with two handler threads: their assignment long-polls wait
// in the HTTP layer without holding a thread, so other requests keep being served (no 503 from
// the bounded handler queue), heartbeats keep their lane, and a gang placed on all of them wakes
// every poll with its rank.
#include <gtest/gtest.h>

#include <future>
#include <set>
#include <thread>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

TEST(AgentScale, ParkedLongPollsOfFortyEightHostsLeaveTheServerFreeAndAllWakeForTheirGang) {
  PODIUM_IT_REQUIRE_DATABASE();
  constexpr int kHosts = 48;
  Podium podium({.settings = {"limits.handler_threads=2", "limits.handler_queue=4"}});
  auto member = podium.create_user("member");
  podium.create_cluster("pod", "cpu-1", {{"num_slices", kHosts}});
  Api registrar(podium.url(), podium.worker_token("pod"));

  std::vector<std::string> workers;
  std::vector<Api> agents;
  for (int s = 0; s < kHosts; ++s) {
    auto reg = require_status(
        registrar.post("/api/v1/agent/register", json{{"cluster", "pod"},
                                                      {"slice", s},
                                                      {"host", 0},
                                                      {"instance", "scale-" + std::to_string(s)}}),
        200);
    workers.push_back(reg.json["worker_id"]);
    agents.emplace_back(podium.url(), reg.json["credential"].get<std::string>());
    agents.back().set_timeout(60s);
  }

  std::vector<std::future<Reply>> polls;
  for (int s = 0; s < kHosts; ++s)
    polls.push_back(std::async(std::launch::async, [&, s] {
      // 48 polls at once overflow a queue of four: the server says 503 + Retry-After and the
      // agent comes back, as podium-worker does.
      for (;;) {
        auto r = agents[static_cast<size_t>(s)].get(
            "/api/v1/agent/assignment?worker_id=" + workers[static_cast<size_t>(s)] + "&wait=40");
        if (r.status != 503) return r;
        std::this_thread::sleep_for(std::chrono::milliseconds(50 + 20 * s));
      }
    }));
  std::this_thread::sleep_for(4s);  // let every poll reach the server and park

  // With 48 polls waiting, two handler threads and a queue of four, the rest of the API and the
  // heartbeats are answered, not refused.
  for (int i = 0; i < 10; ++i) {
    auto r = member.api.get("/api/v1/clusters");
    ASSERT_EQ(r.status, 200) << r;
  }
  for (int s = 0; s < kHosts; ++s) {
    auto r = agents[static_cast<size_t>(s)].post(
        "/api/v1/agent/heartbeat", json{{"worker_id", workers[static_cast<size_t>(s)]}});
    ASSERT_EQ(r.status, 200) << r;
  }
  for (auto& p : polls)
    ASSERT_EQ(p.wait_for(0s), std::future_status::timeout) << "a poll ended before any work";

  // One gang over all 48 slices: every parked poll is woken with its rank.
  auto run = podium.submit_run(member.api, "pod", unique_name("gang"));
  std::set<int> ranks;
  std::set<std::string> attempts;
  for (auto& p : polls) {
    auto r = p.get();
    ASSERT_EQ(r.status, 200) << r;
    ASSERT_TRUE(r.json.contains("attempt_id")) << r;
    attempts.insert(r.json["attempt_id"].get<std::string>());
    ranks.insert(r.json["rank"].get<int>());
  }
  EXPECT_EQ(attempts.size(), 1u);
  EXPECT_EQ(ranks.size(), static_cast<size_t>(kHosts));
  EXPECT_EQ(*ranks.begin(), 0);
  EXPECT_EQ(*ranks.rbegin(), kHosts - 1);
  require_status(member.api.post("/api/v1/runs/" + run["id"].get<std::string>() + "/cancel"), 200);
}

}  // namespace
}  // namespace podium::it
