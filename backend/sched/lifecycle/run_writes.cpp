#include "backend/sched/lifecycle/run_writes.h"

#include <nlohmann/json.hpp>

#include "backend/sched/lifecycle/illegal_transition.h"
#include "backend/sched/run_state.h"

namespace podium::sched {

namespace {

db::Param run_step_param(const std::optional<std::int64_t>& step) {
  return step ? db::Param(std::to_string(*step)) : db::Param();
}

}  // namespace

void notify_runs(db::Transaction& tx, const std::string& run_id) {
  tx.exec("SELECT pg_notify('podium_runs', $1)", {run_id});
}

bool transition_run(db::Transaction& tx, const std::string& run_id, const std::string& from,
                    const std::string& to, const std::string& cause) {
  auto f = parse_run_state(from);
  auto t = parse_run_state(to);
  if (!f || !t || !can_transition(*f, *t)) return false;
  auto r = tx.exec(
      "UPDATE runs SET state = $3, updated_at = now(), "
      "started_at = CASE WHEN $3 = 'running' THEN COALESCE(started_at, now()) ELSE started_at END, "
      "finished_at = CASE WHEN $3 IN ('succeeded', 'failed', 'cancelled') THEN now() "
      "ELSE finished_at END WHERE id = $1 AND state = $2",
      {run_id, from, to});
  if (r.affected_rows() != 1) return false;
  tx.exec("INSERT INTO run_events (run_id, from_state, to_state, cause) VALUES ($1, $2, $3, $4)",
          {run_id, from, to, cause});
  tx.exec("SELECT pg_notify('podium_logs', $1)", {run_id});  // live followers show the state
  notify_runs(tx, run_id);
  return true;
}

void record_run_note(db::Transaction& tx, const std::string& run_id, const std::string& state,
                     const std::string& note) {
  tx.exec("INSERT INTO run_events (run_id, from_state, to_state, cause) VALUES ($1, $2, $2, $3)",
          {run_id, state, note});
}

void count_restart(db::Transaction& tx, const std::string& run_id) {
  tx.exec("UPDATE runs SET restarts = restarts + 1 WHERE id = $1", {run_id});
}

void count_recovery(db::Transaction& tx, const std::string& run_id) {
  tx.exec("UPDATE runs SET recoveries = recoveries + 1 WHERE id = $1", {run_id});
}

void record_run_failure(db::Transaction& tx, const std::string& run_id,
                        const std::string& failure_class,
                        const std::optional<std::string>& detail) {
  if (detail)
    tx.exec("UPDATE runs SET failure_class = $2, failure_detail = $3 WHERE id = $1",
            {run_id, failure_class, *detail});
  else
    tx.exec("UPDATE runs SET failure_class = $2 WHERE id = $1", {run_id, failure_class});
}

void set_waiting_reason(db::Transaction& tx, const std::string& run_id,
                        const std::optional<std::string>& reason) {
  tx.exec(
      "UPDATE runs SET waiting_reason = $2 WHERE id = $1 AND waiting_reason IS DISTINCT FROM "
      "$2::text",
      {run_id, reason ? db::Param(*reason) : db::Param()});
}

void request_grow(db::Transaction& tx, const std::string& run_id) {
  tx.exec("UPDATE runs SET grow_requested = true WHERE id = $1", {run_id});
}

void record_run_placed(db::Transaction& tx, const std::string& run_id, int num_slices,
                       const std::optional<std::string>& waiting_reason,
                       const std::optional<std::int64_t>& resumed_from_step) {
  tx.exec(
      "UPDATE runs SET current_slices = $2::int, grow_requested = false, waiting_reason = $3, "
      "resumed_from_step = COALESCE($4::bigint, resumed_from_step) WHERE id = $1",
      {run_id, std::to_string(num_slices),
       waiting_reason ? db::Param(*waiting_reason) : db::Param(),
       run_step_param(resumed_from_step)});
}

void record_preflight_decision(db::Transaction& tx, const std::string& run_id,
                               const std::string& preflight_state,
                               const std::optional<std::string>& plan_json,
                               const std::optional<std::string>& failure_class, bool settled) {
  tx.exec(
      "UPDATE runs SET preflight_state = $2, plan = COALESCE($3::jsonb, plan), failure_class = "
      "COALESCE($4, failure_class), waiting_reason = CASE WHEN $5::boolean THEN NULL ELSE "
      "waiting_reason END WHERE id = $1",
      {run_id, preflight_state, plan_json, failure_class, settled ? "true" : "false"});
}

void create_queued_run(db::Transaction& tx, const NewQueuedRun& run) {
  tx.exec(
      "INSERT INTO runs (id, name, owner_id, cluster_id, dataset_id, model, workload, spec, plan, "
      "forced, state, priority, tags, code_bundle, skipped_checks, compile_check_for) VALUES ($1, "
      "$2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, 'queued', $11, "
      "ARRAY(SELECT jsonb_array_elements_text($12::jsonb)), $13, "
      "ARRAY(SELECT jsonb_array_elements_text($14::jsonb)), $15)",
      {run.id, run.name, run.owner_id, run.cluster_id,
       run.dataset_id ? db::Param(*run.dataset_id) : db::Param(), run.model, run.workload, run.spec,
       run.plan, run.forced ? "true" : "false", run.priority, nlohmann::json(run.tags).dump(),
       run.code_bundle ? db::Param(*run.code_bundle) : db::Param(),
       nlohmann::json(run.skipped_checks).dump(),
       run.compile_check_for ? db::Param(*run.compile_check_for) : db::Param()});
  tx.exec(
      "INSERT INTO run_events (run_id, from_state, to_state, cause) VALUES ($1, NULL, 'queued', "
      "$2)",
      {run.id, run.cause});
  notify_runs(tx, run.id);
}

void record_preflight_pending(db::Transaction& tx, const std::string& run_id,
                              const std::string& check_run_id) {
  tx.exec(
      "UPDATE runs SET preflight_run_id = $2, preflight_state = 'pending', waiting_reason = $3 "
      "WHERE id = $1",
      {run_id, check_run_id, "waiting for its compile check (run " + check_run_id + ")"});
}

void record_imported_run(db::Transaction& tx, const ImportedRun& run) {
  const auto state = parse_run_state(run.state);
  if (!state || !is_terminal(*state)) throw IllegalTransition("run", run.id, "import", run.state);
  tx.exec(
      "INSERT INTO runs (id, name, owner_id, cluster_id, model, workload, spec, state, "
      "failure_class, last_step, imported, accelerator, num_slices, current_slices, log_facts, "
      "started_at, finished_at) VALUES ($1, $2, $3, NULL, $4, 'maxtext', $5::jsonb, $6, $7, "
      "$8::bigint, true, $9, $10::int, $10::int, $11::jsonb, now(), now())",
      {run.id, run.name, run.owner_id, run.model, run.spec, run.state,
       run.failure_class ? db::Param(*run.failure_class) : db::Param(),
       run_step_param(run.last_step), run.accelerator, std::to_string(run.num_slices),
       run.log_facts});
  tx.exec("INSERT INTO run_events (run_id, from_state, to_state, cause) VALUES ($1, NULL, $2, $3)",
          {run.id, run.state, run.cause});
}

}  // namespace podium::sched
