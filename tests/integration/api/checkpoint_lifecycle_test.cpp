// Checkpoint lifecycle on the server (issue 30.4), the agent driven by hand: retention chooses
// from the cluster's policy and answers the checkpoint report with what to delete, never the
// latest nor the step the live attempt resumed from; the agent's outcomes are recorded
// idempotently and shown on the run's checkpoints list; the cluster's policy is validated.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

class CheckpointLifecycle : public PodiumTest {
 protected:
  // A cpu-1 cluster with `retention`, its host registered, a command run placed on it and
  // delivered: the attempt's checkpoint reports may start.
  void start(const json& retention, const json& spec = json::object()) {
    cluster = unique_name("ck");
    podium().create_cluster(cluster, "cpu-1", {{"checkpoint_retention", retention}});
    Api api = podium().as(podium().worker_token(cluster));
    auto r = require_status(
        api.post("/api/v1/agent/register",
                 {{"cluster", cluster}, {"slice", 0}, {"host", 0}, {"address", "127.0.0.1"}}),
        200);
    agent_api = podium().as(r.json["credential"]);
    const std::string worker = r.json["worker_id"];
    run_id = podium().submit_run(podium().admin(), cluster, "", spec)["id"];
    auto a = require_status(agent->get("/api/v1/agent/assignment?worker_id=" + worker + "&wait=10"),
                            200);
    attempt = a.json["attempt_id"];
  }

  std::string uri(int step) const {
    return "/data/out/" + run_id + "/checkpoints/" + std::to_string(step);
  }
  // POST .../checkpoints for `step`: the answer's "delete" steps.
  std::vector<int> report(int step) {
    auto r = agent->post("/api/v1/agent/attempts/" + attempt + "/checkpoints",
                         {{"step", step}, {"uri", uri(step)}, {"bytes", 100}});
    EXPECT_TRUE(r.status == 201 || r.status == 200) << r;
    std::vector<int> steps;
    for (const auto& d : r.json["delete"]) {
      EXPECT_EQ(d["uri"], uri(d["step"].get<int>()));
      steps.push_back(d["step"]);
    }
    return steps;
  }
  Reply outcome(const json& body) {
    return agent->post("/api/v1/agent/attempts/" + attempt + "/checkpoint-deletions", body);
  }
  json checkpoints() {
    return require_status(podium().admin().get("/api/v1/runs/" + run_id + "/checkpoints"), 200)
        .json["items"];
  }

  std::string cluster, run_id, attempt;
  Api agent_api;
  Api* agent = &agent_api;
};

