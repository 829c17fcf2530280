// Summaries of settled runs are stored (backend/api/run_summary_store.h): computed by the server
// without a request once the run has finished, served from the store, and never served stale: a
// late log batch with more steps, a new cluster price and a changed run are seen by the next
// GET /runs/{id}/summary and GET /compare, and the stored row is brought up to date.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "tests/integration/support/hand_agent.h"

namespace podium::it {
namespace {

using nlohmann::json;

class SummaryStore : public PodiumTest {
 protected:
  Podium::Options options() const override {
    return {.settings = {"summaries.precompute_interval_seconds=1"}};
  }
  // A cpu-1 cluster with a price, its host's agent driven by hand, and one command run that
  // printed `steps` step lines and exited 0.
  void SetUp() override {
    PodiumTest::SetUp();
    if (IsSkipped()) return;  // no test database
    cluster = unique_name("sc");
    podium().create_cluster(cluster, "cpu-1", {{"price_per_chip_hour", 2.0}});
    agent = std::make_unique<HandAgent>(podium(), cluster,
                                        HandAgent::Host{.instance = "sc", .address = "127.0.0.1"});
    run_id = podium().submit_run(podium().admin(), cluster)["id"];
    attempt = agent->next_attempt();
    agent->report(attempt, "running");
    post_steps(0, 10);
    agent->report(attempt, "exited", {{"exit_code", 0}});
    ASSERT_EQ(wait_for_run_state(podium(), run_id, "succeeded", std::chrono::seconds(30)),
              "succeeded");
  }

  // Step lines first..last-1 as rank 0's lines from seq `first`.
  void post_steps(int first, int last) {
    json lines = json::array();
    for (int s = first; s < last; ++s)
      lines.push_back("completed step: " + std::to_string(s) +
                      ", seconds: 2.0, TFLOP/s/device: 1.0, Tokens/s/device: 100.0, "
                      "total_weights: 4096, loss: 1.5");
    agent->post_lines(attempt, first, lines);
  }

  json run() { return require_status(podium().admin().get("/api/v1/runs/" + run_id), 200).json; }
  json summary() {
    return require_status(podium().admin().get("/api/v1/runs/" + run_id + "/summary"), 200).json;
  }

  // The stored summary once it has `steps` steps (the sweep runs every second), else null.
  json stored_with_steps(int steps) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      const std::string text = podium().db().scalar(
          "SELECT summary::text FROM run_summaries WHERE run_id = $1", {run_id});
      if (!text.empty()) {
        json s = json::parse(text);
        if (s["steps"] == steps) return s;
      }
      if (std::chrono::steady_clock::now() > deadline) return nullptr;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  std::string cluster, run_id, attempt;
  std::unique_ptr<HandAgent> agent;
};

TEST_F(SummaryStore, ALateBatchOfStepsIsInTheNextSummary) {
  auto first = summary();
  EXPECT_EQ(first["steps"], 10);
  EXPECT_EQ(first["live"], false);
  EXPECT_EQ(summary(), first);  // asked again: the same answer

  post_steps(10, 25);  // the agent's last upload, after the exit
  auto later = summary();
  EXPECT_EQ(later["steps"], 25) << later.dump();
  EXPECT_EQ(later["last_step"], 24);
  auto cmp = require_status(
      podium().admin().get("/api/v1/compare?runs=" + run_id + "," +
                           podium().submit_run(podium().admin(), cluster)["id"].get<std::string>()),
      200);
  EXPECT_EQ(cmp.json["rows"][0]["step_seconds"], later["step_seconds"]);
}

TEST_F(SummaryStore, ANewClusterPriceIsInTheNextSummaryAndCompare) {
  EXPECT_EQ(summary()["price_per_chip_hour"], 2.0);
  require_status(
      podium().admin().patch("/api/v1/clusters/" + cluster, {{"price_per_chip_hour", 3.5}}), 200);
  EXPECT_EQ(summary()["price_per_chip_hour"], 3.5);
}

TEST_F(SummaryStore, AChangedRunIsSummarizedAgain) {
  EXPECT_EQ(summary()["failure_class"], nullptr);
  // Whatever changes the run row (here by hand) is seen: nothing is served from before it.
  podium().db().query("UPDATE runs SET failure_class = 'error', state = 'failed' WHERE id = $1",
                      {run_id});
  auto s = summary();
  EXPECT_EQ(s["failure_class"], "error");
  EXPECT_EQ(s["state"], "failed");
}

TEST_F(SummaryStore, AFinishedRunsSummaryIsStoredWithoutARequest) {
  // Nobody asked for it: the server's sweep computed and stored it.
  const json stored = stored_with_steps(10);
  ASSERT_FALSE(stored.is_null());
  EXPECT_EQ(stored["run_id"], run_id);
  EXPECT_EQ(stored["state"], "succeeded");
  EXPECT_EQ(stored["step_seconds"], 2.0);
  EXPECT_EQ(summary(), stored);
}

TEST_F(SummaryStore, TheStoredSummaryIsWhatIsServed) {
  ASSERT_FALSE(stored_with_steps(10).is_null());
  // Marked by hand under the same fingerprint: the route answers from the row, not from the
  // metrics (the sweep leaves a row whose fingerprint matches alone).
  podium().db().query(
      "UPDATE run_summaries SET summary = jsonb_set(summary, '{name}', '\"from-the-store\"') "
      "WHERE run_id = $1",
      {run_id});
  EXPECT_EQ(summary()["name"], "from-the-store");
  const std::string other = podium().submit_run(podium().admin(), cluster)["id"];
  auto cmp =
      require_status(podium().admin().get("/api/v1/compare?runs=" + run_id + "," + other), 200);
  EXPECT_EQ(cmp.json["rows"][0]["name"], "from-the-store");
}

TEST_F(SummaryStore, AStaleStoredSummaryIsRecomputedAndStoredAgain) {
  ASSERT_FALSE(stored_with_steps(10).is_null());
  post_steps(10, 25);  // after the run finished: the stored row is stale
  // Without a request, the sweep brings the row up to date...
  EXPECT_FALSE(stored_with_steps(25).is_null());
  // ...and a request between the two is answered from the metrics, not from the stale row.
  post_steps(25, 30);
  EXPECT_EQ(summary()["steps"], 30);
  EXPECT_FALSE(stored_with_steps(30).is_null());
}

TEST_F(SummaryStore, ALiveRunIsNotStored) {
  const std::string live = podium().submit_run(podium().admin(), cluster)["id"];
  auto s = require_status(podium().admin().get("/api/v1/runs/" + live + "/summary"), 200).json;
  EXPECT_EQ(s["live"], true);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // two sweeps
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM run_summaries WHERE run_id = $1", {live}),
            "0");
}

}  // namespace
}  // namespace podium::it
