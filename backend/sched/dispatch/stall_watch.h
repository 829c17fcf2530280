#pragma once
// Stall detection (issue 30): a running attempt that logs no new step within its bound
// (backend/sched/stall_bound.h) is stalled, though every process is alive and heartbeating (a
// hung collective, a multislice topology wait that never returns). One sweep, run by the
// dispatcher's loop every second on every replica:
//   1. read the running attempts (not ending) with their latest steps, on the database's clock;
//   2. for each one over its bound, under its row lock (another replica skips it), write the
//      stall through the lifecycle writer (backend/sched/lifecycle/stall_writes.h: the attempt's
//      `stall`, the run's 'stalled' event) and apply the run's on_stall:
//        alert    nothing more; a step logged later clears the stall (a timeline note);
//        restart  end_attempt(): the gang is stopped; when it has ended the attempt's failure
//        fail     class is `stalled` and the restart policy (backend/sched/restart_policy.h)
//                 recovers it from the latest checkpoint without spending the restart budget,
//                 or fails the run (on_stall fail, or the run's stalls.limit-th stall).
// Runs that compile-check another run (they log no steps) are not watched.

#include <memory>

#include <spdlog/logger.h>

#include "backend/db/database.h"
#include "backend/sched/dispatch/engine_settings.h"

namespace podium::sched {

// One sweep; returns how many attempts it changed (stalls recorded plus stalls cleared).
int watch_stalls_once(db::Database& db, const EngineSettings& settings,
                      const std::shared_ptr<spdlog::logger>& log);

// The ending cause stall_watch writes starts with this: finish_attempt_if_done tells a stalled
// attempt's teardown from any other by it.
inline constexpr const char* kStallCausePrefix = "stalled: ";

}  // namespace podium::sched