TEST_F(CheckpointLifecycle, TheClustersPolicyChoosesAndTheAgentsOutcomesAreRecorded) {
  start({{"keep_last", 2}, {"keep_every", 30}});
  using ::testing::ElementsAre;
  EXPECT_THAT(report(10), ElementsAre());
  EXPECT_THAT(report(20), ElementsAre());
  EXPECT_THAT(report(30), ElementsAre(10));
  // Not yet reported: asked again, with the newly chosen one.
  EXPECT_THAT(report(40), ElementsAre(10, 20));
  // A retried report of the same step gets the same answer.
  EXPECT_THAT(report(40), ElementsAre(10, 20));

  auto done = require_status(outcome({{"step", 10}, {"uri", uri(10)}, {"deleted", true}}), 200);
  EXPECT_EQ(done.json["state"], "deleted");
  // Idempotent, and a late failure report does not undo a deletion.
  EXPECT_EQ(require_status(outcome({{"step", 10}, {"deleted", true}}), 200).json["state"],
            "deleted");
  EXPECT_EQ(require_status(outcome({{"step", 10}, {"deleted", false}, {"error", "late"}}), 200)
                .json["state"],
            "deleted");
  auto failed = require_status(
      outcome({{"step", 20}, {"deleted", false}, {"error", "neither gcloud nor gsutil"}}), 200);
  EXPECT_EQ(failed.json["state"], "delete_failed");
  EXPECT_THAT(report(50), ElementsAre());  // 30: every 30th; 40, 50: the last two

  auto items = checkpoints();
  ASSERT_EQ(items.size(), 5u) << items;
  std::vector<std::string> states;
  for (const auto& c : items) states.push_back(c["state"]);
  EXPECT_THAT(states, ElementsAre("deleted", "delete_failed", "complete", "complete", "complete"));
  EXPECT_TRUE(items[0]["deleted_at"].is_string()) << items[0];
  EXPECT_TRUE(items[0]["delete_error"].is_null()) << items[0];
  EXPECT_TRUE(items[1]["deleted_at"].is_null()) << items[1];
  EXPECT_EQ(items[1]["delete_error"], "neither gcloud nor gsutil");
  EXPECT_TRUE(items[2]["deleted_at"].is_null());

  // A retry that succeeds after all.
  EXPECT_EQ(require_status(outcome({{"step", 20}, {"deleted", true}}), 200).json["state"],
            "deleted");
  // Only what the server chose is recorded: 409 for a kept one, 404 for an unknown step.
  EXPECT_TRUE(is_problem(outcome({{"step", 50}, {"deleted", true}}), 409));
  EXPECT_TRUE(is_problem(outcome({{"step", 999}, {"deleted", true}}), 404));
  EXPECT_TRUE(is_problem(outcome({{"step", 30}, {"deleted", false}}), 400));  // no error given
  EXPECT_TRUE(is_problem(outcome({{"step", 30}, {"deleted", "yes"}}), 400));
  EXPECT_TRUE(is_problem(outcome({{"step", 30}, {"deleted", true}, {"extra", 1}}), 400));
}

TEST_F(CheckpointLifecycle, NeverTheCheckpointTheLiveAttemptResumedFrom) {
  start({{"keep_last", 1}});
  // The trainer says it resumed from step 10 (the attempt's resumed_from_step).
  require_status(
      agent->post(
          "/api/v1/agent/attempts/" + attempt + "/logs",
          {{"rank", 0}, {"seq", 0}, {"lines", {"restoring from this run's directory step 10"}}}),
      200);
  EXPECT_THAT(report(10), ::testing::ElementsAre());
  EXPECT_THAT(report(20), ::testing::ElementsAre());
  EXPECT_THAT(report(30), ::testing::ElementsAre(20));
}

TEST_F(CheckpointLifecycle, WithoutAPolicyEveryCheckpointIsKept) {
  start(nullptr);
  for (int step : {10, 20, 30, 40}) EXPECT_THAT(report(step), ::testing::ElementsAre());
}

TEST_F(CheckpointLifecycle, TheRunsOwnPolicyReplacesTheClusters) {
  start({{"keep_last", 1}}, {{"checkpoint_retention", {{"keep_every", 20}}}});
  EXPECT_THAT(report(10), ::testing::ElementsAre());
  EXPECT_THAT(report(20), ::testing::ElementsAre(10));
  EXPECT_THAT(report(30), ::testing::ElementsAre(10));
  EXPECT_THAT(report(40), ::testing::ElementsAre(10, 30));
}

