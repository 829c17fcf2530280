// What each attempt ran with (issue 27, point 5): a rank's `running` report carries what its
// agent's probe found (versions, commits), stored per rank (migration 0017) and shown per attempt
// in GET /runs/{id}/attempts and for the latest attempt in GET /runs/{id}.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

class AttemptEnvironment : public PodiumTest {
 protected:
  // A cpu-2 cluster (two hosts) with both agents registered and a command run placed on them.
  void SetUp() override {
    PodiumTest::SetUp();
    if (IsSkipped()) return;
    cluster = unique_name("env");
    podium().create_cluster(cluster, "cpu-2");
    const std::string token = podium().worker_token(cluster);
    for (int host = 0; host < 2; ++host) {
      auto r = require_status(podium().as(token).post("/api/v1/agent/register",
                                                      {{"cluster", cluster},
                                                       {"slice", 0},
                                                       {"host", host},
                                                       {"address", "127.0.0.1"},
                                                       {"instance", "i" + std::to_string(host)}}),
                              200);
      agents.push_back({podium().as(r.json["credential"]), r.json["worker_id"]});
    }
    run_id = podium().submit_run(podium().admin(), cluster)["id"];
  }

  struct Agent {
    Api api;
    std::string worker_id;
  };

  json assignment(const Agent& a) {
    auto r = require_status(
        a.api.get("/api/v1/agent/assignment?worker_id=" + a.worker_id + "&wait=10"), 200);
    return r.json;
  }

  std::string cluster, run_id;
  std::vector<Agent> agents;
};

TEST_F(AttemptEnvironment, RunningReportsAreKeptPerRankAndShownPerAttempt) {
  const json rank_env = {{"python", "3.11.2"},
                         {"jax", "0.10.2"},
                         {"jaxlib", "0.10.2"},
                         {"maxtext", "0.2.0"},
                         {"git_commit", "0123456789abcdef0123456789abcdef01234567"},
                         {"a_newer_agent_key", "ignored"}};
  std::string attempt;
  for (size_t i = 0; i < agents.size(); ++i) {
    const json a = assignment(agents[i]);
    attempt = a["attempt_id"];
    json env = rank_env;
    if (a["rank"] == 1) env["jax"] = "0.9.0";  // one rank's Python differs
    require_status(agents[i].api.post("/api/v1/agent/attempts/" + attempt + "/status",
                                      {{"rank", a["rank"]},
                                       {"state", "running"},
                                       {"pid", 100 + static_cast<int>(i)},
                                       {"environment", env}}),
                   200);
  }
  auto list = require_status(podium().admin().get("/api/v1/runs/" + run_id + "/attempts"), 200);
  ASSERT_EQ(list.json["items"].size(), 1u);
  const json& e = list.json["items"][0]["environment"];
  EXPECT_EQ(e["python"], "3.11.2");
  EXPECT_EQ(e["jax"], "0.10.2");  // rank 0's
  EXPECT_EQ(e["maxtext"], "0.2.0");
  EXPECT_EQ(e["git_commit"], "0123456789abcdef0123456789abcdef01234567");
  EXPECT_TRUE(e["libtpu"].is_null());
  EXPECT_TRUE(e["code_digest"].is_null());  // no code bundle
  EXPECT_TRUE(e["image"].is_null());        // an agent cluster has no image
  EXPECT_EQ(e["ranks_reported"], 2);
  EXPECT_EQ(e["differs"], json::array({"jax"}));
  const json& hosts = list.json["items"][0]["hosts"];
  EXPECT_EQ(hosts[1]["environment"]["jax"], "0.9.0");
  EXPECT_FALSE(hosts[0]["environment"].contains("a_newer_agent_key"));

  auto run = require_status(podium().admin().get("/api/v1/runs/" + run_id), 200);
  EXPECT_EQ(run.json["environment"], e);
  // In lists too (the same view).
  auto runs = require_status(podium().admin().get("/api/v1/runs?cluster=" + cluster), 200);
  EXPECT_EQ(runs.json["items"][0]["environment"]["maxtext"], "0.2.0");
}

TEST_F(AttemptEnvironment, AMalformedEnvironmentIsRefusedAndNoneIsNull) {
  const json a = assignment(agents[0]);
  const std::string path =
      "/api/v1/agent/attempts/" + a["attempt_id"].get<std::string>() + "/status";
  for (const json& bad : {json{{"jax", 1}}, json{{"git_commit", "not-hex"}},
                          json{{"python", std::string(200, 'x')}}, json("3.11")}) {
    auto r = agents[0].api.post(
        path, {{"rank", a["rank"]}, {"state", "running"}, {"pid", 7}, {"environment", bad}});
    EXPECT_EQ(r.status, 400) << bad.dump() << " " << r.body;
  }
  require_status(agents[0].api.post(path, {{"rank", a["rank"]}, {"state", "running"}, {"pid", 7}}),
                 200);
  auto list = require_status(podium().admin().get("/api/v1/runs/" + run_id + "/attempts"), 200);
  const json& e = list.json["items"][0]["environment"];
  EXPECT_EQ(e["ranks_reported"], 0);
  EXPECT_TRUE(e["jax"].is_null());
  EXPECT_TRUE(list.json["items"][0]["hosts"][0]["environment"].is_null());
  // Before any attempt a run has no environment (a cluster without agents places nothing).
  const std::string idle = unique_name("idle");
  podium().create_cluster(idle, "cpu-1");
  EXPECT_TRUE(podium().submit_run(podium().admin(), idle)["environment"].is_null());
}

}  // namespace
}  // namespace podium::it
