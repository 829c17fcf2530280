// Issue 30.4 acceptance: retention keeps exactly the configured checkpoints on the agent's disk
// after a 300-step run (the agent deleted the others and the server recorded each deletion),
// and a second run with init_from starts at the first run's step, refused at submission when
// the step is not a finished checkpoint or the model differs.
#include <algorithm>
#include <chrono>
#include <filesystem>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class CheckpointLifecycle : public E2eTest {};

// The plain step directories under a run's checkpoint directory, sorted.
std::vector<int> steps_on_disk(const fs::path& checkpoints) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(checkpoints, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit))
      out.push_back(std::stoi(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(CheckpointLifecycle, RetentionKeepsTheConfiguredCheckpointsAndInitFromStartsAtItsStep) {
  const auto cluster = create_cluster("cpu-1", 1);
  it::require_status(
      admin().patch("/api/v1/clusters/" + cluster,
                    {{"checkpoint_retention", {{"keep_last", 2}, {"keep_every", 100}}}}),
      200);
  start_workers(cluster, 1, 1);
  const auto ds = dataset();
  // 300 short steps of the tiny model, a checkpoint every 10: seconds, not minutes.
  const json first = submit(reference_spec(unique_name("retain"), cluster, ds,
                                           {.steps = 300,
                                            .per_device_batch_size = 1,
                                            .max_target_length = 16,
                                            .checkpoint_period = 10,
                                            .max_restarts = 0}));
  const std::string id = first["id"];
  ASSERT_TRUE(wait_for_state(id, "succeeded", 300s)) << diagnostics(id);

  // Kept: every 100th step and the last two; the agent deleted the other 26 before its exit.
  const std::vector<int> kept = {100, 200, 290, 300};
  EXPECT_EQ(steps_on_disk(output_dir() / id / "checkpoints"), kept) << diagnostics(id);
  const auto items = it::walk_pages(admin(), "/api/v1/runs/" + id + "/checkpoints", 500).items;
  ASSERT_EQ(items.size(), 30u);
  for (const auto& c : items) {
    const int step = c["step"];
    const bool keep = std::find(kept.begin(), kept.end(), step) != kept.end();
    EXPECT_EQ(c["state"], keep ? "complete" : "deleted") << c.dump();
    EXPECT_EQ(c["deleted_at"].is_string(), !keep) << c.dump();
    EXPECT_TRUE(c["delete_error"].is_null()) << c.dump();
  }

  // init_from refused at submission: a deleted step, no checkpoint at all, another model.
  auto second = reference_spec(unique_name("init"), cluster, ds,
                               {.steps = 220,
                                .per_device_batch_size = 1,
                                .max_target_length = 16,
                                .checkpoint_period = 10,
                                .max_restarts = 0});
  second["init_from"] = {{"run", id}, {"step", 150}};
  auto refused = admin().post("/api/v1/runs", second);
  EXPECT_TRUE(it::is_problem(refused, 422)) << refused;
  EXPECT_NE(refused.body.find("deleted"), std::string::npos) << refused;
  second["init_from"] = {{"run", id}, {"step", 155}};
  EXPECT_TRUE(it::is_problem(admin().post("/api/v1/runs", second), 422));
  second["init_from"] = {{"run", "run_nosuchrun"}, {"step", 200}};
  EXPECT_TRUE(it::is_problem(admin().post("/api/v1/runs", second), 422));
  auto other_model = second;
  other_model["model"] = "reference-small";
  other_model["init_from"] = {{"run", id}, {"step", 200}};
  refused = admin().post("/api/v1/runs", other_model);
  EXPECT_TRUE(it::is_problem(refused, 422)) << refused;
  EXPECT_NE(refused.body.find("reference-small"), std::string::npos) << refused;

  // From step 200 of the first run: the first step it trains is 200.
  second["init_from"] = {{"run", id}, {"step", 200}};
  const json started = submit(second);
  const std::string id2 = started["id"];
  ASSERT_TRUE(wait_for_state(id2, "succeeded", 240s)) << diagnostics(id2);
  const auto att = attempts(id2);
  ASSERT_EQ(att.size(), 1u);
  EXPECT_EQ(att[0].value("first_step", json()), json(200)) << att[0].dump();
  EXPECT_EQ(att[0].value("last_step", json()), json(219)) << att[0].dump();
  const auto lines = local_rank_lines(att[0], 0);
  const auto steps = step_lines(lines);
  ASSERT_FALSE(steps.empty()) << diagnostics(id2);
  EXPECT_EQ(steps.front(), 200);
  EXPECT_EQ(steps.back(), 219);
  EXPECT_NE(std::find_if(lines.begin(), lines.end(),
                         [&](const std::string& l) {
                           return l.rfind("init_from: parameters of " +
                                              (output_dir() / id / "checkpoints/200").string(),
                                          0) == 0;
                         }),
            lines.end())
      << diagnostics(id2);
  // The source checkpoint was protected while the second run was live, and still is on disk.
  EXPECT_EQ(steps_on_disk(output_dir() / id / "checkpoints"), kept);
  // The second run's own checkpoints: 210 and 220, both kept (the last two).
  EXPECT_EQ(steps_on_disk(output_dir() / id2 / "checkpoints"), (std::vector<int>{210, 220}));
}

}  // namespace
}  // namespace podium::e2e