// A queued run's init_from holds its source step; the submission is checked against the
// source's checkpoints and stored with the source's id even when it named the run by name.
TEST_F(CheckpointLifecycle, InitFromIsCheckedAtSubmissionAndProtectsItsStep) {
  start({{"keep_last", 1}});
  EXPECT_THAT(report(10), ::testing::ElementsAre());
  const std::string source_name =
      require_status(podium().admin().get("/api/v1/runs/" + run_id), 200).json["name"];
  const auto admin = podium().admin();
  auto submit = [&](const json& init_from) {
    json body = Podium::run_spec(cluster, unique_name("init"));
    body["init_from"] = init_from;
    return admin.post("/api/v1/runs", body);
  };
  auto refused = submit({{"run", run_id}, {"step", 15}});
  EXPECT_TRUE(is_problem(refused, 422)) << refused;
  EXPECT_NE(refused.body.find("init_from.step"), std::string::npos) << refused;
  EXPECT_NE(refused.body.find("finished: 10"), std::string::npos) << refused;
  refused = submit({{"run", "run_nosuch"}, {"step", 10}});
  EXPECT_TRUE(is_problem(refused, 422)) << refused;
  EXPECT_NE(refused.body.find("init_from.run"), std::string::npos) << refused;
  // Another shape: a workload or model other than the source's.
  json other = Podium::run_spec(cluster, unique_name("init"));
  other["init_from"] = {{"run", run_id}, {"step", 10}};
  other["model"] = "reference-tiny";
  refused = admin.post("/api/v1/runs", other);
  EXPECT_TRUE(is_problem(refused, 422)) << refused;
  EXPECT_NE(refused.body.find("model"), std::string::npos) << refused;

  auto accepted = require_status(submit({{"run", source_name}, {"step", 10}}), 201);
  const std::string waiting = accepted.json["id"];
  auto stored = require_status(admin.get("/api/v1/runs/" + waiting), 200).json;
  EXPECT_EQ(stored["spec"]["init_from"], (json{{"run", run_id}, {"step", 10}})) << stored;
  // The queued run holds step 10: the source's retention lets 20 go, not 10.
  EXPECT_THAT(report(20), ::testing::ElementsAre());
  EXPECT_THAT(report(30), ::testing::ElementsAre(20));
  // Once it is cancelled, nothing holds 10 any more.
  require_status(admin.post("/api/v1/runs/" + waiting + "/cancel"), 200);
  EXPECT_THAT(report(40), ::testing::ElementsAre(10, 20, 30));
  // A step being deleted cannot be named.
  refused = submit({{"run", run_id}, {"step", 30}});
  EXPECT_TRUE(is_problem(refused, 422)) << refused;
  EXPECT_NE(refused.body.find("deleting"), std::string::npos) << refused;
}

TEST_F(CheckpointLifecycle, TheClustersPolicyIsShownChangedClearedAndValidated) {
  const std::string name = unique_name("ck");
  auto c = podium().create_cluster(name, "cpu-1", {{"checkpoint_retention", {{"keep_last", 3}}}});
  EXPECT_EQ(c["checkpoint_retention"], (json{{"keep_last", 3}, {"keep_every", nullptr}}));
  const Api admin = podium().admin();
  auto p = require_status(
      admin.patch("/api/v1/clusters/" + name, {{"checkpoint_retention", {{"keep_every", 100}}}}),
      200);
  EXPECT_EQ(p.json["checkpoint_retention"], (json{{"keep_last", nullptr}, {"keep_every", 100}}));
  // Other changes leave it as it is.
  p = require_status(admin.patch("/api/v1/clusters/" + name, {{"zone", "z"}}), 200);
  EXPECT_EQ(p.json["checkpoint_retention"]["keep_every"], 100);
  EXPECT_EQ(require_status(admin.get("/api/v1/clusters/" + name), 200).json["checkpoint_retention"],
            p.json["checkpoint_retention"]);
  p = require_status(admin.patch("/api/v1/clusters/" + name, {{"checkpoint_retention", nullptr}}),
                     200);
  EXPECT_TRUE(p.json["checkpoint_retention"].is_null()) << p.json;
  for (const json& bad : {json{{"keep_last", -1}}, json{{"keep_every", 0}}, json{{"keep_lats", 1}},
                          json("3"), json{{"keep_last", 1.5}}}) {
    auto r = admin.patch("/api/v1/clusters/" + name, {{"checkpoint_retention", bad}});
    EXPECT_TRUE(r.status == 400 || r.status == 422) << r;
    EXPECT_NE(r.body.find("checkpoint_retention"), std::string::npos) << r;
  }
}

}  // namespace
}  // namespace podium::it
