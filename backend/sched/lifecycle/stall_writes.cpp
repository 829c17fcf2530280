#include "backend/sched/lifecycle/stall_writes.h"

#include "backend/sched/lifecycle/run_writes.h"

namespace podium::sched {

bool record_attempt_stall(db::Transaction& tx, const std::string& attempt_id,
                          const std::string& cause, const std::string& detail_json) {
  auto a = tx.exec(
      "UPDATE attempts a SET stall = $2::jsonb FROM runs r WHERE a.id = $1 AND r.id = a.run_id "
      "AND a.stall IS NULL AND a.ending_cause IS NULL AND a.finished_at IS NULL "
      "RETURNING a.run_id, r.state AS run_state",
      {attempt_id, detail_json});
  if (a.empty()) return false;
  const std::string run_id = a.at(0, "run_id");
  tx.exec(
      "INSERT INTO run_events (run_id, from_state, to_state, cause, kind, detail) "
      "VALUES ($1, $2, $2, $3, 'stalled', $4::jsonb)",
      {run_id, a.at(0, "run_state"), cause, detail_json});
  tx.exec("UPDATE runs SET updated_at = now() WHERE id = $1", {run_id});
  // Live followers and the dashboard see the flag; notifications read the event.
  tx.exec("SELECT pg_notify('podium_logs', $1)", {run_id});
  notify_runs(tx, run_id);
  return true;
}

bool clear_attempt_stall(db::Transaction& tx, const std::string& attempt_id,
                         const std::string& note) {
  auto a = tx.exec(
      "UPDATE attempts a SET stall = NULL FROM runs r WHERE a.id = $1 AND r.id = a.run_id AND "
      "a.stall IS NOT NULL RETURNING a.run_id, r.state AS run_state",
      {attempt_id});
  if (a.empty()) return false;
  const std::string run_id = a.at(0, "run_id");
  record_run_note(tx, run_id, a.at(0, "run_state"), note);
  tx.exec("UPDATE runs SET updated_at = now() WHERE id = $1", {run_id});
  notify_runs(tx, run_id);
  return true;
}

int count_run_stalls(db::Transaction& tx, const std::string& run_id) {
  auto r = tx.exec("SELECT count(*) AS n FROM run_events WHERE run_id = $1 AND kind = 'stalled'",
                   {run_id});
  return static_cast<int>(r.int64(0, "n"));
}

}  // namespace podium::sched
