#include "backend/sched/dispatch/worker_notices.h"

#include "backend/sched/dispatch/attempt_lifecycle.h"

namespace podium::sched {

bool record_worker_notice(db::Transaction& tx, const std::string& worker_id,
                          const std::optional<std::string>& notice,
                          const EngineSettings& settings) {
  auto w = tx.exec(
      "UPDATE workers SET notice = $2, notice_at = CASE WHEN $2::text IS NULL THEN NULL ELSE "
      "now() END WHERE id = $1 AND notice IS DISTINCT FROM $2::text RETURNING slice, host",
      {worker_id, notice ? db::Param(*notice) : db::Param()});
  if (w.empty()) return false;
  if (!notice) {
    notify_runs(tx, "*");  // capacity is back: the scheduler looks again
    return true;
  }
  const std::string host = w.at(0, "slice") + "/" + w.at(0, "host");
  auto live = tx.exec(
      "SELECT DISTINCT a.id, a.run_id, r.state AS run_state FROM attempt_hosts ah "
      "JOIN attempts a ON a.id = ah.attempt_id JOIN runs r ON r.id = a.run_id "
      "WHERE ah.worker_id = $1 AND ah.ended_at IS NULL AND a.finished_at IS NULL ORDER BY a.id",
      {worker_id});
  for (size_t i = 0; i < live.size(); ++i) {
    const std::string attempt_id = live.at(i, "id");
    record_preemption_notice(tx, attempt_id, *notice);
    record_run_note(tx, live.at(i, "run_id"), live.at(i, "run_state"),
                    "host " + host + " reported a notice from its platform (" + *notice +
                        "): stopping the gang");
    end_attempt(tx, attempt_id, "host " + host + " notice: " + *notice, false, settings);
  }
  return true;
}

}  // namespace podium::sched
