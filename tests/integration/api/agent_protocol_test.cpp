// The agent protocol driven by hand (no podium-worker): what a worker relies on when it retries,
// restarts or misbehaves. The e2e tests run the real agent; these pin the server's side.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class AgentProtocol : public PodiumTest {
 protected:
  struct Agent {
    Api api;
    std::string worker_id;
  };

  // A cpu-1 cluster with its one host registered, and a queued command run placed on it.
  void SetUp() override {
    PodiumTest::SetUp();
    if (IsSkipped()) return;  // no test database
    cluster = unique_name("ag");
    podium().create_cluster(cluster, "cpu-1");
    token = podium().worker_token(cluster);
    agent = register_agent("first");
    run_id = podium().submit_run(podium().admin(), cluster)["id"];
  }

  // Registers with the cluster's worker token, as the host's agent (presenting the credential
  // it got last time, as a restarted agent does from its workdir); later calls use the new
  // credential.
  Agent register_agent(const std::string& instance, json running = json::array()) {
    Api api = podium().as(token);
    json body = {{"cluster", cluster},     {"slice", 0},           {"host", 0},
                 {"address", "127.0.0.1"}, {"instance", instance}, {"running", running}};
    if (!credential.empty()) body["credential"] = credential;
    auto r = require_status(api.post("/api/v1/agent/register", body), 200);
    credential = r.json["credential"];
    return {podium().as(credential), r.json["worker_id"]};
  }
  std::string credential;

  json fetch_assignment(int wait = 10) {
    auto r = agent.api.get("/api/v1/agent/assignment?worker_id=" + agent.worker_id +
                           "&wait=" + std::to_string(wait));
    if (r.status == 204) return nullptr;
    require_status(r, 200);
    return r.json;
  }

  json run() { return require_status(podium().admin().get("/api/v1/runs/" + run_id), 200).json; }

  Reply status(const std::string& attempt, json body) {
    return agent.api.post("/api/v1/agent/attempts/" + attempt + "/status", body);
  }

  std::string cluster, token, run_id;
  Agent agent;
};

TEST_F(AgentProtocol, AnAssignmentCarriesTheRanksCommandAndEnvironmentOnce) {
  auto a = fetch_assignment();
  ASSERT_TRUE(a.is_object()) << a;
  EXPECT_EQ(a["run_id"], run_id);
  EXPECT_EQ(a["rank"], 0);
  EXPECT_EQ(a["command"], json::array({"true"}));
  EXPECT_EQ(a["env"]["RANK"], "0");
  EXPECT_EQ(a["env"]["WORLD_SIZE"], "1");
  EXPECT_EQ(a["env"]["JAX_PROCESS_COUNT"], "1");
  EXPECT_EQ(a["env"]["MASTER_ADDR"], "127.0.0.1");
  EXPECT_EQ(a["env"]["PODIUM_RUN_ID"], run_id);
  // Delivered: a second poll within the redelivery delay finds nothing.
  EXPECT_TRUE(fetch_assignment(0).is_null());
  EXPECT_EQ(run()["state"], "starting");
}

