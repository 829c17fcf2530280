// Issue 14 acceptance: a run whose base_output_directory is a URI the agents cannot list
// (gs://...) recovers after a host loss from the checkpoint Podium learned from the trainer's
// own log lines ("Finished saving checkpoint to `gs://.../checkpoints/N`.", "restoring from this
// run's directory step N"), with resumed_from_step set and no restart spent. The reference
// trainer has no cloud client: PODIUM_REFERENCE_OBJECT_STORE, given in the run's env, is the
// local directory standing in for the bucket; Podium never looks there.

#include <algorithm>
#include <chrono>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

class RemoteCheckpoints : public E2eTest {
 protected:
  Settings settings() const override {
    return {.extra = {"scheduler.heartbeat_deadline_seconds=4",
                      "scheduler.heartbeat_interval_seconds=1"}};
  }
};

TEST_F(RemoteCheckpoints, ARunOnAnUnlistableUriRecoversFromTheCheckpointItsLogNamed) {
  const auto cluster = create_cluster("cpu-2", 1);
  WorkerProcess& host1 = *start_workers(cluster, 1, 2).at(1);
  const auto bucket = dir() / "bucket";
  json spec = reference_spec(unique_name("remote"), cluster, dataset(),
                             {.steps = 60,
                              .per_device_batch_size = 8,
                              .max_target_length = 128,
                              .checkpoint_period = 10,
                              .max_restarts = 0});
  spec["config"] = {{"base_output_directory", "gs://podium-e2e-bucket/outputs"}};
  spec["env"] = {{"PODIUM_REFERENCE_OBJECT_STORE", bucket.string()}};
  const json run = submit(spec);
  const std::string id = run["id"];

  json first;
  ASSERT_TRUE(wait_for_run(
      id, "running with a checkpoint learned from the log",
      [&](const json& r) {
        if (r.value("state", "") != "running" || checkpoint_steps(id).empty()) return false;
        auto att = attempts(id);
        if (att.size() != 1) return false;
        first = att[0];
        return true;
      },
      240s))
      << diagnostics(id);
  // The agents were given no directory to scan: the output is not local.
  for (const auto& h : first.value("hosts", json::array()))
    EXPECT_TRUE(h.value("checkpoint_dir", json()).is_null()) << h.dump();

  // Host 1 dies with its rank.
  pid_t pid1 = 0;
  for (const auto& h : first.value("hosts", json::array()))
    if (h.value("rank", -1) == 1 && h["pid"].is_number_integer()) pid1 = h["pid"].get<int>();
  lose_host(host1, pid1);
  ASSERT_TRUE(wait_for_run(
      id, "attempt 1 ended host_lost",
      [&](const json&) {
        auto att = attempts(id);
        return !att.empty() && att[0].value("failure_class", json()) == json("host_lost");
      },
      30s))
      << diagnostics(id);
  const std::vector<int> learned = checkpoint_steps(id);
  ASSERT_FALSE(learned.empty());

  host1.start();
  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 300s, &done)) << diagnostics(id);
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump();
  EXPECT_EQ(done.value("recoveries", -1), 1) << done.dump();
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 2u) << describe_attempts(att);
  ASSERT_TRUE(att[1].value("resumed_from_step", json()).is_number_integer())
      << describe_attempts(att);
  const int resumed = att[1]["resumed_from_step"].get<int>();
  EXPECT_GE(resumed, learned.back()) << describe_attempts(att);
  EXPECT_EQ(resumed % 10, 0) << describe_attempts(att);
  // The trainer really restored that step (the line the server learned it from).
  const auto lines0 = local_rank_lines(att[1], 0);
  const std::string restore = "restoring from this run's directory step " + std::to_string(resumed);
  EXPECT_TRUE(
      std::any_of(lines0.begin(), lines0.end(),
                  [&](const std::string& l) { return l.find(restore) != std::string::npos; }))
      << "rank 0 of attempt 2 did not print '" << restore << "'";

  // Every checkpoint row names the URI the trainer printed.
  const auto page = it::walk_pages(admin(), "/api/v1/runs/" + it::enc(id) + "/checkpoints", 500);
  ASSERT_FALSE(page.items.empty());
  for (const auto& c : page.items)
    EXPECT_EQ(c.value("uri", "").rfind("gs://podium-e2e-bucket/outputs/", 0), 0u) << c.dump();
  // Nothing was written to the server's local output directory.
  EXPECT_FALSE(std::filesystem::exists(output_dir() / done.value("name", "")));
}

}  // namespace
}  // namespace podium::e2e
