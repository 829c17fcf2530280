// A database outage longer than the heartbeat deadline while a 2-host reference run trains: the
// hosts' heartbeats are refused meanwhile, which says nothing about them. The run keeps training
// (the agents spool its lines) and ends succeeded with no recovery and no restart spent.
#include <chrono>
#include <thread>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

class DatabaseOutage : public E2eTest {
 protected:
  Settings settings() const override {
    return {.extra = {"scheduler.heartbeat_deadline_seconds=6",
                      "scheduler.heartbeat_interval_seconds=1"},
            .private_postgres = true};
  }
};

TEST_F(DatabaseOutage, ARunTrainsThroughAnOutageLongerThanTheHeartbeatDeadline) {
  const auto cluster = create_cluster("cpu-2", 1);
  start_workers(cluster, 1, 2);
  const json run = submit(reference_spec(unique_name("outage"), cluster, dataset("600K"),
                                         {.steps = 120,
                                          .per_device_batch_size = 8,
                                          .max_target_length = 128,
                                          .checkpoint_period = 25,
                                          .max_restarts = 3}));
  const std::string id = run["id"];
  ASSERT_TRUE(wait_for_run(
      id, "running past step 3",
      [](const json& r) {
        return r.value("state", "") == "running" && r["last_step"].is_number() &&
               r["last_step"].get<int>() >= 3;
      },
      180s));

  // 60 s without a database (issue 13's figure): ten heartbeat deadlines of this fixture, and
  // longer than the agents' whole retry backoff.
  private_postgres().pause();
  std::this_thread::sleep_for(60s);
  private_postgres().resume();

  json last;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 300s, &last)) << diagnostics(id);
  EXPECT_EQ(last["recoveries"], 0) << diagnostics(id);
  EXPECT_EQ(last["restarts"], 0);
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u) << describe_attempts(att);
  for (const json& h : att[0]["hosts"]) EXPECT_EQ(h["state"], "exited") << describe_attempts(att);
  // Nothing the agents printed while the database was away is missing.
  EXPECT_TRUE(logs_match_workers(id, att[0]));
  EXPECT_TRUE(metrics_steps_are(metrics(id), step_range(0, 120), true));
}

}  // namespace
}  // namespace podium::e2e
