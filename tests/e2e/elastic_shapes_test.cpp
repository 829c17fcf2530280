// Issue 30 point 5 acceptance: a 2-slice run with dcn_fsdp=2 loses a slice and continues on one
// with a valid layout (not only dcn_data rewritten), and a cluster that keeps losing hosts under
// a run ends it as failed once max_recoveries are spent.

#include <algorithm>
#include <chrono>
#include <set>

#include <gmock/gmock.h>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

constexpr int kHeartbeatDeadlineSeconds = 4;

class ElasticShrink : public E2eTest {
 protected:
  Settings settings() const override {
    return {.extra = {"scheduler.heartbeat_deadline_seconds=" +
                          std::to_string(kHeartbeatDeadlineSeconds),
                      "scheduler.heartbeat_interval_seconds=1"},
            .fixed_port = false};
  }
};

bool any_event_says(const std::vector<json>& events, const std::string& text) {
  return std::any_of(events.begin(), events.end(),
                     [&](const json& e) { return e.dump().find(text) != std::string::npos; });
}

TEST_F(ElasticShrink, FsdpOverDcnRunLosesASliceAndContinuesOnOne) {
  const auto cluster = create_cluster("cpu-2", 2);
  auto hosts = start_workers(cluster, 2, 2);
  WorkerProcess& slice1_host0 = *hosts.at(2);
  const auto ds = dataset();
  const int batch = 4;
  const int seq = 128;
  json spec = reference_spec(unique_name("fsdp-dcn"), cluster, ds,
                             {.steps = 30,
                              .per_device_batch_size = batch,
                              .max_target_length = seq,
                              .checkpoint_period = 10,
                              .max_restarts = 0});
  spec["num_slices"] = 2;
  spec["min_slices"] = 1;
  spec["parallelism"] = {{"dcn_fsdp", 2}};
  const json run = submit(spec);
  const std::string id = run["id"];
  // The submission planned the 1-slice shape: fsdp gives up its DCN factor there.
  ASSERT_TRUE(run.contains("plan")) << run.dump();
  ASSERT_EQ(run["plan"]["elastic"].size(), 2u) << run["plan"].dump();
  EXPECT_EQ(run["plan"]["elastic"][0]["parallelism"], (json{{"dcn_data", 1}, {"dcn_fsdp", 1}}));

  json first;
  ASSERT_TRUE(wait_for_first_attempt_pids(id, 4, 180s, &first));
  EXPECT_EQ(first.value("num_slices", -1), 2) << describe_attempts({first});
  const auto ranks = hosts_by_rank(first);
  ASSERT_EQ(ranks.at(2).value("worker_id", ""), slice1_host0.worker_id())
      << describe_attempts({first});
  const std::string attempt_id = first["id"];
  ASSERT_TRUE(eventually(
      [&] {
        auto steps = step_lines(slice1_host0.rank_lines(attempt_id, 2));
        return !steps.empty() && steps.back() >= 12;
      },
      180s, 20ms))
      << "rank 2 never passed checkpoint 10" << diagnostics(id);

  // Slice 1 loses a host: the run continues on slice 0 alone.
  lose_host(slice1_host0, ranks.at(2)["pid"].get<int>());

  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 300s, &done)) << diagnostics(id);
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump();
  EXPECT_EQ(done.value("recoveries", -1), 1) << done.dump();
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 2u) << describe_attempts(att) << diagnostics(id);
  const json& last = att.back();
  EXPECT_EQ(last.value("state", ""), "succeeded") << describe_attempts(att);
  EXPECT_EQ(last.value("num_slices", -1), 1) << describe_attempts(att);
  for (const auto& [rank, h] : hosts_by_rank(last)) EXPECT_EQ(h.value("slice", -1), 0) << h;
  // The placement said how the DCN axes were laid out.
  EXPECT_TRUE(any_event_says(events(id), "layout dcn_fsdp 2 -> 1")) << diagnostics(id);
  // The workload ran on 2 ranks (one slice): total_weights = world size * batch * seq.
  const auto lines = local_rank_lines(last, 0);
  const auto steps = step_lines(lines);
  ASSERT_FALSE(steps.empty()) << "the 1-slice attempt printed no step" << diagnostics(id);
  EXPECT_EQ(steps.back(), 29);
  EXPECT_EQ(step_field(lines, steps.front(), "total_weights"),
            std::optional<double>(2.0 * batch * seq));
}

TEST_F(ElasticShrink, FlappingClusterEndsTheRunAfterMaxRecoveries) {
  const auto cluster = create_cluster("cpu-2", 1);
  WorkerProcess& host1 = *start_workers(cluster, 1, 2).at(1);
  json spec = command_spec(unique_name("flapping"), cluster, {"sleep", "300"}, 3);
  spec["max_recoveries"] = 1;
  const json run = submit(spec);
  const std::string id = run["id"];

  // First loss: recovered (1 of 1 allowed).
  json first;
  ASSERT_TRUE(wait_for_first_attempt_pids(id, 2, 120s, &first));
  auto ranks = hosts_by_rank(first);
  const pid_t survivor = ranks.at(0)["pid"].get<int>();
  lose_host(host1, ranks.at(1)["pid"].get<int>());
  ASSERT_TRUE(
      wait_for_recovering(id, survivor, std::chrono::seconds(kHeartbeatDeadlineSeconds + 8)))
      << diagnostics(id);
  host1.start();

  // Second loss: max_recoveries spent, the run fails.
  json second;
  ASSERT_TRUE(wait_for_run(
      id, "attempt 2 running with both pids",
      [&](const json& r) {
        if (r.value("state", "") != "running") return false;
        auto att = attempts(id);
        if (att.size() != 2) return false;
        auto h = hosts_by_rank(att[1]);
        if (h.size() != 2 || !has_pid(h.at(0)) || !has_pid(h.at(1))) return false;
        second = att[1];
        return true;
      },
      120s));
  ranks = hosts_by_rank(second);
  lose_host(host1, ranks.at(1)["pid"].get<int>());

  json failed;
  ASSERT_TRUE(
      wait_for_state(id, "failed", std::chrono::seconds(kHeartbeatDeadlineSeconds + 20), &failed))
      << diagnostics(id);
  EXPECT_EQ(failed.value("failure_class", json()), json("host_lost")) << failed.dump();
  EXPECT_THAT(failed.value("failure_detail", std::string()),
              ::testing::HasSubstr("max_recoveries reached (1 infrastructure recoveries made, 1 "
                                   "allowed)"))
      << failed.dump();
  EXPECT_EQ(failed.value("recoveries", -1), 1) << failed.dump();
  EXPECT_EQ(failed.value("restarts", -1), 0) << failed.dump();
}

}  // namespace
}  // namespace podium::e2e