TEST_F(AgentProtocol, LogBatchesAreIdempotentBySequence) {
  const std::string attempt = fetch_assignment()["attempt_id"];
  auto logs = [&](int seq, json lines) {
    return require_status(agent.api.post("/api/v1/agent/attempts/" + attempt + "/logs",
                                         {{"rank", 0}, {"seq", seq}, {"lines", lines}}),
                          200)
        .json;
  };
  EXPECT_EQ(logs(0, {"a", "b", "c"})["stored"], 3);
  // A retried batch that overlaps what was stored adds only the new line.
  auto again = logs(1, {"b", "c", "d"});
  EXPECT_EQ(again["stored"], 1);
  EXPECT_EQ(again["next_seq"], 4);
  EXPECT_EQ(logs(0, {"a", "b", "c"})["stored"], 0);
  auto page = require_status(podium().admin().get("/api/v1/runs/" + run_id + "/logs"), 200).json;
  std::vector<std::string> lines;
  std::vector<int> seqs;
  for (const auto& item : page["items"]) {
    lines.push_back(item["line"]);
    seqs.push_back(item["seq"]);
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(seqs, (std::vector<int>{0, 1, 2, 3}));
  // Bad batches are refused whole.
  auto bad = agent.api.post("/api/v1/agent/attempts/" + attempt + "/logs",
                            {{"rank", 0}, {"seq", 10}, {"lines", {"x", 5}}});
  EXPECT_TRUE(is_problem(bad, 400)) << bad;
  EXPECT_TRUE(is_problem(agent.api.post("/api/v1/agent/attempts/" + attempt + "/logs",
                                        {{"rank", 3}, {"seq", 0}, {"lines", {"x"}}}),
                         404));
}

TEST_F(AgentProtocol, LogLinesTeachCheckpointsOfRemoteOutputs) {
  const std::string attempt = fetch_assignment()["attempt_id"];
  auto logs = [&](int seq, json lines) {
    require_status(agent.api.post("/api/v1/agent/attempts/" + attempt + "/logs",
                                  {{"rank", 0}, {"seq", seq}, {"lines", lines}}),
                   200);
  };
  logs(0, {"restoring from this run's directory step 10",
           "completed step: 11, seconds: 1.0, loss: 2.0",
           "Finished saving checkpoint to `gs://team/runs/" + run_id + "/checkpoints/20`.",
           "I1121 16:46:01.000000 140 checkpointing.py:390] saved a checkpoint at step 20",
           // A local directory is the agent's to scan (it reports the size): not from the log.
           "Finished saving checkpoint to `/tmp/out/" + run_id + "/checkpoints/30`."});
  // A retried batch records nothing twice.
  logs(0, {"restoring from this run's directory step 10"});
  auto ck = require_status(podium().admin().get("/api/v1/runs/" + run_id + "/checkpoints"), 200)
                .json["items"];
  ASSERT_EQ(ck.size(), 1u) << ck;
  EXPECT_EQ(ck[0]["step"], 20);
  EXPECT_EQ(ck[0]["uri"], "gs://team/runs/" + run_id + "/checkpoints/20");
  EXPECT_EQ(run()["resumed_from_step"], 10);
  auto att = require_status(podium().admin().get("/api/v1/runs/" + run_id + "/attempts"), 200)
                 .json["items"];
  EXPECT_EQ(att[0]["resumed_from_step"], 10) << att;
}

TEST_F(AgentProtocol, StatusFollowsTheAttemptStateMachine) {
  const std::string attempt = fetch_assignment()["attempt_id"];
  require_status(status(attempt, {{"rank", 0}, {"state", "running"}, {"pid", 99}}), 200);
  EXPECT_EQ(run()["state"], "running");
  require_status(status(attempt, {{"rank", 0}, {"state", "running"}, {"pid", 99}}), 200);
  require_status(status(attempt, {{"rank", 0}, {"state", "exited"}, {"exit_code", 0}}), 200);
  EXPECT_EQ(run()["state"], "succeeded");
  // The same report again is harmless; a contradicting one is a state conflict.
  require_status(status(attempt, {{"rank", 0}, {"state", "exited"}, {"exit_code", 0}}), 200);
  EXPECT_TRUE(is_problem(status(attempt, {{"rank", 0}, {"state", "running"}}), 409));
  EXPECT_TRUE(
      is_problem(status(attempt, {{"rank", 0}, {"state", "exited"}, {"exit_code", 3}}), 409));
  EXPECT_TRUE(is_problem(status(attempt, {{"rank", 0}, {"state", "exited"}}), 400));
  EXPECT_TRUE(is_problem(status("att_nope", {{"rank", 0}, {"state", "running"}}), 404));
  auto attempts =
      require_status(podium().admin().get("/api/v1/runs/" + run_id + "/attempts"), 200).json;
  ASSERT_EQ(attempts["items"].size(), 1u);
  EXPECT_EQ(attempts["items"][0]["state"], "succeeded");
  EXPECT_EQ(attempts["items"][0]["hosts"][0]["pid"], 99);
  EXPECT_EQ(attempts["items"][0]["exit_codes"], json::array({0}));
}

TEST_F(AgentProtocol, ANewAgentInstanceMeansItsRanksWereLostAndTheRunRecovers) {
  const std::string attempt = fetch_assignment()["attempt_id"];
  require_status(status(attempt, {{"rank", 0}, {"state", "running"}, {"pid", 99}}), 200);
  // The same instance coming back (a server restart) keeps what it says it runs.
  agent = register_agent("first", json::array({{{"attempt_id", attempt}, {"rank", 0}}}));
  EXPECT_EQ(run()["state"], "running");
  // Another instance: the old agent process is gone with its rank.
  agent = register_agent("second");
  auto r = run();
  // Recovering, or already starting again: the new agent's host is free at once.
  EXPECT_TRUE(r["state"] == "recovering" || r["state"] == "starting") << r["state"];
  EXPECT_EQ(r["recoveries"], 1);
  EXPECT_EQ(r["restarts"], 0);
  auto a = require_status(podium().admin().get("/api/v1/runs/" + run_id + "/attempts"), 200).json;
  EXPECT_EQ(a["items"][0]["failure_class"], "host_lost");
  EXPECT_EQ(a["items"][0]["hosts"][0]["state"], "lost");
  // The host is free again: the run gets a second attempt on it.
  auto next = fetch_assignment();
  ASSERT_TRUE(next.is_object());
  EXPECT_NE(next["attempt_id"], attempt);
  EXPECT_EQ(next["env"]["PODIUM_ATTEMPT_NUMBER"], "2");
  // The lost rank's late report is refused: its attempt is over.
  EXPECT_TRUE(
      is_problem(status(attempt, {{"rank", 0}, {"state", "exited"}, {"exit_code", 1}}), 409));
}

TEST_F(AgentProtocol, CancelReachesTheAgentAndEndsTheRun) {
  const std::string attempt = fetch_assignment()["attempt_id"];
  require_status(status(attempt, {{"rank", 0}, {"state", "running"}, {"pid", 99}}), 200);
  EXPECT_EQ(require_status(podium().admin().post("/api/v1/runs/" + run_id + "/cancel"), 200)
                .json["state"],
            "cancelling");
  auto c = fetch_assignment();
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c["cancel"], json::array({attempt}));
  require_status(status(attempt, {{"rank", 0}, {"state", "exited"}, {"signal", 15}}), 200);
  EXPECT_EQ(run()["state"], "cancelled");
  EXPECT_TRUE(is_problem(podium().admin().post("/api/v1/runs/" + run_id + "/cancel"), 409));
}

