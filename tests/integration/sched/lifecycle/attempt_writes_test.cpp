// The lifecycle writer's attempt rows (backend/sched/lifecycle/attempt_writes.h): one insert for
// every creator, the next attempt's number and reason (grow included) for every caller, and
// state changes only along the attempt state machine.
#include "backend/sched/lifecycle/attempt_writes.h"

#include <gtest/gtest.h>

#include "backend/sched/lifecycle/illegal_transition.h"
#include "tests/integration/sched/lifecycle/lifecycle_database.h"

namespace podium::sched {
namespace {

using nlohmann::json;

class AttemptWrites : public testing::LifecycleDatabase {
 protected:
  std::string attempt_value(const std::string& id, const std::string& column) {
    return value("SELECT " + column + "::text AS v FROM attempts WHERE id = $1", {id});
  }
  std::string run_value(const std::string& id, const std::string& column) {
    return value("SELECT " + column + "::text AS v FROM runs WHERE id = $1", {id});
  }
  // Ends an attempt as the restart policy would have recorded it.
  void end_with(const std::string& attempt_id, const std::string& cause,
                const std::optional<std::string>& action) {
    db_->exec_alone(
        "UPDATE attempts SET state = 'failed', ending_cause = $2, finished_at = now(), "
        "restart_decision = CASE WHEN $3::text IS NULL THEN NULL ELSE jsonb_build_object('action', "
        "$3::text) END WHERE id = $1",
        {attempt_id, cause, action});
  }
  NextAttempt next_of(const std::string& run_id) {
    return db_->transact([&](db::Transaction& tx) { return next_attempt(tx, run_id); });
  }
};

TEST_F(AttemptWrites, TheFirstAttemptIsPendingAndMovesItsRunToStarting) {
  const std::string run = add_run("queued");
  const NextAttempt next = next_of(run);
  EXPECT_EQ(next.number, 1);
  EXPECT_EQ(next.reason, "first");
  EXPECT_FALSE(next.resumed_from_step);
  EXPECT_EQ(next.id.rfind("att_", 0), 0u) << next.id;

  AttemptPlacement p;
  p.slices = {2, 5};
  p.world_size = 4;
  p.coordinator_address = "10.0.0.7";
  p.coordinator_port = 8476;
  db_->transact([&](db::Transaction& tx) {
    create_attempt(tx, run, "queued", next, p, std::nullopt, "attempt 1 (first) placed");
  });
  EXPECT_EQ(attempt_value(next.id, "state"), "pending");
  EXPECT_EQ(attempt_value(next.id, "reason"), "first");
  EXPECT_EQ(attempt_value(next.id, "number"), "1");
  EXPECT_EQ(attempt_value(next.id, "num_slices"), "2");
  EXPECT_EQ(attempt_value(next.id, "world_size"), "4");
  EXPECT_EQ(attempt_value(next.id, "slices"), "{2,5}");
  EXPECT_EQ(attempt_value(next.id, "coordinator_address"), "10.0.0.7");
  EXPECT_EQ(attempt_value(next.id, "coordinator_port"), "8476");
  EXPECT_EQ(attempt_value(next.id, "executor"), "agent");
  EXPECT_TRUE(is_null("SELECT finished_at FROM attempts WHERE id = $1", {next.id}));
  EXPECT_EQ(run_value(run, "state"), "starting");
  EXPECT_EQ(run_value(run, "current_slices"), "2");
  EXPECT_EQ(
      value("SELECT cause FROM run_events WHERE run_id = $1 AND to_state = 'starting'", {run}),
      "attempt 1 (first) placed");
}

TEST_F(AttemptWrites, AnExternalAttemptWaitsForItsEngineAndResumesFromTheLastCheckpoint) {
  const std::string run = add_run("recovering");
  end_with(add_attempt(run, 1, "running", {}), "rank 0 exited 1", "recover");
  db_->exec_alone(
      "INSERT INTO checkpoints (id, run_id, step, uri) VALUES ('ck1', $1, 100, 'gs://b/100'), "
      "('ck2', $1, 300, 'gs://b/300')",
      {run});
  const NextAttempt next = next_of(run);
  EXPECT_EQ(next.number, 2);
  EXPECT_EQ(next.reason, "recovery");
  EXPECT_EQ(next.resumed_from_step, 300);
  AttemptPlacement p;
  p.slices = {0};
  p.world_size = 2;
  p.executor = "slurm";
  db_->transact([&](db::Transaction& tx) {
    create_attempt(tx, run, "recovering", next, p, std::string("submitting to slurm"), "handed");
  });
  EXPECT_EQ(attempt_value(next.id, "executor"), "slurm");
  EXPECT_EQ(attempt_value(next.id, "coordinator_port"), "0");
  EXPECT_EQ(attempt_value(next.id, "resumed_from_step"), "300");
  EXPECT_EQ(run_value(run, "waiting_reason"), "submitting to slurm");
  EXPECT_EQ(run_value(run, "resumed_from_step"), "300");
  EXPECT_EQ(run_value(run, "state"), "starting");
}

TEST_F(AttemptWrites, TheNextAttemptsReasonFollowsHowThePreviousOneEnded) {
  struct Case {
    std::string cause;
    std::optional<std::string> action;
    std::string reason;
  };
  for (const Case& c : {Case{"rank 1 exited 1", "restart", "restart"},
                        Case{"host lost: rank 0", "recover", "recovery"},
                        Case{"grow: 1 -> 2 slices", std::nullopt, "grow"},
                        Case{"rank 0 exited 1", "fail", "restart"}}) {
    const std::string run = add_run("recovering");
    end_with(add_attempt(run, 1, "running", {}), c.cause, c.action);
    const NextAttempt next = next_of(run);
    EXPECT_EQ(next.number, 2) << c.cause;
    EXPECT_EQ(next.reason, c.reason) << c.cause;
  }
}

TEST_F(AttemptWrites, AnImportedAttemptIsWrittenFinished) {
  const std::string run = add_run("failed");
  ImportedAttempt a;
  a.id = new_attempt_id();
  a.run_id = run;
  a.state = AttemptState::failed;
  a.failure_class = "oom";
  a.classification = json{{"outcome", "failed"}};
  a.num_slices = 2;
  a.world_size = 8;
  a.first_step = 0;
  a.last_step = 41;
  db_->transact([&](db::Transaction& tx) { record_imported_attempt(tx, a); });
  EXPECT_EQ(attempt_value(a.id, "state"), "failed");
  EXPECT_EQ(attempt_value(a.id, "reason"), "import");
  EXPECT_EQ(attempt_value(a.id, "number"), "1");
  EXPECT_EQ(attempt_value(a.id, "slices"), "{0,1}");
  EXPECT_EQ(attempt_value(a.id, "failure_class"), "oom");
  EXPECT_EQ(attempt_value(a.id, "classification"), R"({"outcome": "failed"})");
  EXPECT_EQ(attempt_value(a.id, "last_step"), "41");
  for (const char* column : {"running_at", "ending_at", "finished_at"})
    EXPECT_FALSE(is_null(std::string("SELECT ") + column + " FROM attempts WHERE id = $1", {a.id}))
        << column;

  // An attempt is created pending or finished: an unfinished import is a bug, and writes nothing.
  ImportedAttempt running = a;
  running.id = new_attempt_id();
  running.state = AttemptState::running;
  EXPECT_THROW(db_->transact([&](db::Transaction& tx) { record_imported_attempt(tx, running); }),
               IllegalTransition);
  EXPECT_EQ(value("SELECT count(*) FROM attempts WHERE id = $1", {running.id}), "0");
}

TEST_F(AttemptWrites, DeliveryMovesOnlyAPendingAttemptToStarting) {
  const std::string run = add_run("starting");
  const std::string pending = add_attempt(run, 1, "pending", {"pending"});
  db_->transact([&](db::Transaction& tx) { mark_attempt_delivered(tx, pending); });
  EXPECT_EQ(attempt_value(pending, "state"), "starting");
  const std::string running = add_attempt(add_run("running"), 1, "running", {"running"});
  db_->transact([&](db::Transaction& tx) { mark_attempt_delivered(tx, running); });
  EXPECT_EQ(attempt_value(running, "state"), "running");
}

TEST_F(AttemptWrites, AnAttemptRunsWhenEveryRankRuns) {
  const std::string run = add_run("starting");
  const std::string waiting = add_attempt(run, 1, "starting", {"running", "delivered"});
  EXPECT_FALSE(db_->transact(
      [&](db::Transaction& tx) { return start_attempt_if_all_running(tx, waiting); }));
  EXPECT_EQ(attempt_value(waiting, "state"), "starting");

  db_->exec_alone("UPDATE attempt_hosts SET state = 'running' WHERE attempt_id = $1", {waiting});
  EXPECT_TRUE(db_->transact(
      [&](db::Transaction& tx) { return start_attempt_if_all_running(tx, waiting); }));
  EXPECT_EQ(attempt_value(waiting, "state"), "running");
  EXPECT_FALSE(is_null("SELECT running_at FROM attempts WHERE id = $1", {waiting}));
  EXPECT_EQ(run_value(run, "state"), "running");
  // Already running: nothing moves twice.
  EXPECT_FALSE(db_->transact(
      [&](db::Transaction& tx) { return start_attempt_if_all_running(tx, waiting); }));
}

TEST_F(AttemptWrites, TheFirstEndingCauseIsKept) {
  const std::string id = add_attempt(add_run("running"), 1, "running", {"running"});
  EXPECT_TRUE(db_->transact(
      [&](db::Transaction& tx) { return mark_attempt_ending(tx, id, "rank 0 exited 1", false); }));
  EXPECT_TRUE(db_->transact(
      [&](db::Transaction& tx) { return mark_attempt_ending(tx, id, "cancelled by ann", true); }));
  EXPECT_EQ(attempt_value(id, "ending_cause"), "rank 0 exited 1");
  EXPECT_EQ(attempt_value(id, "user_cancelled"), "true");
  db_->exec_alone("UPDATE attempts SET finished_at = now() WHERE id = $1", {id});
  EXPECT_FALSE(db_->transact(
      [&](db::Transaction& tx) { return mark_attempt_ending(tx, id, "again", false); }));
}

TEST_F(AttemptWrites, AnAttemptFinishesOnlyAlongTheStateMachine) {
  const std::string run = add_run("running");
  const std::string id = add_attempt(run, 1, "pending", {"cancelled"});
  AttemptEnd end;
  end.from = AttemptState::pending;
  end.to = AttemptState::succeeded;  // a pending attempt never ran: it cannot have succeeded
  end.classification = json{{"outcome", "succeeded"}};
  EXPECT_THROW(db_->transact([&](db::Transaction& tx) { finish_attempt(tx, id, end); }),
               IllegalTransition);
  EXPECT_EQ(attempt_value(id, "state"), "pending");
  EXPECT_TRUE(is_null("SELECT finished_at FROM attempts WHERE id = $1", {id}));

  // A caller that read another state than the row has is a bug too.
  end.from = AttemptState::running;
  end.to = AttemptState::failed;
  EXPECT_THROW(db_->transact([&](db::Transaction& tx) { finish_attempt(tx, id, end); }),
               IllegalTransition);

  end.from = AttemptState::pending;
  end.failure_class = "host_lost";
  end.classification = json{{"outcome", "failed"}};
  end.restart_decision = json{{"action", "recover"}};
  end.last_step = "12";
  db_->transact([&](db::Transaction& tx) { finish_attempt(tx, id, end); });
  EXPECT_EQ(attempt_value(id, "state"), "failed");
  EXPECT_EQ(attempt_value(id, "failure_class"), "host_lost");
  EXPECT_EQ(attempt_value(id, "restart_decision"), R"({"action": "recover"})");
  EXPECT_EQ(attempt_value(id, "last_step"), "12");
  EXPECT_TRUE(is_null("SELECT first_step FROM attempts WHERE id = $1", {id}));
  EXPECT_FALSE(is_null("SELECT finished_at FROM attempts WHERE id = $1", {id}));
  // Finished: never again.
  end.from = AttemptState::failed;
  end.to = AttemptState::cancelled;
  EXPECT_THROW(db_->transact([&](db::Transaction& tx) { finish_attempt(tx, id, end); }),
               IllegalTransition);
}

TEST_F(AttemptWrites, NoticesAndResumesAreRecordedOnTheAttemptAndItsRun) {
  const std::string run = add_run("running");
  const std::string id = add_attempt(run, 1, "running", {"running"});
  db_->transact([&](db::Transaction& tx) {
    record_preemption_notice(tx, id, "maintenance-event");
    record_preemption_notice(tx, id, "preempted");
    record_resumed_from(tx, run, id, 700);
  });
  EXPECT_EQ(attempt_value(id, "preemption_notice"), "maintenance-event");
  EXPECT_EQ(attempt_value(id, "resumed_from_step"), "700");
  EXPECT_EQ(run_value(run, "resumed_from_step"), "700");
}

}  // namespace
}  // namespace podium::sched
