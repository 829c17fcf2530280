// Issue 4 acceptance: a lost host is noticed within the heartbeat deadline and the run recovers
// from its latest checkpoint without spending the restart budget; an elastic run starts on the
// slices that exist and grows when the missing slice comes back.

#include <algorithm>
#include <chrono>
#include <iostream>
#include <numeric>
#include <set>
#include <thread>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kHeartbeatDeadlineSeconds = 4;

// Step numbers of the finished checkpoint directories (<...>/checkpoints/<N>) under `root`.
std::set<int> checkpoint_dirs_on_disk(const std::filesystem::path& root) {
  std::set<int> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const auto& p = it->path();
    if (!it->is_directory(ec) || p.parent_path().filename() != "checkpoints") continue;
    const std::string n = p.filename().string();
    if (!n.empty() && std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
      out.insert(std::stoi(n));
  }
  return out;
}

class HostLost : public E2eTest {
 protected:
  Settings settings() const override {
    return {.extra = {"scheduler.heartbeat_deadline_seconds=" +
                          std::to_string(kHeartbeatDeadlineSeconds),
                      "scheduler.heartbeat_interval_seconds=1"},
            .fixed_port = false};
  }
};

TEST_F(HostLost, RecoversFromCheckpointWithoutSpendingBudget) {
  const auto cluster = create_cluster("cpu-2", 1);
  WorkerProcess& host1 = *start_workers(cluster, 1, 2).at(1);
  const auto ds = dataset();
  // Batches large enough for steps of a few tenths of a second (0.5 s on a busy 2-core machine):
  // the test sees step 14 and kills before checkpoint 20.
  const json run = submit(reference_spec(unique_name("hostlost"), cluster, ds,
                                         {.steps = 40,
                                          .per_device_batch_size = 8,
                                          .max_target_length = 128,
                                          .checkpoint_period = 10,
                                          .max_restarts = 3}));
  const std::string id = run["id"];

  // Both ranks running with their pids known.
  json first;
  ASSERT_TRUE(wait_for_first_attempt_pids(id, 2, 180s, &first));
  const auto hosts = hosts_by_rank(first);
  const json& rank0 = hosts.at(0);
  const json& rank1 = hosts.at(1);
  ASSERT_EQ(rank1.value("worker_id", ""), host1.worker_id()) << "rank 1 is expected on host 1\n"
                                                             << describe_attempts({first});
  const pid_t pid0 = rank0["pid"].get<int>();
  const pid_t pid1 = rank1["pid"].get<int>();
  ASSERT_TRUE(process_alive(pid0)) << describe_process(pid0);
  ASSERT_TRUE(process_alive(pid1)) << describe_process(pid1);

  // Step >= 14, read where it is first visible: the agent's own file of what rank 1 printed
  // (the server's last_step trails it by an upload batch).
  const std::string attempt_id = first["id"];
  bool at_14 = eventually(
      [&] {
        auto steps = step_lines(host1.rank_lines(attempt_id, 1));
        return !steps.empty() && steps.back() >= 14;
      },
      180s, 20ms);
  ASSERT_TRUE(at_14) << "rank 1 never reached step 14; it printed steps "
                     << ::testing::PrintToString(step_lines(host1.rank_lines(attempt_id, 1)))
                     << diagnostics(id);

  // The host dies: its agent and its rank's whole process group, with SIGKILL.
  lose_host(host1, pid1);
  const auto killed_at = Clock::now();
  const auto printed = step_lines(host1.rank_lines(attempt_id, 1));
  ASSERT_FALSE(printed.empty());
  // Ranks move in lockstep (one allreduce per step): with rank 1 at step <= 17, rank 0 cannot
  // have finished step 19 and saved checkpoint 20.
  ASSERT_LE(printed.back(), 17) << "the kill came too close to checkpoint 20: the test's "
                                   "poll of the agent's log file fell behind the workload";

  // Noticed within the heartbeat deadline (plus a margin for the sweep and the cancel): the run
  // is recovering and rank 0's process (the other rank) is gone.
  json recovering;
  ASSERT_TRUE(wait_for_recovering(id, pid0, std::chrono::seconds(kHeartbeatDeadlineSeconds + 8),
                                  &recovering));
  const auto noticed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed_at).count();
  RecordProperty("host_loss_noticed_ms", std::to_string(noticed_ms));
  std::cout << "host loss noticed (run recovering, rank 0 gone) " << noticed_ms
            << " ms after the kill (deadline " << kHeartbeatDeadlineSeconds << " s)\n";
  {
    auto att = attempts(id);
    ASSERT_GE(att.size(), 1u);
    EXPECT_EQ(att[0].value("failure_class", json()), json("host_lost"))
        << describe_attempts(att) << diagnostics(id);
    EXPECT_NE(att[0].value("state", ""), "running") << describe_attempts(att);
  }
  EXPECT_EQ(recovering.value("restarts", -1), 0) << recovering.dump();
  {
    const auto on_disk = checkpoint_dirs_on_disk(output_dir());
    EXPECT_TRUE(on_disk.count(10)) << "no checkpoint 10 under " << output_dir();
    ASSERT_FALSE(on_disk.count(20))
        << "checkpoint 20 was written although rank 1 died at step " << printed.back();
  }
  // Host 1 is still down: no new attempt can have been placed on a gang that needs it.
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(get_run(id).value("state", ""), "recovering");

  // The agent comes back: the run resumes from checkpoint 10 and succeeds.
  host1.start();
  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 240s, &done))
      << "(the loss was noticed after " << noticed_ms << " ms)";
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump();
  EXPECT_EQ(done.value("recoveries", -1), 1) << done.dump();
  EXPECT_EQ(done.value("resumed_from_step", json()), json(10)) << done.dump();

  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 2u) << describe_attempts(att) << diagnostics(id);
  EXPECT_EQ(att[1].value("state", ""), "succeeded") << describe_attempts(att);
  EXPECT_EQ(att[1].value("resumed_from_step", json()), json(10)) << describe_attempts(att);
  EXPECT_EQ(att[1].value("first_step", json()), json(10)) << describe_attempts(att);
  // The workload itself restored checkpoint 10 and trained steps 10..39.
  const auto lines0 = local_rank_lines(att[1], 0);
  EXPECT_TRUE(std::any_of(lines0.begin(), lines0.end(), [](const std::string& l) {
    return l.find("restoring from this run's directory step 10") != std::string::npos;
  })) << "rank 0 of attempt 2 did not restore checkpoint 10";
  auto steps2 = step_lines(lines0);
  EXPECT_EQ(steps2, step_range(10, 40));

  EXPECT_EQ(checkpoint_steps(id), (std::vector<int>{10, 20, 30, 40}));
  EXPECT_TRUE(metrics_steps_are(metrics(id), step_range(0, 40), false));
  EXPECT_TRUE(logs_match_workers(id, att[1]));

  // JAX joined both processes through Podium's coordinator variables, in each attempt.
  for (const json& a : att)
    for (int rank : {0, 1}) {
      const auto lines = local_rank_lines(a, rank);
      const std::string joined =
          "jax.distributed initialized: process " + std::to_string(rank) + " of 2";
      EXPECT_TRUE(
          std::any_of(lines.begin(), lines.end(),
                      [&](const std::string& l) { return l.find(joined) != std::string::npos; }))
          << "attempt " << a.value("number", 0) << " rank " << rank << " never said '" << joined
          << "'";
    }
  // The checkpoints are Orbax's: each finished step directory carries Orbax's metadata.
  for (int step : {10, 20, 30, 40}) {
    const auto dir = output_dir() / id / "checkpoints" / std::to_string(step);
    EXPECT_TRUE(std::filesystem::exists(dir / "_CHECKPOINT_METADATA")) << dir;
  }
}