TEST_F(AgentProtocol, BadRegistrationsAndForeignWorkers) {
  Api api = podium().as(token);
  EXPECT_TRUE(is_problem(
      api.post("/api/v1/agent/register", {{"cluster", cluster}, {"slice", 1}, {"host", 0}}), 422));
  EXPECT_TRUE(is_problem(
      api.post("/api/v1/agent/register", {{"cluster", cluster}, {"slice", 0}, {"host", 1}}), 422));
  EXPECT_TRUE(is_problem(api.post("/api/v1/agent/register",
                                  {{"cluster", cluster}, {"slice", 0}, {"host", 0}, {"x", 1}}),
                         400));
  // The cluster's token registers; everything else needs the host's own credential.
  EXPECT_TRUE(
      is_problem(api.post("/api/v1/agent/heartbeat", {{"worker_id", agent.worker_id}}), 403));
  EXPECT_TRUE(
      is_problem(agent.api.post("/api/v1/agent/heartbeat", {{"worker_id", "wkr_nope"}}), 403));
  EXPECT_TRUE(is_problem(
      agent.api.get("/api/v1/agent/assignment?worker_id=" + agent.worker_id + "&wait=61"), 400));
  // Another cluster's token may not act for this cluster's workers or attempts.
  const std::string other = unique_name("other");
  podium().create_cluster(other, "cpu-1");
  Api foreign = podium().as(podium().worker_token(other));
  EXPECT_TRUE(is_problem(
      foreign.post("/api/v1/agent/register", {{"cluster", cluster}, {"slice", 0}, {"host", 0}}),
      403));
  EXPECT_TRUE(
      is_problem(foreign.post("/api/v1/agent/heartbeat", {{"worker_id", agent.worker_id}}), 403));
  const std::string attempt = fetch_assignment()["attempt_id"];
  EXPECT_TRUE(is_problem(foreign.post("/api/v1/agent/attempts/" + attempt + "/logs",
                                      {{"rank", 0}, {"seq", 0}, {"lines", {"x"}}}),
                         403));
  // Nothing was stored by the refused calls.
  auto page = require_status(podium().admin().get("/api/v1/runs/" + run_id + "/logs"), 200).json;
  EXPECT_TRUE(page["items"].empty());
}

