#pragma once
// The lifecycle writes of stall detection (backend/sched/dispatch/stall_watch.h): a stall is a
// run event of kind 'stalled' (what notifications publish as run.stalled) with its figures, and
// the attempt's `stall` while it lasts (the run's "stalled" flag). Every function runs in the
// caller's transaction.

#include <optional>
#include <string>

#include "backend/db/database.h"

namespace podium::sched {

// The attempt stalled: its `stall` is set to detail_json and the run gets the event (kind
// 'stalled', `cause` the timeline's line, `detail` the figures) in its current state. Returns
// false when the attempt already has a stall or is ending or finished (nothing written).
bool record_attempt_stall(db::Transaction& tx, const std::string& attempt_id,
                          const std::string& cause, const std::string& detail_json);

// The attempt logged a step again (on_stall alert): its stall is over; the run's timeline says
// so with `note`. Returns false when it had no stall.
bool clear_attempt_stall(db::Transaction& tx, const std::string& attempt_id,
                         const std::string& note);

// How many times the run stalled (its 'stalled' events).
int count_run_stalls(db::Transaction& tx, const std::string& run_id);

}  // namespace podium::sched
