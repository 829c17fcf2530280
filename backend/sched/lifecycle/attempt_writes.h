#pragma once
// The one writer of attempt rows (issue 29): every INSERT and UPDATE of `attempts` outside the
// external engines' job bookkeeping (engine_job_writes.h) is here, so an attempt's number, why it
// exists and every state it takes follow one rule, whoever creates or moves it. State changes go
// through the attempt state machine (backend/sched/run_state.h); one it does not allow throws
// IllegalTransition. Every function runs in the caller's transaction.
//
// An attempt's life as rows:
//   create_attempt (pending) -> mark_attempt_delivered (starting: a rank was handed out)
//   -> start_attempt_if_all_running (running) -> mark_attempt_ending (the first cause is kept)
//   -> finish_attempt (succeeded | failed | cancelled, with its classification).
// An imported attempt is written finished at once (record_imported_attempt).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/db/database.h"
#include "backend/sched/run_state.h"

namespace podium::sched {

std::string new_attempt_id();

// The run's next attempt: its id and number, why it exists, and the checkpoint it resumes from.
// The reason follows the previous attempt: its restart decision's action (restart, recovery), or
// "grow" when it was ended to widen an elastic run; the first attempt's is "first".
struct NextAttempt {
  std::string id;
  int number = 1;
  std::string reason = "first";
  std::optional<std::int64_t> resumed_from_step;
};
NextAttempt next_attempt(db::Transaction& tx, const std::string& run_id);

// Where a new attempt runs.
struct AttemptPlacement {
  std::vector<int> slices;  // the cluster's slice indexes it holds
  int world_size = 1;       // ranks
  std::string coordinator_address;
  int coordinator_port = 0;        // 0: chosen when its ranks joined (external engines)
  std::string executor = "agent";  // or the external engine's kind
};

// Writes the attempt (pending), records the run's placement (waiting for waiting_reason, or for
// nothing) and moves the run from run_state to starting with `cause`. The caller writes the
// attempt's rank rows after it.
void create_attempt(db::Transaction& tx, const std::string& run_id, const std::string& run_state,
                    const NextAttempt& next, const AttemptPlacement& placement,
                    const std::optional<std::string>& waiting_reason, const std::string& cause);

// An attempt imported from a log: attempt 1 of its run, finished when written.
struct ImportedAttempt {
  std::string id;
  std::string run_id;
  AttemptState state = AttemptState::succeeded;  // terminal
  std::optional<std::string> failure_class;
  nlohmann::json classification;
  int num_slices = 1;
  int world_size = 1;
  std::optional<std::int64_t> first_step;
  std::optional<std::int64_t> last_step;
};
void record_imported_attempt(db::Transaction& tx, const ImportedAttempt& attempt);

// A rank of a pending attempt was handed to its host: the attempt is starting (no change when it
// already is further on).
void mark_attempt_delivered(db::Transaction& tx, const std::string& attempt_id);

// Moves a starting attempt whose ranks all report running to running, and its run with it. Call
// it in a transaction that began after the rank's report committed, without the attempt's lock:
// the report that committed last then sees every other rank running.
bool start_attempt_if_all_running(db::Transaction& tx, const std::string& attempt_id);

// Starts tearing an attempt down: the first cause is kept, a user's cancel is remembered.
// Returns false when the attempt has already finished.
bool mark_attempt_ending(db::Transaction& tx, const std::string& attempt_id,
                         const std::string& cause, bool user_cancelled);

// A host reported a notice from its platform (preemption, maintenance): the first is kept.
void record_preemption_notice(db::Transaction& tx, const std::string& attempt_id,
                              const std::string& notice);

// The attempt resumed from a checkpoint (its log said so): the attempt and its run show it.
void record_resumed_from(db::Transaction& tx, const std::string& run_id,
                         const std::string& attempt_id, std::int64_t step);

// Its end: a terminal state from `from` (the state it was read in, under its lock), the
// classification of how it ended, the restart decision taken (null when none was) and the
// steps it completed.
struct AttemptEnd {
  AttemptState from = AttemptState::running;
  AttemptState to = AttemptState::failed;
  std::optional<std::string> failure_class;
  nlohmann::json classification;
  nlohmann::json restart_decision;  // null: none
  std::optional<std::string> first_step;
  std::optional<std::string> last_step;
};
void finish_attempt(db::Transaction& tx, const std::string& attempt_id, const AttemptEnd& end);

}  // namespace podium::sched