TEST_F(AgentProtocol, ALongPollWakesWhenWorkIsDispatched) {
  // Nothing pending once the first run's assignment is taken.
  fetch_assignment();
  podium().admin().post("/api/v1/runs/" + run_id + "/cancel");
  fetch_assignment(1);  // the cancel order
  const std::string attempt =
      require_status(podium().admin().get("/api/v1/runs/" + run_id + "/attempts"), 200)
          .json["items"][0]["id"];
  require_status(status(attempt, {{"rank", 0}, {"state", "exited"}, {"signal", 15}}), 200);
  json got;
  std::thread poll([&] { got = fetch_assignment(20); });
  std::this_thread::sleep_for(300ms);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string second = podium().submit_run(podium().admin(), cluster)["id"];
  poll.join();
  ASSERT_TRUE(got.is_object());
  EXPECT_EQ(got["run_id"], second);
  // Woken by NOTIFY, not by the end of the wait.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
}

}  // namespace
}  // namespace podium::it

namespace podium::it {
namespace {

// Two ranks report "running" at the same moment: the run must still become running (each report
// sees the other's only once it committed, so the reports have to be applied one at a time).
TEST(AgentProtocolGang, SimultaneousRunningReportsMoveTheRunToRunning) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p;
  const std::string cluster = unique_name("gang");
  p.create_cluster(cluster, "cpu-2");
  Api registrar = p.as(p.worker_token(cluster));
  std::string workers[2];
  std::vector<Api> hosts;
  for (int h = 0; h < 2; ++h) {
    auto reg = require_status(
        registrar.post("/api/v1/agent/register", {{"cluster", cluster}, {"slice", 0}, {"host", h}}),
        200);
    workers[h] = reg.json["worker_id"];
    hosts.push_back(p.as(reg.json["credential"]));
  }
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string run = p.submit_run(p.admin(), cluster)["id"];
    std::string attempt;
    for (int h = 0; h < 2; ++h) {
      auto a = require_status(
          hosts[h].get("/api/v1/agent/assignment?worker_id=" + workers[h] + "&wait=10"), 200);
      ASSERT_TRUE(a.json.contains("attempt_id")) << a;
      ASSERT_EQ(a.json["rank"], h);
      attempt = a.json["attempt_id"];
    }
    const std::string path = "/api/v1/agent/attempts/" + attempt + "/status";
    std::thread other([&] {
      require_status(hosts[1].post(path, {{"rank", 1}, {"state", "running"}, {"pid", 2}}), 200);
    });
    require_status(hosts[0].post(path, {{"rank", 0}, {"state", "running"}, {"pid", 1}}), 200);
    other.join();
    EXPECT_EQ(require_status(p.admin().get("/api/v1/runs/" + run), 200).json["state"], "running");
    for (int r = 0; r < 2; ++r)
      require_status(hosts[r].post(path, {{"rank", r}, {"state", "exited"}, {"exit_code", 0}}),
                     200);
    EXPECT_EQ(require_status(p.admin().get("/api/v1/runs/" + run), 200).json["state"], "succeeded");
  }
}

}  // namespace
}  // namespace podium::it

