// Two podium-server replicas on one database, both dispatching: a run is placed once and a host
// holds one rank at a time (placement reads runs and clusters FOR UPDATE SKIP LOCKED).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

TEST(Replicas, TwoDispatchersPlaceEveryRunOnceAndNeverDoubleBookAHost) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p;
  auto second = p.second_server();
  const Api a = p.admin();
  const Api b(second->url(), second->admin_token());

  const std::string cluster = unique_name("rep");
  p.create_cluster(cluster, "cpu-1", {{"num_slices", 3}});
  const std::string token = p.worker_token(cluster);
  const Api registrars[2] = {p.as(token), Api(second->url(), token)};
  std::vector<std::string> workers, credentials;
  for (int s = 0; s < 3; ++s) {
    auto reg = require_status(
        registrars[s % 2].post("/api/v1/agent/register", {{"cluster", cluster},
                                                          {"slice", s},
                                                          {"host", 0},
                                                          {"instance", "w" + std::to_string(s)}}),
        200);
    workers.push_back(reg.json["worker_id"]);
    credentials.push_back(reg.json["credential"]);
  }
  constexpr int kRuns = 12;
  std::set<std::string> runs;
  for (int i = 0; i < kRuns; ++i)
    // One slice each (a run takes all of its cluster's slices unless it says otherwise).
    runs.insert(
        p.submit_run(i % 2 ? b : a, cluster, "", {{"num_slices", 1}})["id"].get<std::string>());

  // Drive the three hosts through both replicas until every run finished.
  std::map<std::string, int> assignments_per_run;
  int finished = 0;
  for (int round = 0; round < 200 && finished < kRuns; ++round) {
    for (size_t w = 0; w < workers.size(); ++w) {
      // Each host with its own credential, through either replica.
      const Api agent((round + w) % 2 ? second->url() : p.url(), credentials[w]);
      auto r = agent.get("/api/v1/agent/assignment?worker_id=" + workers[w] + "&wait=1");
      if (r.status == 204) continue;
      require_status(r, 200);
      ASSERT_TRUE(r.json.contains("attempt_id")) << r;
      ++assignments_per_run[r.json["run_id"]];
      // No host ever holds two live ranks.
      const std::string doubled = p.db().scalar(
          "SELECT count(*) FROM (SELECT worker_id FROM attempt_hosts WHERE ended_at IS NULL "
          "GROUP BY worker_id HAVING count(*) > 1) d");
      ASSERT_EQ(doubled, "0") << "a host holds two live ranks";
      const std::string path =
          "/api/v1/agent/attempts/" + r.json["attempt_id"].get<std::string>() + "/status";
      require_status(
          agent.post(path, {{"rank", r.json["rank"]}, {"state", "running"}, {"pid", 100 + round}}),
          200);
      require_status(
          agent.post(path, {{"rank", r.json["rank"]}, {"state", "exited"}, {"exit_code", 0}}), 200);
      ++finished;
    }
  }
  EXPECT_EQ(finished, kRuns);
  EXPECT_EQ(assignments_per_run.size(), static_cast<size_t>(kRuns));
  for (const auto& [run, n] : assignments_per_run) EXPECT_EQ(n, 1) << run << " was assigned twice";
  EXPECT_EQ(p.db().scalar("SELECT count(*) FROM attempts"), std::to_string(kRuns));
  EXPECT_EQ(p.db().scalar("SELECT count(*) FROM runs WHERE state = 'succeeded'"),
            std::to_string(kRuns));
}

}  // namespace
}  // namespace podium::it
