// Stall detection (issue 30 point 1) through a real podium-server and PostgreSQL, the attempt
// driven by a hand agent: rank 0 logs steps, then nothing while it keeps heartbeating. The
// dispatcher's sweep (backend/sched/dispatch/stall_watch.h) must flag the run `stalled` within
// its bound (the server's stalls.default_seconds floor, 2 s here, above 10 x the 0.1 s steps),
// record the 'stalled' event with its figures, stop the gang and, once it has ended, recover the
// run as failure class `stalled` without spending the restart budget; the stalls.limit-th stall
// (2 here) fails the run as `stalled`. on_stall alert only records (a step ends the stall),
// on_stall fail fails the run at its first. A command that never logged a step is not judged
// before its first step.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "tests/integration/support/hand_agent.h"

namespace podium::it {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

class StallSweep : public PodiumTest {
 protected:
  Podium::Options options() const override {
    // The hand agent does not heartbeat: a deadline longer than any test keeps its host alive.
    return {.settings = {"stalls.default_seconds=2", "stalls.limit=2",
                         "scheduler.heartbeat_deadline_seconds=300"}};
  }
  void SetUp() override {
    PodiumTest::SetUp();
    if (IsSkipped()) return;  // no test database
    cluster = unique_name("stall");
    podium().create_cluster(cluster, "cpu-1");
    agent = std::make_unique<HandAgent>(
        podium(), cluster, HandAgent::Host{.instance = "stall", .address = "127.0.0.1"});
  }

  json get(const std::string& path) { return require_status(podium().admin().get(path), 200).json; }
  json run(const std::string& id) { return get("/api/v1/runs/" + id); }
  json events(const std::string& id) { return get("/api/v1/runs/" + id + "/events")["items"]; }
  json attempts(const std::string& id) { return get("/api/v1/runs/" + id + "/attempts")["items"]; }

  // Starts the attempt and logs steps first..last of 0.1 s each as rank 0 from line `seq`.
  void step(const std::string& attempt, int first, int last, int seq) {
    json lines = json::array();
    for (int s = first; s <= last; ++s)
      lines.push_back("completed step: " + std::to_string(s) +
                      ", seconds: 0.100, TFLOP/s/device: 1.0, Tokens/s/device: 1024.0, "
                      "total_weights: 2048, loss: 2.5");
    agent->post_lines(attempt, seq, lines);
  }

  // Polls the run until `pred` holds or `timeout` passes; the last view seen.
  json wait_run(const std::string& id, const std::function<bool(const json&)>& pred,
                std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    json r;
    for (;;) {
      r = run(id);
      if (pred(r) || Clock::now() >= deadline) return r;
      std::this_thread::sleep_for(50ms);
    }
  }

  static int stalled_events(const json& items) {
    int n = 0;
    for (const auto& e : items) n += e.value("kind", "") == "stalled";
    return n;
  }