class Elastic : public E2eTest {};

TEST_F(Elastic, StartsOnOneSliceAndGrowsToTwoAtACheckpoint) {
  const auto cluster = create_cluster("cpu-2", 2);
  start_workers(cluster, 1, 2);
  const auto ds = dataset();
  const int batch = 4;
  const int seq = 128;
  json spec = reference_spec(unique_name("elastic"), cluster, ds,
                             {.steps = 60,
                              .per_device_batch_size = batch,
                              .max_target_length = seq,
                              .checkpoint_period = 10,
                              .max_restarts = 3});
  spec["num_slices"] = 2;
  spec["min_slices"] = 1;
  const json run = submit(spec);
  const std::string id = run["id"];

  // Runs on the one slice that exists.
  json first;
  ASSERT_TRUE(wait_for_run(
      id, "attempt 1 running on 1 slice",
      [&](const json& r) {
        if (r.value("state", "") != "running") return false;
        auto att = attempts(id);
        if (att.empty()) return false;
        first = att[0];
        return true;
      },
      180s));
  EXPECT_EQ(first.value("num_slices", -1), 1) << describe_attempts({first});
  ASSERT_EQ(first.value("hosts", json::array()).size(), 2u) << describe_attempts({first});
  for (const auto& h : first["hosts"]) EXPECT_EQ(h.value("slice", -1), 0) << h.dump();

  // The missing slice comes up.
  start_worker(cluster, 1, 0);
  start_worker(cluster, 1, 1);

  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 300s, &done));
  const auto att = attempts(id);
  ASSERT_GE(att.size(), 2u) << "the run never grew\n" << describe_attempts(att) << diagnostics(id);
  EXPECT_EQ(att[0].value("num_slices", -1), 1) << describe_attempts(att);
  const json& last = att.back();
  EXPECT_EQ(last.value("state", ""), "succeeded") << describe_attempts(att);
  EXPECT_EQ(last.value("num_slices", -1), 2) << describe_attempts(att);
  const auto hosts = hosts_by_rank(last);
  EXPECT_EQ(hosts.size(), 4u) << describe_attempts(att);
  std::set<int> slices;
  for (const auto& [rank, h] : hosts) slices.insert(h.value("slice", -1));
  EXPECT_EQ(slices, (std::set<int>{0, 1})) << describe_attempts(att);
  // It grew at a checkpoint: resumed from a multiple of the checkpoint period, past step 0.
  ASSERT_TRUE(last.value("resumed_from_step", json()).is_number_integer())
      << describe_attempts(att);
  const int resumed = last["resumed_from_step"].get<int>();
  EXPECT_GT(resumed, 0) << describe_attempts(att);
  EXPECT_EQ(resumed % 10, 0) << describe_attempts(att);
  EXPECT_EQ(done.value("restarts", -1), 0) << "growing is not a failure\n" << done.dump();

  // World sizes as the workload saw them: total_weights = world_size * batch * seq.
  const auto lines_first = local_rank_lines(att[0], 0);
  const auto steps_first = step_lines(lines_first);
  ASSERT_FALSE(steps_first.empty()) << "attempt 1 printed no step";
  EXPECT_EQ(step_field(lines_first, steps_first.front(), "total_weights"),
            std::optional<double>(2.0 * batch * seq));
  const auto lines_last = local_rank_lines(last, 0);
  const auto steps_last = step_lines(lines_last);
  ASSERT_FALSE(steps_last.empty()) << "the 2-slice attempt printed no step";
  EXPECT_EQ(steps_last.front(), resumed);
  EXPECT_EQ(steps_last.back(), 59);
  EXPECT_EQ(step_field(lines_last, steps_last.front(), "total_weights"),
            std::optional<double>(4.0 * batch * seq));

  EXPECT_TRUE(metrics_steps_are(metrics(id), step_range(0, 60), false));
  EXPECT_TRUE(logs_match_workers(id, last));
}

}  // namespace
}  // namespace podium::e2e
