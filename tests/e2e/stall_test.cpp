// Issue 30 point 1 acceptance: a rank stopped with SIGSTOP mid-run (every process alive, every
// agent heartbeating, rank 0 waiting in a collective forever) makes the run `stalled` within
// its bound; Podium stops the gang, resumes it from its latest checkpoint as an infrastructure
// recovery, and the run succeeds with no restart spent (max_restarts 0: a restart would have
// failed it). A webhook receiver subscribed to the run's events gets run.stalled and
// run.succeeded, each signed.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>

#include "tests/e2e/support/e2e.h"
#include "tests/integration/support/webhook_receiver.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kStallSeconds = 8;

class Stall : public E2eTest {
 protected:
  Settings settings() const override {
    // A floor short enough for a fast test and long enough that a checkpoint save on a loaded
    // machine is no stall; the stopped rank ignores SIGTERM until it is continued, so it is
    // killed after the cancel grace.
    return {.extra = {"stalls.default_seconds=" + std::to_string(kStallSeconds),
                      "scheduler.cancel_grace_seconds=2", "webhooks.allow_hosts=127.0.0.1",
                      "webhooks.poll_interval_ms=100"}};
  }
};

TEST_F(Stall, StoppedRankIsStalledAndRecoveredFromItsCheckpointWithoutARestart) {
  it::WebhookReceiver rx;
  const it::Reply hook =
      admin().post("/api/v1/webhooks",
                   {{"url", rx.url()}, {"events", json::array({"run.stalled", "run.succeeded"})}});
  ASSERT_EQ(hook.status, 201) << hook;
  const std::string secret = hook.json.value("secret", "");

  const auto cluster = create_cluster("cpu-2", 1);
  WorkerProcess& host1 = *start_workers(cluster, 1, 2).at(1);
  const auto ds = dataset();
  const json run = submit(reference_spec(unique_name("stall"), cluster, ds,
                                         {.steps = 30,
                                          .per_device_batch_size = 8,
                                          .max_target_length = 128,
                                          .checkpoint_period = 10,
                                          .max_restarts = 0}));
  const std::string id = run["id"];

  json first;
  ASSERT_TRUE(wait_for_first_attempt_pids(id, 2, 180s, &first));
  const auto hosts = hosts_by_rank(first);
  const pid_t pid1 = hosts.at(1)["pid"].get<int>();
  ASSERT_EQ(hosts.at(1).value("worker_id", ""), host1.worker_id()) << describe_attempts({first});
  ASSERT_TRUE(process_alive(pid1)) << describe_process(pid1);

  // Past checkpoint 10 (rank 1 printed step 13: rank 0 finished step 12 at least).
  const std::string attempt_id = first["id"];
  ASSERT_TRUE(eventually(
      [&] {
        auto steps = step_lines(host1.rank_lines(attempt_id, 1));
        return !steps.empty() && steps.back() >= 13;
      },
      180s, 20ms))
      << diagnostics(id);
  ASSERT_EQ(::kill(pid1, SIGSTOP), 0);
  const auto stopped_at = Clock::now();

  // Stalled: the flag, with the bound it was judged against.
  json stalled;
  ASSERT_TRUE(wait_for_run(
      id, "flagged stalled", [](const json& r) { return r["flags"].contains("stalled"); }, 60s,
      &stalled));
  const double noticed = std::chrono::duration<double>(Clock::now() - stopped_at).count();
  const json flag = stalled["flags"]["stalled"];
  const double bound = flag["bound_seconds"].get<double>();
  std::cout << "stall noticed " << noticed << " s after SIGSTOP: " << flag.dump() << "\n";
  RecordProperty("stall_noticed_ms", std::to_string(static_cast<int>(noticed * 1000)));
  EXPECT_EQ(flag["phase"], "steps") << flag.dump();
  EXPECT_GE(bound, kStallSeconds) << flag.dump();
  // Within the bound, plus what the last step needed to reach the server (an upload batch) and
  // the sweep's second.
  EXPECT_LT(noticed, bound + 4.0) << flag.dump();
  EXPECT_GE(flag["silence_seconds"].get<double>(), bound) << flag.dump();  // rounded to 0.1 s
  EXPECT_EQ(flag["on_stall"], "restart");

  // The gang is stopped (the stopped rank by SIGKILL after the grace), the run recovers from its
  // latest checkpoint and succeeds.
  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 240s, &done));
  EXPECT_FALSE(process_alive(pid1)) << describe_process(pid1);
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump();
  EXPECT_EQ(done.value("recoveries", -1), 1) << done.dump();
  EXPECT_FALSE(done["flags"].contains("stalled")) << done.dump();

  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 2u) << describe_attempts(att) << diagnostics(id);
  EXPECT_EQ(att[0].value("failure_class", json()), json("stalled")) << describe_attempts(att);
  EXPECT_EQ(att[0]["restart_decision"].value("action", ""), "recover") << att[0].dump();
  EXPECT_EQ(att[1].value("reason", ""), "recovery") << describe_attempts(att);
  EXPECT_EQ(att[1].value("state", ""), "succeeded") << describe_attempts(att);
  // Resumed from the latest checkpoint attempt 1 finished: 10 (or 20 when the stop came late).
  const int resumed = att[1].value("resumed_from_step", -1);
  EXPECT_TRUE(resumed == 10 || resumed == 20) << describe_attempts(att);
  EXPECT_EQ(att[1].value("first_step", json()), json(resumed)) << describe_attempts(att);
  const auto lines0 = local_rank_lines(att[1], 0);
  EXPECT_TRUE(std::any_of(lines0.begin(), lines0.end(),
                          [&](const std::string& l) {
                            return l.find("restoring from this run's directory step " +
                                          std::to_string(resumed)) != std::string::npos;
                          }))
      << "rank 0 of attempt 2 did not restore checkpoint " << resumed;
  EXPECT_EQ(step_lines(lines0), step_range(resumed, 30));

  // One stalled event, on the timeline with its figures; the recovery says why.
  int stalls = 0;
  bool recovery_says_stalled = false;
  for (const json& e : events(id)) {
    if (e.value("kind", "") == "stalled") {
      ++stalls;
      EXPECT_EQ(e["detail"]["last_step"], flag["last_step"]) << e.dump();
    }
    if (e.value("to_state", "") == "recovering" &&
        e.value("cause", "").find("stalled") != std::string::npos)
      recovery_says_stalled = true;
  }
  EXPECT_EQ(stalls, 1) << diagnostics(id);
  EXPECT_TRUE(recovery_says_stalled) << diagnostics(id);

  // Notified: run.stalled (with the stall's figures) and run.succeeded, signed with the secret.
  ASSERT_TRUE(rx.wait_for(2, 30s))
      << admin().get("/api/v1/webhooks/" + hook.json.value("id", "") + "/deliveries");
  std::map<std::string, json> by_type;
  for (const auto& r : rx.requests()) {
    EXPECT_TRUE(it::verify_podium_signature(secret, r)) << r.headers.at("podium-signature");
    const json body = json::parse(r.body);
    EXPECT_EQ(body["run"].value("id", ""), id) << body.dump();
    EXPECT_FALSE(by_type.count(body.value("type", ""))) << "twice: " << body.dump();
    by_type[body.value("type", "")] = body;
  }
  ASSERT_TRUE(by_type.count("run.stalled")) << json(by_type).dump(1);
  ASSERT_TRUE(by_type.count("run.succeeded")) << json(by_type).dump(1);
  EXPECT_NE(by_type["run.stalled"].value("text", "").find("stalled"), std::string::npos)
      << by_type["run.stalled"].dump();
  EXPECT_EQ(by_type["run.succeeded"]["run"]["state"], "succeeded");
}

}  // namespace
}  // namespace podium::e2e
