#pragma once
// How attempts end and what their runs do next: the orchestration over the lifecycle writer
// (backend/sched/lifecycle/, which alone writes runs' and attempts' rows through the state
// machines of backend/sched/run_state.h). Every function runs inside the caller's transaction,
// so a transition, its event row and the NOTIFY that wakes agents commit together or not at all.
//
// How an attempt ends:
//   1. Something ends it: a rank exits nonzero, a host is lost, the user cancels, an elastic run
//      grows. end_attempt() records the cause once and asks every rank still running to stop.
//   2. Each rank reports its exit (or is declared lost when its worker goes silent).
//   3. When no rank is left, finish_attempt_if_done() classifies the failure from exit codes,
//      signals and log signatures, applies the restart policy, and moves the run on.

#include <chrono>
#include <optional>
#include <string>

#include "backend/db/database.h"
#include "backend/sched/dispatch/engine_settings.h"
#include "backend/sched/lifecycle/attempt_writes.h"
#include "backend/sched/lifecycle/run_writes.h"

namespace podium::sched {

// Starts tearing an attempt down (idempotent: the first cause is kept). Ranks never delivered are
// cancelled at once; the others get a cancel on their next long-poll.
void end_attempt(db::Transaction& tx, const std::string& attempt_id, const std::string& cause,
                 bool user_cancelled, const EngineSettings& settings);

// Finishes the attempt when every rank has ended; returns true when it did.
bool finish_attempt_if_done(db::Transaction& tx, const std::string& attempt_id,
                            const EngineSettings& settings);

// A worker's ranks that have not ended are lost (heartbeat deadline passed, or its agent
// restarted without them), except those in keep_attempts_json ([{"attempt_id","rank"}] the
// agent still supervises). With only_running_for, only ranks reported running for longer than
// that (a heartbeat that no longer lists them). Ends their attempts.
void mark_worker_ranks_lost(db::Transaction& tx, const std::string& worker_id,
                            const std::string& reason, const EngineSettings& settings,
                            const std::optional<std::string>& keep_attempts_json = std::nullopt,
                            std::optional<std::chrono::seconds> only_running_for = std::nullopt);

// A user's cancel: a run with nothing running is cancelled at once; otherwise every rank is
// stopped and the run is `cancelling` until they all ended.
enum class CancelOutcome { cancelled, cancelling, already_cancelling, finished, not_found };
CancelOutcome cancel_run(db::Transaction& tx, const std::string& run_id, const std::string& by,
                         const EngineSettings& settings);

// The attempt that is not finished yet, if any.
std::optional<std::string> live_attempt(db::Transaction& tx, const std::string& run_id);

// Wakes the agents' assignment long-polls: worker_ids is a text[] literal (pg_array_literal.h),
// one statement for a whole gang.
void notify_agents(db::Transaction& tx, const std::string& worker_ids);

}  // namespace podium::sched
