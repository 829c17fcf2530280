#include "backend/sched/lifecycle/attempt_writes.h"

#include "backend/common/pg_array_literal.h"
#include "backend/common/secrets.h"
#include "backend/sched/lifecycle/illegal_transition.h"
#include "backend/sched/lifecycle/run_writes.h"
#include "engine/core/text/json_text.h"

namespace podium::sched {

namespace {

using nlohmann::json;

db::Param optional_step(const std::optional<std::int64_t>& step) {
  return step ? db::Param(std::to_string(*step)) : db::Param();
}

// Every column an attempt can be created with: the one INSERT of attempts.
struct AttemptRow {
  std::string id;
  std::string run_id;
  int number = 1;
  AttemptState state = AttemptState::pending;
  std::string reason;
  int num_slices = 1;
  int world_size = 1;
  std::vector<int> slices;
  std::string coordinator_address;
  int coordinator_port = 0;
  std::optional<std::int64_t> resumed_from_step;
  std::string executor = "agent";
  std::optional<std::string> failure_class;
  json classification;  // null: not classified yet
  std::optional<std::int64_t> first_step;
  std::optional<std::int64_t> last_step;
};

void insert_attempt(db::Transaction& tx, const AttemptRow& a) {
  // Created pending, or (imported) finished at once: no other state is a beginning.
  const bool finished = is_terminal(a.state);
  if (!finished && a.state != AttemptState::pending)
    throw IllegalTransition("attempt", a.id, "creation", std::string(to_string(a.state)));
  tx.exec(
      "INSERT INTO attempts (id, run_id, number, state, reason, num_slices, world_size, slices, "
      "coordinator_address, coordinator_port, resumed_from_step, executor, failure_class, "
      "classification, first_step, last_step, running_at, ending_at, finished_at) VALUES ($1, "
      "$2, $3::int, $4, $5, $6::int, $7::int, "
      "ARRAY(SELECT jsonb_array_elements_text($8::jsonb)::int), $9, $10::int, $11::bigint, $12, "
      "$13, $14::jsonb, $15::bigint, $16::bigint, CASE WHEN $17::boolean THEN now() END, "
      "CASE WHEN $17::boolean THEN now() END, CASE WHEN $17::boolean THEN now() END)",
      {a.id, a.run_id, std::to_string(a.number), std::string(to_string(a.state)), a.reason,
       std::to_string(a.num_slices), std::to_string(a.world_size), core::json_text(json(a.slices)),
       a.coordinator_address, std::to_string(a.coordinator_port),
       optional_step(a.resumed_from_step), a.executor, a.failure_class,
       a.classification.is_null() ? db::Param() : db::Param(core::json_text(a.classification)),
       optional_step(a.first_step), optional_step(a.last_step), finished ? "true" : "false"});
}

// The states an attempt may move to `to` from, as a text[] literal.
std::string sources_of(AttemptState to) {
  PgArrayLiteral from;
  for (AttemptState s : all_attempt_states())
    if (can_transition(s, to)) from.text(to_string(s));
  return from.str();
}

}  // namespace

std::string new_attempt_id() {
  return "att_" + secrets::random_hex(8);
}

NextAttempt next_attempt(db::Transaction& tx, const std::string& run_id) {
  auto prev = tx.exec(
      "SELECT number, ending_cause, restart_decision->>'action' AS action FROM attempts "
      "WHERE run_id = $1 ORDER BY number DESC LIMIT 1",
      {run_id});
  NextAttempt next;
  next.id = new_attempt_id();
  if (prev.empty()) return next;
  next.number = static_cast<int>(prev.int64(0, "number")) + 1;
  const std::string action = prev.opt(0, "action").value_or("");
  const std::string cause = prev.opt(0, "ending_cause").value_or("");
  next.reason = action == "restart"           ? "restart"
                : action == "recover"         ? "recovery"
                : cause.rfind("grow", 0) == 0 ? "grow"
                                              : "restart";
  auto ck = tx.exec("SELECT max(step) AS step FROM checkpoints WHERE run_id = $1", {run_id});
  next.resumed_from_step = ck.opt_int64(0, "step");
  return next;
}

void create_attempt(db::Transaction& tx, const std::string& run_id, const std::string& run_state,
                    const NextAttempt& next, const AttemptPlacement& placement,
                    const std::optional<std::string>& waiting_reason, const std::string& cause) {
  AttemptRow row;
  row.id = next.id;
  row.run_id = run_id;
  row.number = next.number;
  row.reason = next.reason;
  row.num_slices = static_cast<int>(placement.slices.size());
  row.world_size = placement.world_size;
  row.slices = placement.slices;
  row.coordinator_address = placement.coordinator_address;
  row.coordinator_port = placement.coordinator_port;
  row.resumed_from_step = next.resumed_from_step;
  row.executor = placement.executor;
  insert_attempt(tx, row);
  record_run_placed(tx, run_id, row.num_slices, waiting_reason, next.resumed_from_step);
  transition_run(tx, run_id, run_state, "starting", cause);
}

void record_imported_attempt(db::Transaction& tx, const ImportedAttempt& attempt) {
  if (!is_terminal(attempt.state))
    throw IllegalTransition("attempt", attempt.id, "import", std::string(to_string(attempt.state)));
  AttemptRow row;
  row.id = attempt.id;
  row.run_id = attempt.run_id;
  row.state = attempt.state;
  row.reason = "import";
  row.num_slices = attempt.num_slices;
  row.world_size = attempt.world_size;
  for (int s = 0; s < attempt.num_slices; ++s) row.slices.push_back(s);
  row.failure_class = attempt.failure_class;
  row.classification = attempt.classification;
  row.first_step = attempt.first_step;
  row.last_step = attempt.last_step;
  insert_attempt(tx, row);
}

void mark_attempt_delivered(db::Transaction& tx, const std::string& attempt_id) {
  tx.exec("UPDATE attempts SET state = $2 WHERE id = $1 AND state = ANY($3::text[])",
          {attempt_id, std::string(to_string(AttemptState::starting)),
           sources_of(AttemptState::starting)});
}

bool start_attempt_if_all_running(db::Transaction& tx, const std::string& attempt_id) {
  // Two last reports may both find no rank waiting; the second's UPDATE waits for the first's
  // row lock, then re-checks the state on the moved row and matches nothing.
  auto moved = tx.exec(
      "UPDATE attempts a SET state = $2, running_at = now() WHERE a.id = $1 AND a.state = "
      "ANY($3::text[]) AND a.ending_cause IS NULL AND a.finished_at IS NULL AND "
      "EXISTS (SELECT 1 FROM attempt_hosts ah WHERE ah.attempt_id = a.id AND ah.state = "
      "'running') AND NOT EXISTS (SELECT 1 FROM attempt_hosts ah WHERE ah.attempt_id = a.id AND "
      "ah.state IN ('pending', 'delivered')) RETURNING a.run_id, a.number",
      {attempt_id, std::string(to_string(AttemptState::running)),
       sources_of(AttemptState::running)});
  if (moved.empty()) return false;
  transition_run(tx, moved.at(0, "run_id"), "starting", "running",
                 "every rank of attempt " + moved.at(0, "number") + " is running");
  return true;
}

bool mark_attempt_ending(db::Transaction& tx, const std::string& attempt_id,
                         const std::string& cause, bool user_cancelled) {
  return !tx.exec(
                "UPDATE attempts SET ending_cause = COALESCE(ending_cause, $2), "
                "ending_at = COALESCE(ending_at, now()), user_cancelled = user_cancelled OR "
                "$3::boolean WHERE id = $1 AND finished_at IS NULL RETURNING id",
                {attempt_id, cause, user_cancelled ? "true" : "false"})
              .empty();
}

void record_preemption_notice(db::Transaction& tx, const std::string& attempt_id,
                              const std::string& notice) {
  tx.exec("UPDATE attempts SET preemption_notice = COALESCE(preemption_notice, $2) WHERE id = $1",
          {attempt_id, notice});
}

void record_resumed_from(db::Transaction& tx, const std::string& run_id,
                         const std::string& attempt_id, std::int64_t step) {
  tx.exec("UPDATE attempts SET resumed_from_step = $2::bigint WHERE id = $1",
          {attempt_id, std::to_string(step)});
  tx.exec("UPDATE runs SET resumed_from_step = $2::bigint WHERE id = $1",
          {run_id, std::to_string(step)});
}

void finish_attempt(db::Transaction& tx, const std::string& attempt_id, const AttemptEnd& end) {
  const std::string from(to_string(end.from));
  const std::string to(to_string(end.to));
  if (!is_terminal(end.to) || !can_transition(end.from, end.to))
    throw IllegalTransition("attempt", attempt_id, from, to);
  auto r = tx.exec(
      "UPDATE attempts SET state = $3, failure_class = $4, classification = $5::jsonb, "
      "restart_decision = $6::jsonb, finished_at = now(), first_step = $7::bigint, "
      "last_step = $8::bigint WHERE id = $1 AND state = $2 AND finished_at IS NULL",
      {attempt_id, from, to, end.failure_class, core::json_text(end.classification),
       end.restart_decision.is_null() ? db::Param()
                                      : db::Param(core::json_text(end.restart_decision)),
       end.first_step, end.last_step});
  // The caller read `from` under the attempt's lock: another state here is a bug of the caller.
  if (r.affected_rows() != 1) throw IllegalTransition("attempt", attempt_id, from + "?", to);
}

}  // namespace podium::sched
