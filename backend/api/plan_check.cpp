#include "backend/api/plan_check.h"

#include <spdlog/spdlog.h>

#include <exception>

#include "backend/api/sql_util.h"
#include "backend/sched/run_state.h"
#include "engine/core/text/json_text.h"

namespace podium::api {

namespace {

using nlohmann::json;

// The timeline's line for an underperforming verdict, from the stored figures.
std::string underperforming_cause(const json& verdict) {
  core::PlanCheck c;
  c.tflops_per_device = verdict.value("tflops_per_device", 0.0);
  c.expected_tflops_per_device = verdict.value("expected_tflops_per_device", 0.0);
  c.ratio = verdict.value("ratio", 0.0);
  c.threshold = verdict.value("threshold", 0.0);
  c.steady_steps = verdict.value("steady_steps", std::size_t{0});
  c.underperforming = true;
  return core::describe(c);
}

}  // namespace

SummaryOptions summary_options(const ServerConfig& config) {
  SummaryOptions o;
  o.plan_check.underperforming_ratio = config.underperforming_ratio;
  return o;
}

bool decide_plan_check(db::Transaction& tx, const std::string& run_id,
                       const SummaryOptions& options) {
  RunFacts facts = load_run_facts(tx, run_id, false);  // 404 when deleted meanwhile
  if (!facts.plan_check.is_null()) return false;       // decided already
  const bool finished = sched::is_terminal_run_state(facts.state);
  // A live run with nothing to compare with (a command on CPU, no model) cannot be decided
  // before it ends: reading its metrics on every sweep would only cost (each sweep reread every
  // such run's whole history, 2.5 M rows a minute in the ingest benchmark).
  if (!finished && !plan_expectation(facts)) return false;
  load_run_metrics(tx, facts);
  const json summary = summarize(facts, options);
  json verdict = summary.value("plan_check", json(nullptr));
  if (verdict.is_object()) {
    verdict["at_step"] = summary.value("last_step", json(nullptr));
    verdict.erase("decided_at");  // set from the database's clock below
  } else if (finished) {
    verdict = {{"verdict", "none"}};
  } else {
    return false;  // live and not steady yet: the next sweep looks again
  }
  static const std::string update =
      "UPDATE runs SET plan_check = $2::jsonb || jsonb_build_object('decided_at', " +
      rfc3339("now()") +
      ") WHERE id = $1 AND plan_check IS NULL RETURNING plan_check::text AS plan_check, state";
  auto written = tx.exec(update, {run_id, core::json_text(verdict)});
  if (written.affected_rows() != 1) return false;  // another replica decided first
  if (verdict.value("verdict", "") == "underperforming") {
    const json stored = json::parse(written.at(0, "plan_check"));
    tx.exec(
        "INSERT INTO run_events (run_id, from_state, to_state, cause, kind, detail) "
        "VALUES ($1, $2, $2, $3, 'underperforming', $4::jsonb)",
        {run_id, written.at(0, "state"), underperforming_cause(stored), core::json_text(stored)});
  }
  return true;
}

int decide_plan_checks(db::Database& db, int max_runs, const SummaryOptions& options) {
  // Undecided runs that have something to decide on: finished ones (a verdict or "none") and
  // live ones with at least one step.
  auto due = db.transact(
      [&](db::Transaction& tx) {
        return tx.exec(
            "SELECT id FROM runs WHERE plan_check IS NULL AND (state IN ('succeeded', 'failed', "
            "'cancelled') OR (state IN ('running', 'recovering', 'cancelling') AND last_step IS "
            "NOT NULL)) ORDER BY seq DESC LIMIT $1::int",
            {std::to_string(max_runs)});
      },
      db::TxMode::read_only);
  int decided = 0;
  for (size_t i = 0; i < due.size(); ++i) {
    const std::string id = due.at(i, "id");
    try {
      if (db.transact([&](db::Transaction& tx) { return decide_plan_check(tx, id, options); }))
        ++decided;
    } catch (const std::exception& e) {
      // Deleted since it was listed, or not summarizable: the others go on.
      spdlog::debug("plan check of {} not decided: {}", id, e.what());
    }
  }
  return decided;
}

}  // namespace podium::api