  std::string cluster;
  std::unique_ptr<HandAgent> agent;
};

TEST_F(StallSweep, SilentStepsAreAStallRecoveredWithoutTheRestartBudget) {
  const std::string id =
      podium().submit_run(podium().admin(), cluster, "", {{"max_restarts", 0}})["id"];
  const std::string first = agent->next_attempt();
  agent->report(first, "running");
  step(first, 0, 9, 0);
  const auto silent_since = Clock::now();

  // Flagged within the bound (2 s) plus the sweep's second and a margin.
  json stalled = wait_run(
      id, [](const json& r) { return r["flags"].contains("stalled"); }, 10s);
  ASSERT_TRUE(stalled["flags"].contains("stalled")) << stalled.dump(2);
  const double noticed = std::chrono::duration<double>(Clock::now() - silent_since).count();
  EXPECT_GE(noticed, 1.8);  // counted from the step's insert, just before the post returned
  EXPECT_LT(noticed, 6.0);
  const json& flag = stalled["flags"]["stalled"];
  EXPECT_EQ(flag["phase"], "steps");
  EXPECT_EQ(flag["last_step"], 9);
  EXPECT_EQ(flag["basis"], "floor");
  EXPECT_DOUBLE_EQ(flag["bound_seconds"].get<double>(), 2.0);
  EXPECT_GE(flag["silence_seconds"].get<double>(), 2.0);  // rounded to 0.1 s
  EXPECT_EQ(flag["on_stall"], "restart");
  EXPECT_EQ(stalled["state"], "running") << "the gang has not ended yet";

  // The event notifications read: kind stalled, the same figures, a timeline line.
  const json ev = events(id);
  ASSERT_EQ(stalled_events(ev), 1) << ev.dump(2);
  for (const auto& e : ev) {
    if (e["kind"] != "stalled") continue;
    EXPECT_EQ(e["detail"]["last_step"], 9);
    EXPECT_EQ(e["detail"]["derivation"], flag["derivation"]);
    EXPECT_EQ(e["from_state"], "running");
    EXPECT_EQ(e["to_state"], "running");
    EXPECT_NE(e["cause"].get<std::string>().find("stalled: no step for"), std::string::npos)
        << e.dump();
    EXPECT_NE(e["cause"].get<std::string>().find("after step 9"), std::string::npos) << e.dump();
  }

  // The gang is being stopped: the rank ends on Podium's cancel.
  agent->report(first, "exited", {{"signal", 15}});
  ASSERT_EQ(wait_for_run_state(podium(), id, "starting", 10s), "starting");
  const json recovered = run(id);
  EXPECT_EQ(recovered["restarts"], 0) << recovered.dump(2);
  EXPECT_EQ(recovered["recoveries"], 1) << recovered.dump(2);
  EXPECT_FALSE(recovered["flags"].contains("stalled")) << "the new attempt is not stalled";
  const json att = attempts(id);
  ASSERT_EQ(att.size(), 2u) << att.dump(2);
  EXPECT_EQ(att[0]["failure_class"], "stalled") << att[0].dump(2);
  EXPECT_EQ(att[0]["restart_decision"]["action"], "recover") << att[0].dump(2);
  EXPECT_EQ(att[0]["restart_decision"]["spends_budget"], false);
  EXPECT_EQ(att[1]["reason"], "recovery") << att[1].dump(2);

  // The second stall reaches the limit (2): the run fails as stalled.
  const std::string second = agent->next_attempt();
  EXPECT_EQ(second, att[1]["id"].get<std::string>());
  agent->report(second, "running");
  step(second, 10, 19, 0);
  json again = wait_run(
      id, [](const json& r) { return r["flags"].contains("stalled"); }, 10s);
  ASSERT_TRUE(again["flags"].contains("stalled")) << again.dump(2);
  EXPECT_EQ(again["flags"]["stalled"]["last_step"], 19);
  agent->report(second, "exited", {{"signal", 15}});
  ASSERT_EQ(wait_for_run_state(podium(), id, "failed", 10s), "failed");
  const json failed = run(id);
  EXPECT_EQ(failed["failure_class"], "stalled") << failed.dump(2);
  EXPECT_EQ(failed["restarts"], 0);
  EXPECT_EQ(failed["recoveries"], 1);
  EXPECT_FALSE(failed["flags"].contains("stalled"));
  EXPECT_EQ(stalled_events(events(id)), 2);
  const json last = attempts(id).back();
  EXPECT_EQ(last["restart_decision"]["action"], "fail") << last.dump(2);
  EXPECT_EQ(last["restart_decision"]["reason"], "stalled: stall 2 of this run, the limit is 2");
}

TEST_F(StallSweep, AlertOnlyRecordsTheStallAndAStepEndsIt) {
  // The run's stall_seconds (3) is its floor, not the server's (2).
  const std::string id = podium().submit_run(podium().admin(), cluster, "",
                                             {{"on_stall", "alert"}, {"stall_seconds", 3}})["id"];
  const std::string attempt = agent->next_attempt();
  agent->report(attempt, "running");
  step(attempt, 0, 4, 0);
  json stalled = wait_run(
      id, [](const json& r) { return r["flags"].contains("stalled"); }, 10s);
  ASSERT_TRUE(stalled["flags"].contains("stalled")) << stalled.dump(2);
  EXPECT_DOUBLE_EQ(stalled["flags"]["stalled"]["bound_seconds"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(stalled["flags"]["stalled"]["floor_seconds"].get<double>(), 3.0);
  EXPECT_EQ(stalled["flags"]["stalled"]["on_stall"], "alert");
  // Nothing is stopped: two more sweeps later the attempt runs on, still flagged, one event.
  std::this_thread::sleep_for(2500ms);
  const json later = run(id);
  EXPECT_EQ(later["state"], "running");
  EXPECT_TRUE(later["flags"].contains("stalled"));
  EXPECT_TRUE(attempts(id)[0]["ending_cause"].is_null()) << attempts(id).dump(2);
  EXPECT_EQ(stalled_events(events(id)), 1);
  // A step: the stall is over.
  step(attempt, 5, 5, 5);
  const json resumed = wait_run(
      id, [](const json& r) { return !r["flags"].contains("stalled"); }, 10s);
  EXPECT_FALSE(resumed["flags"].contains("stalled")) << resumed.dump(2);
  bool over = false;
  for (const auto& e : events(id))
    over = over || e["cause"].get<std::string>() == "stall over: step 5 logged";
  EXPECT_TRUE(over) << events(id).dump(2);
  agent->report(attempt, "exited", {{"exit_code", 0}});
  ASSERT_EQ(wait_for_run_state(podium(), id, "succeeded", 10s), "succeeded");
  const json done = run(id);
  EXPECT_EQ(done["recoveries"], 0);
  EXPECT_EQ(done["restarts"], 0);
}

TEST_F(StallSweep, FailEndsTheRunAtItsFirstStall) {
  const std::string id = podium().submit_run(podium().admin(), cluster, "",
                                             {{"on_stall", "fail"}, {"max_restarts", 3}})["id"];
  const std::string attempt = agent->next_attempt();
  agent->report(attempt, "running");
  step(attempt, 0, 9, 0);
  json stalled = wait_run(
      id, [](const json& r) { return r["flags"].contains("stalled"); }, 10s);
  ASSERT_TRUE(stalled["flags"].contains("stalled")) << stalled.dump(2);
  EXPECT_EQ(stalled["flags"]["stalled"]["on_stall"], "fail");
  agent->report(attempt, "exited", {{"signal", 15}});
  ASSERT_EQ(wait_for_run_state(podium(), id, "failed", 10s), "failed");
  const json failed = run(id);
  EXPECT_EQ(failed["failure_class"], "stalled") << failed.dump(2);
  EXPECT_EQ(failed["restarts"], 0);
  EXPECT_EQ(failed["recoveries"], 0);
  const json att = attempts(id);
  ASSERT_EQ(att.size(), 1u) << att.dump(2);
  EXPECT_EQ(att[0]["restart_decision"]["reason"], "stalled: on_stall is fail");
  EXPECT_NE(failed["failure_detail"].get<std::string>().find("no step for"), std::string::npos)
      << failed.dump(2);
}

TEST_F(StallSweep, ACommandWithoutStepsIsNotJudgedBeforeItsFirstStep) {
  const std::string id = podium().submit_run(podium().admin(), cluster)["id"];
  const std::string attempt = agent->next_attempt();
  agent->report(attempt, "running");
  // Four times the floor with the sweep running every second: still running, unflagged.
  std::this_thread::sleep_for(8s);
  const json r = run(id);
  EXPECT_EQ(r["state"], "running") << r.dump(2);
  EXPECT_FALSE(r["flags"].contains("stalled")) << r.dump(2);
  EXPECT_EQ(stalled_events(events(id)), 0);
  agent->report(attempt, "exited", {{"exit_code", 0}});
  EXPECT_EQ(wait_for_run_state(podium(), id, "succeeded", 10s), "succeeded");
}

TEST_F(StallSweep, StepsThatKeepComingAreNoStall) {
  const std::string id = podium().submit_run(podium().admin(), cluster)["id"];
  const std::string attempt = agent->next_attempt();
  agent->report(attempt, "running");
  // A step every second for 6 s: never 2 s of silence.
  for (int s = 0; s < 6; ++s) {
    step(attempt, s, s, s);
    std::this_thread::sleep_for(1s);
  }
  const json r = run(id);
  EXPECT_FALSE(r["flags"].contains("stalled")) << r.dump(2);
  EXPECT_EQ(stalled_events(events(id)), 0);
  agent->report(attempt, "exited", {{"exit_code", 0}});
  EXPECT_EQ(wait_for_run_state(podium(), id, "succeeded", 10s), "succeeded");
}

}  // namespace
}  // namespace podium::it
