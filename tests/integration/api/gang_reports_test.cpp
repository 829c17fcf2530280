// A gang's ranks report at the same moment: the rank rows commit side by side (no attempt-wide
// lock), and the attempt and its run still move exactly once, as soon as the last report is
// answered: running when every rank runs, succeeded when every rank exited 0.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// Every rank's report sent on its own thread, released together; the statuses they got.
std::vector<int> report_all_at_once(std::vector<Api>& hosts, const std::string& path,
                                    const std::function<json(int)>& body) {
  std::promise<void> go;
  std::shared_future<void> start = go.get_future().share();
  std::vector<std::future<int>> replies;
  for (size_t r = 0; r < hosts.size(); ++r)
    replies.push_back(std::async(std::launch::async, [&, r] {
      start.wait();
      return hosts[r].post(path, body(static_cast<int>(r))).status;
    }));
  go.set_value();
  std::vector<int> statuses;
  for (auto& f : replies) statuses.push_back(f.get());
  return statuses;
}

TEST(GangReports, SimultaneousReportsMoveTheAttemptAndTheRunExactlyOnce) {
  PODIUM_IT_REQUIRE_DATABASE();
  constexpr int kHosts = 16;
  Podium p;
  const std::string cluster = unique_name("gang");
  p.create_cluster(cluster, "cpu-1", {{"num_slices", kHosts}});
  Api registrar = p.as(p.worker_token(cluster));
  std::vector<std::string> workers;
  std::vector<Api> hosts;
  for (int s = 0; s < kHosts; ++s) {
    auto reg = require_status(
        registrar.post("/api/v1/agent/register", {{"cluster", cluster}, {"slice", s}, {"host", 0}}),
        200);
    workers.push_back(reg.json["worker_id"]);
    hosts.push_back(p.as(reg.json["credential"]));
  }
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string run = p.submit_run(p.admin(), cluster, unique_name("g"))["id"];
    std::string attempt;
    std::vector<Api> by_rank(static_cast<size_t>(kHosts), p.anonymous());
    for (int s = 0; s < kHosts; ++s) {
      auto a = require_status(
          hosts[static_cast<size_t>(s)].get(
              "/api/v1/agent/assignment?worker_id=" + workers[static_cast<size_t>(s)] + "&wait=10"),
          200);
      ASSERT_TRUE(a.json.contains("attempt_id")) << a;
      attempt = a.json["attempt_id"];
      by_rank[a.json["rank"].get<size_t>()] = hosts[static_cast<size_t>(s)];
    }
    const std::string path = "/api/v1/agent/attempts/" + attempt + "/status";

    for (int status : report_all_at_once(by_rank, path, [](int r) {
           return json{{"rank", r}, {"state", "running"}, {"pid", 100 + r}};
         }))
      ASSERT_EQ(status, 200);
    // Answered: the last report already moved the attempt (no waiting for a sweep).
    EXPECT_EQ(require_status(p.admin().get("/api/v1/runs/" + run), 200).json["state"], "running");

    for (int status : report_all_at_once(by_rank, path, [](int r) {
           return json{{"rank", r}, {"state", "exited"}, {"exit_code", 0}};
         }))
      ASSERT_EQ(status, 200);
    EXPECT_EQ(require_status(p.admin().get("/api/v1/runs/" + run), 200).json["state"], "succeeded");

    // A retried report changes nothing and says where the attempt stands.
    auto again = require_status(
        by_rank[3].post(path, {{"rank", 3}, {"state", "exited"}, {"exit_code", 0}}), 200);
    EXPECT_EQ(again.json["attempt_state"], "succeeded") << again;

    int to_running = 0, to_succeeded = 0;
    const auto events = require_status(p.admin().get("/api/v1/runs/" + run + "/events"), 200);
    for (const auto& e : events.json["items"]) {
      if (e["from_state"] == "starting" && e["to_state"] == "running") ++to_running;
      if (e["to_state"] == "succeeded") ++to_succeeded;
    }
    EXPECT_EQ(to_running, 1);
    EXPECT_EQ(to_succeeded, 1);
  }
}

}  // namespace
}  // namespace podium::it
