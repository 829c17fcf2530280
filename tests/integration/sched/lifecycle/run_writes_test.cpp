// The lifecycle writer's run rows (backend/sched/lifecycle/run_writes.h): state changes along the
// run state machine with their events, the restart counters, failure, waiting reasons, placement
// and imported runs.
#include "backend/sched/lifecycle/run_writes.h"

#include <gtest/gtest.h>

#include "backend/sched/lifecycle/illegal_transition.h"
#include "tests/integration/sched/lifecycle/lifecycle_database.h"

namespace podium::sched {
namespace {

class RunWrites : public testing::LifecycleDatabase {
 protected:
  std::string run_value(const std::string& id, const std::string& column) {
    return value("SELECT " + column + "::text AS v FROM runs WHERE id = $1", {id});
  }
  std::string events(const std::string& id) {
    return value(
        "SELECT string_agg(COALESCE(from_state, '-') || '>' || to_state || ':' || cause, ' | ' "
        "ORDER BY id) FROM run_events WHERE run_id = $1",
        {id});
  }
  bool move(const std::string& id, const std::string& from, const std::string& to) {
    return db_->transact(
        [&](db::Transaction& tx) { return transition_run(tx, id, from, to, from + " to " + to); });
  }
};

TEST_F(RunWrites, ARunMovesOnlyAlongTheStateMachine) {
  const std::string run = add_run("queued");
  EXPECT_FALSE(move(run, "queued", "running"));  // not a transition of the table
  EXPECT_FALSE(move(run, "queued", "queued"));
  EXPECT_FALSE(move(run, "queued", "no-such-state"));
  EXPECT_EQ(run_value(run, "state"), "queued");
  EXPECT_EQ(events(run), "");

  EXPECT_TRUE(move(run, "queued", "starting"));
  EXPECT_FALSE(move(run, "queued", "starting"));  // it is no longer queued
  EXPECT_TRUE(move(run, "starting", "running"));
  EXPECT_FALSE(is_null("SELECT started_at FROM runs WHERE id = $1", {run}));
  EXPECT_TRUE(is_null("SELECT finished_at FROM runs WHERE id = $1", {run}));
  EXPECT_TRUE(move(run, "running", "succeeded"));
  EXPECT_FALSE(is_null("SELECT finished_at FROM runs WHERE id = $1", {run}));
  EXPECT_FALSE(move(run, "succeeded", "failed"));  // terminal
  EXPECT_EQ(events(run),
            "queued>starting:queued to starting | starting>running:starting to running | "
            "running>succeeded:running to succeeded");
}

TEST_F(RunWrites, CountersFailureAndWaitingReason) {
  const std::string run = add_run("running");
  db_->transact([&](db::Transaction& tx) {
    count_restart(tx, run);
    count_restart(tx, run);
    count_recovery(tx, run);
    record_run_failure(tx, run, "oom", std::string("Used 20G of 16G hbm"));
    set_waiting_reason(tx, run, std::string("waiting_for_capacity: 2 slices"));
  });
  EXPECT_EQ(run_value(run, "restarts"), "2");
  EXPECT_EQ(run_value(run, "recoveries"), "1");
  EXPECT_EQ(run_value(run, "failure_class"), "oom");
  EXPECT_EQ(run_value(run, "failure_detail"), "Used 20G of 16G hbm");
  EXPECT_EQ(run_value(run, "waiting_reason"), "waiting_for_capacity: 2 slices");

  // A class alone keeps the detail; no reason clears it.
  db_->transact([&](db::Transaction& tx) {
    record_run_failure(tx, run, "config");
    set_waiting_reason(tx, run, std::nullopt);
  });
  EXPECT_EQ(run_value(run, "failure_class"), "config");
  EXPECT_EQ(run_value(run, "failure_detail"), "Used 20G of 16G hbm");
  EXPECT_TRUE(is_null("SELECT waiting_reason FROM runs WHERE id = $1", {run}));
}

TEST_F(RunWrites, AQueuedRunAndItsCompileCheckEnterTheQueueWithTheirFirstEvent) {
  db_->exec_alone(
      "INSERT INTO users (id, username, role) VALUES ('usr_q', 'queue-owner', 'member')");
  db_->exec_alone(
      "INSERT INTO clusters (id, name, accelerator, num_slices, capacity) VALUES ('cls_q', "
      "'queue-cluster', 'v5p-8', 1, 'on-demand')");
  NewQueuedRun run{.id = "run_q1",
                   .name = "queued",
                   .owner_id = "usr_q",
                   .cluster_id = "cls_q",
                   .dataset_id = std::nullopt,
                   .model = "llama2-7b",
                   .workload = "maxtext",
                   .spec = R"({"name": "queued"})",
                   .plan = R"({"ok": false})",
                   .forced = true,
                   .priority = "high",
                   .tags = {"a", "b c"},
                   .code_bundle = std::nullopt,
                   .skipped_checks = {"hbm", "data"},
                   .compile_check_for = std::nullopt,
                   .cause = "submitted despite plan errors"};
  db_->transact([&](db::Transaction& tx) { create_queued_run(tx, run); });
  EXPECT_EQ(run_value("run_q1", "state"), "queued");
  EXPECT_EQ(run_value("run_q1", "forced"), "true");
  EXPECT_EQ(run_value("run_q1", "priority"), "high");
  EXPECT_EQ(run_value("run_q1", "tags"), "{a,\"b c\"}");
  EXPECT_EQ(run_value("run_q1", "skipped_checks"), "{hbm,data}");
  EXPECT_EQ(run_value("run_q1", "plan"), R"({"ok": false})");
  EXPECT_EQ(events("run_q1"), "->queued:submitted despite plan errors");

  NewQueuedRun check = run;
  check.id = "run_q2";
  check.forced = false;
  check.tags = {"compile-check"};
  check.skipped_checks = {};
  check.compile_check_for = "run_q1";
  check.cause = "compile check of run run_q1";
  db_->transact([&](db::Transaction& tx) {
    create_queued_run(tx, check);
    record_preflight_pending(tx, "run_q1", "run_q2");
  });
  EXPECT_EQ(run_value("run_q2", "compile_check_for"), "run_q1");
  EXPECT_EQ(run_value("run_q2", "skipped_checks"), "{}");
  EXPECT_EQ(run_value("run_q1", "preflight_run_id"), "run_q2");
  EXPECT_EQ(run_value("run_q1", "preflight_state"), "pending");
  EXPECT_EQ(run_value("run_q1", "waiting_reason"), "waiting for its compile check (run run_q2)");
}

TEST_F(RunWrites, APlacementServesTheGrowRequest) {
  const std::string run = add_run("running");
  db_->transact([&](db::Transaction& tx) { request_grow(tx, run); });
  EXPECT_EQ(run_value(run, "grow_requested"), "true");
  db_->transact([&](db::Transaction& tx) { record_run_placed(tx, run, 3, std::nullopt, 50); });
  EXPECT_EQ(run_value(run, "grow_requested"), "false");
  EXPECT_EQ(run_value(run, "current_slices"), "3");
  EXPECT_EQ(run_value(run, "resumed_from_step"), "50");
  // No checkpoint this time: the run keeps the one it resumed from.
  db_->transact([&](db::Transaction& tx) {
    record_run_placed(tx, run, 2, std::string("submitting to slurm"), std::nullopt);
  });
  EXPECT_EQ(run_value(run, "resumed_from_step"), "50");
  EXPECT_EQ(run_value(run, "waiting_reason"), "submitting to slurm");
}

TEST_F(RunWrites, ACompileCheckDecisionSettlesTheRunsWait) {
  const std::string refused = add_run("queued");
  db_->exec_alone(
      "UPDATE runs SET preflight_state = 'pending', plan = '{\"ok\": true}', waiting_reason = "
      "'compile check' WHERE id = $1",
      {refused});
  db_->transact([&](db::Transaction& tx) {
    record_preflight_decision(tx, refused, "failed", std::string(R"({"ok": false})"),
                              std::string("oom"), true);
  });
  EXPECT_EQ(run_value(refused, "preflight_state"), "failed");
  EXPECT_EQ(run_value(refused, "plan"), R"({"ok": false})");
  EXPECT_EQ(run_value(refused, "failure_class"), "oom");
  EXPECT_TRUE(is_null("SELECT waiting_reason FROM runs WHERE id = $1", {refused}));

  // Cancelled while its check ran: the check is marked failed, nothing else changes.
  const std::string cancelled = add_run("cancelled");
  db_->exec_alone(
      "UPDATE runs SET preflight_state = 'pending', plan = '{\"ok\": true}', waiting_reason = "
      "'compile check' WHERE id = $1",
      {cancelled});
  db_->transact([&](db::Transaction& tx) {
    record_preflight_decision(tx, cancelled, "failed", std::nullopt, std::nullopt, false);
  });
  EXPECT_EQ(run_value(cancelled, "preflight_state"), "failed");
  EXPECT_EQ(run_value(cancelled, "plan"), R"({"ok": true})");
  EXPECT_TRUE(is_null("SELECT failure_class FROM runs WHERE id = $1", {cancelled}));
  EXPECT_EQ(run_value(cancelled, "waiting_reason"), "compile check");
}

TEST_F(RunWrites, AnImportedRunIsWrittenFinishedWithOneEvent) {
  ImportedRun r;
  r.id = "run_imported";
  r.name = "from-a-log";
  r.model = "llama3-8b";
  r.spec = R"({"name": "from-a-log"})";
  r.state = "failed";
  r.failure_class = "oom";
  r.last_step = 9;
  r.accelerator = "v5p-8";
  r.num_slices = 2;
  r.log_facts = "{}";
  r.cause = "imported from a log of 3 lines";
  r.owner_id = value(
      "INSERT INTO users (id, username, role) VALUES ('u1', 'ann', 'member') "
      "RETURNING id");
  db_->transact([&](db::Transaction& tx) { record_imported_run(tx, r); });
  EXPECT_EQ(run_value(r.id, "state"), "failed");
  EXPECT_EQ(run_value(r.id, "imported"), "true");
  EXPECT_EQ(run_value(r.id, "current_slices"), "2");
  EXPECT_EQ(run_value(r.id, "last_step"), "9");
  EXPECT_FALSE(is_null("SELECT finished_at FROM runs WHERE id = $1", {r.id}));
  EXPECT_EQ(events(r.id), "->failed:imported from a log of 3 lines");

  // A run is imported finished, or not at all.
  r.id = "run_imported_running";
  r.state = "running";
  EXPECT_THROW(db_->transact([&](db::Transaction& tx) { record_imported_run(tx, r); }),
               IllegalTransition);
  EXPECT_EQ(value("SELECT count(*) FROM runs WHERE id = $1", {r.id}), "0");
}

}  // namespace
}  // namespace podium::sched
