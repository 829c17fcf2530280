// Log retention (backend/ingest/log_retention.h) in a real podium-server: the log lines of runs
// finished longer ago than retention.log_lines_days are deleted in batches of
// retention.batch_rows and the run is marked; its metrics and summary stay; recent runs, runs
// not finished and a server with retention off keep every line.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

constexpr int kLines = 450;  // several batches of 100

std::string import_run(Podium& p, const std::string& prefix) {
  std::string log;
  for (int s = 0; s < kLines; ++s)
    log += "completed step: " + std::to_string(s) +
           ", seconds: 1.0, TFLOP/s/device: 80.0, Tokens/s/device: 4096.0, total_weights: 4096, "
           "loss: 2.0\n";
  auto r = p.admin().post("/api/v1/runs/import", {{"name", unique_name(prefix)},
                                                  {"accelerator", "v6e-8"},
                                                  {"num_slices", 1},
                                                  {"model", "llama3-8b"},
                                                  {"log", log}});
  require_status(r, 201);
  return r.json["id"];
}

std::string lines_of(Podium& p, const std::string& run) {
  return p.db().scalar("SELECT count(*) FROM log_lines WHERE run_id = $1", {run});
}

// Waits (bounded) until the run's lines are gone and the run is marked.
bool purged_within(Podium& p, const std::string& run, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (p.db().scalar("SELECT logs_purged_at IS NOT NULL FROM runs WHERE id = $1", {run}) == "t")
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

class LogRetention : public PodiumTest {
 protected:
  Podium::Options options() const override {
    return {
        {"retention.log_lines_days=2", "retention.batch_rows=100", "retention.interval_seconds=1"}};
  }
};

TEST_F(LogRetention, DeletesTheLinesOfRunsFinishedBeforeTheRetentionKeepsTheRest) {
  auto& p = podium();
  const std::string old_run = import_run(p, "old");
  const std::string recent = import_run(p, "recent");
  const std::string unfinished = import_run(p, "unfinished");
  ASSERT_EQ(lines_of(p, old_run), std::to_string(kLines));
  // The summary's figures from metrics (its goodput depends on the run's times, changed below).
  const auto step_seconds_before =
      require_status(p.admin().get("/api/v1/runs/" + old_run + "/summary"), 200)
          .json["step_seconds"];
  ASSERT_FALSE(step_seconds_before.is_null());
  // Three days ago for two of them; one of those is (as far as the sweep can tell) still running.
  p.db().query("UPDATE runs SET finished_at = now() - interval '3 days' WHERE id IN ($1, $2)",
               {old_run, unfinished});
  p.db().query("UPDATE runs SET state = 'running' WHERE id = $1", {unfinished});

  ASSERT_TRUE(purged_within(p, old_run, std::chrono::seconds(30)));
  EXPECT_EQ(lines_of(p, old_run), "0");
  EXPECT_EQ(
      require_status(p.admin().get("/api/v1/runs/" + old_run + "/logs"), 200).json["items"].size(),
      0u);
  // Metrics, the summary and the run itself stay.
  EXPECT_EQ(p.db().scalar("SELECT count(*) FROM metrics WHERE run_id = $1", {old_run}),
            std::to_string(kLines));
  EXPECT_EQ(require_status(p.admin().get("/api/v1/runs/" + old_run + "/summary"), 200)
                .json["step_seconds"],
            step_seconds_before);
  EXPECT_EQ(p.admin().get("/api/v1/runs/" + old_run).status, 200);
  // Recent and unfinished runs keep every line, and are not marked.
  EXPECT_EQ(lines_of(p, recent), std::to_string(kLines));
  EXPECT_EQ(lines_of(p, unfinished), std::to_string(kLines));
  EXPECT_EQ(p.db().scalar("SELECT count(*) FROM runs WHERE id IN ($1, $2) AND logs_purged_at IS "
                          "NOT NULL",
                          {recent, unfinished}),
            "0");
}

class NoLogRetention : public PodiumTest {
 protected:
  Podium::Options options() const override { return {{"retention.interval_seconds=1"}}; }
};

TEST_F(NoLogRetention, KeepsEveryLineByDefault) {
  auto& p = podium();
  const std::string run = import_run(p, "kept");
  p.db().query(
      "UPDATE runs SET finished_at = now() - interval '3650 days' WHERE id = $1 "
      "RETURNING 1",
      {run});
  // Several intervals pass; nothing is deleted (retention.log_lines_days defaults to 0).
  EXPECT_FALSE(purged_within(p, run, std::chrono::seconds(3)));
  EXPECT_EQ(lines_of(p, run), std::to_string(kLines));
}

}  // namespace
}  // namespace podium::it