namespace podium::it {
namespace {

// A run that cannot be placed says why, and stops saying it once placed.
TEST(AgentProtocolWaiting, AQueuedRunSaysWhyItWaits) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p;
  const std::string cluster = unique_name("idle");
  p.create_cluster(cluster, "cpu-2");
  const std::string run = p.submit_run(p.admin(), cluster)["id"];
  auto reason = [&] {
    return require_status(p.admin().get("/api/v1/runs/" + run), 200).json["waiting_reason"];
  };
  json why;
  for (int i = 0; i < 100 && why.is_null(); ++i) {
    why = reason();
    if (why.is_null()) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(why.is_string()) << "no waiting_reason after 10 s";
  EXPECT_THAT(why.get<std::string>(), ::testing::StartsWith("never_fits")) << why;
  // Register the slice's two hosts: the run is placed and the reason cleared.
  Api agent = p.as(p.worker_token(cluster));
  for (int h = 0; h < 2; ++h)
    require_status(
        agent.post("/api/v1/agent/register", {{"cluster", cluster}, {"slice", 0}, {"host", h}}),
        200);
  json state;
  for (int i = 0; i < 100; ++i) {
    state = require_status(p.admin().get("/api/v1/runs/" + run), 200).json;
    if (state["state"] == "starting") break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(state["state"], "starting");
  EXPECT_TRUE(state["waiting_reason"].is_null()) << state["waiting_reason"];
}

}  // namespace
}  // namespace podium::it

namespace podium::it {
namespace {

// An agent that heartbeats but no longer lists a rank the server has running lost that rank:
// the run recovers at once instead of waiting for a deadline that never comes.
TEST(AgentProtocolHeartbeat, ARankTheAgentNoLongerListsIsLost) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p(Podium::Options{{"scheduler.heartbeat_interval_seconds=1"}, "server", {}});
  const std::string cluster = unique_name("hb");
  p.create_cluster(cluster, "cpu-1");
  auto reg = require_status(
      p.as(p.worker_token(cluster))
          .post("/api/v1/agent/register", {{"cluster", cluster}, {"slice", 0}, {"host", 0}}),
      200);
  Api agent = p.as(reg.json["credential"]);
  const std::string worker = reg.json["worker_id"];
  const std::string run = p.submit_run(p.admin(), cluster)["id"];
  auto a =
      require_status(agent.get("/api/v1/agent/assignment?worker_id=" + worker + "&wait=10"), 200);
  const std::string attempt = a.json["attempt_id"];
  require_status(agent.post("/api/v1/agent/attempts/" + attempt + "/status",
                            {{"rank", 0}, {"state", "running"}, {"pid", 7}}),
                 200);
  const json listed = json::array({{{"attempt_id", attempt}, {"rank", 0}, {"pid", 7}}});
  auto state = [&] { return require_status(p.admin().get("/api/v1/runs/" + run), 200).json; };
  // Listed (and a heartbeat without a list says nothing about ranks): still running.
  std::this_thread::sleep_for(2500ms);
  require_status(
      agent.post("/api/v1/agent/heartbeat", {{"worker_id", worker}, {"running", listed}}), 200);
  require_status(agent.post("/api/v1/agent/heartbeat", {{"worker_id", worker}}), 200);
  EXPECT_EQ(state()["state"], "running");
  // No longer listed: lost at once, recovered without spending the budget.
  require_status(
      agent.post("/api/v1/agent/heartbeat", {{"worker_id", worker}, {"running", json::array()}}),
      200);
  const json r = state();
  EXPECT_TRUE(r["state"] == "recovering" || r["state"] == "starting") << r["state"];
  EXPECT_EQ(r["recoveries"], 1);
  EXPECT_EQ(r["restarts"], 0);
  auto attempts = require_status(p.admin().get("/api/v1/runs/" + run + "/attempts"), 200).json;
  EXPECT_EQ(attempts["items"][0]["failure_class"], "host_lost");
  EXPECT_EQ(attempts["items"][0]["hosts"][0]["state"], "lost");
}

}  // namespace
}  // namespace podium::it

namespace podium::it {
namespace {

// Per-host identity: a host's credential acts for its own ranks only; the cluster's token only
// registers; a live slot is not taken by another agent unless it proves to be the same host's.
TEST(AgentIdentity, AHostCannotReportAnotherHostsRankAndALiveSlotIsNotTaken) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p;
  const std::string cluster = unique_name("ident");
  p.create_cluster(cluster, "cpu-2");
  Api registrar = p.as(p.worker_token(cluster));
  std::vector<Api> hosts;
  std::vector<std::string> ids, credentials;
  for (int h = 0; h < 2; ++h) {
    auto reg = require_status(
        registrar.post("/api/v1/agent/register", {{"cluster", cluster},
                                                  {"slice", 0},
                                                  {"host", h},
                                                  {"instance", "i" + std::to_string(h)}}),
        200);
    ASSERT_EQ(reg.json["credential"].get<std::string>().rfind("pdh_", 0), 0u) << reg;
    ids.push_back(reg.json["worker_id"]);
    credentials.push_back(reg.json["credential"]);
    hosts.push_back(p.as(credentials.back()));
  }
  const std::string run = p.submit_run(p.admin(), cluster)["id"];
  std::string attempt;
  for (int h = 0; h < 2; ++h) {
    auto a = require_status(
        hosts[h].get("/api/v1/agent/assignment?worker_id=" + ids[h] + "&wait=10"), 200);
    attempt = a.json["attempt_id"];
  }
  const std::string status = "/api/v1/agent/attempts/" + attempt + "/status";
  // Host 1 forges host 0's exit; the cluster token tries too: both 403, nothing changes.
  EXPECT_TRUE(
      is_problem(hosts[1].post(status, {{"rank", 0}, {"state", "exited"}, {"exit_code", 1}}), 403));
  EXPECT_TRUE(is_problem(
      registrar.post(status, {{"rank", 0}, {"state", "exited"}, {"exit_code", 1}}), 403));
  EXPECT_TRUE(is_problem(hosts[1].post("/api/v1/agent/attempts/" + attempt + "/logs",
                                       {{"rank", 0}, {"seq", 0}, {"lines", {"forged"}}}),
                         403));
  EXPECT_TRUE(is_problem(hosts[1].post("/api/v1/agent/heartbeat", {{"worker_id", ids[0]}}), 403));
  auto att =
      require_status(p.admin().get("/api/v1/runs/" + run + "/attempts"), 200).json["items"][0];
  for (const auto& h : att["hosts"]) EXPECT_NE(h["state"], "exited") << att;
  EXPECT_TRUE(
      require_status(p.admin().get("/api/v1/runs/" + run + "/logs"), 200).json["items"].empty());
  EXPECT_NE(require_status(p.admin().get("/api/v1/runs/" + run), 200).json["state"], "failed");
  // Its own rank: fine.
  require_status(hosts[0].post(status, {{"rank", 0}, {"state", "running"}, {"pid", 11}}), 200);

  // Another agent claiming host 0's live slot: 409; the same host's agent (its credential):
  // takes over, and the old credential is dead.
  EXPECT_TRUE(is_problem(
      registrar.post("/api/v1/agent/register",
                     {{"cluster", cluster}, {"slice", 0}, {"host", 0}, {"instance", "intruder"}}),
      409));
  auto again = require_status(
      registrar.post("/api/v1/agent/register",
                     {{"cluster", cluster},
                      {"slice", 0},
                      {"host", 0},
                      {"instance", "restarted"},
                      {"credential", credentials[0]},
                      {"running", json::array({{{"attempt_id", attempt}, {"rank", 0}}})}}),
      200);
  EXPECT_NE(again.json["credential"], credentials[0]);
  EXPECT_EQ(hosts[0].post("/api/v1/agent/heartbeat", {{"worker_id", ids[0]}}).status, 401);
  require_status(
      p.as(again.json["credential"]).post("/api/v1/agent/heartbeat", {{"worker_id", ids[0]}}), 200);
}

}  // namespace
}  // namespace podium::it
