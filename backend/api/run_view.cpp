#include "backend/api/run_view.h"

#include "backend/api/attempt_environment.h"
#include "backend/api/sql_util.h"
#include "backend/common/problem.h"

namespace podium::api {

std::string run_select() {
  return "SELECT r.id, r.seq, r.name, r.owner_id, u.username AS owner, r.cluster_id, c.name AS "
         "cluster, "
         "r.dataset_id, d.name AS dataset, r.model, r.workload, r.spec::text AS spec, r.plan::text "
         "AS plan, r.forced, array_to_json(r.skipped_checks)::text AS skipped_checks, "
         "r.state, r.failure_class, r.failure_detail, r.restarts, r.recoveries, r.last_step, "
         "r.resumed_from_step, "
         "r.priority, "
         "array_to_json(r.tags)::text AS tags, r.project, r.notes, r.imported, "
         "COALESCE(r.accelerator, c.accelerator) "
         "AS accelerator, COALESCE(r.num_slices, c.num_slices) AS num_slices, "
         "r.current_slices, r.waiting_reason, r.preflight_state, r.preflight_run_id, "
         "r.compile_check_for, r.plan_check::text AS plan_check, "
         // The stall its live attempt is in (backend/sched/dispatch/stall_watch.h), if any.
         "(SELECT a.stall::text FROM attempts a WHERE a.run_id = r.id AND a.finished_at IS NULL "
         "AND a.stall IS NOT NULL ORDER BY a.number DESC LIMIT 1) AS stall, "
         // The latest attempt's environment: what it recorded and what its ranks reported.
         "(SELECT json_build_object('recorded', a.environment, 'ranks', (SELECT "
         "COALESCE(json_agg(ah.environment ORDER BY ah.rank), '[]') FROM attempt_hosts ah WHERE "
         "ah.attempt_id = a.id AND ah.environment IS NOT NULL))::text FROM attempts a WHERE "
         "a.run_id = r.id ORDER BY a.number DESC LIMIT 1) AS environment, " +
         rfc3339("r.created_at") + " AS created_at, " + rfc3339("r.started_at") +
         " AS started_at, " + rfc3339("r.finished_at") + " AS finished_at, " +
         rfc3339("r.updated_at") +
         " AS updated_at FROM runs r LEFT JOIN clusters c ON c.id = r.cluster_id LEFT JOIN users u "
         "ON "
         "u.id = r.owner_id "
         "LEFT JOIN datasets d ON d.id = r.dataset_id ";
}

namespace {

// What a run is flagged with: {"underperforming": {its figures}} once the plan-against-actual
// verdict (backend/api/plan_check.h) says so, {"stalled": {the stall's figures}} while its live
// attempt is stalled (backend/sched/stall_bound.h's detail); {} otherwise.
nlohmann::json run_flags(const db::Result& r, size_t i) {
  nlohmann::json flags = nlohmann::json::object();
  auto verdict = json_column(r, i, "plan_check");
  if (verdict && verdict->is_object() && verdict->value("verdict", "") == "underperforming") {
    nlohmann::json figures = *verdict;
    figures.erase("verdict");
    flags["underperforming"] = std::move(figures);
  }
  if (auto stall = json_column(r, i, "stall"); stall && stall->is_object())
    flags["stalled"] = std::move(*stall);
  return flags;
}

// The latest attempt's environment (attempt_environment.h); null before the first attempt.
nlohmann::json run_environment(const db::Result& r, size_t i) {
  auto latest = json_column(r, i, "environment");
  if (!latest || !latest->is_object()) return nullptr;
  std::vector<nlohmann::json> ranks;
  if (auto it = latest->find("ranks"); it != latest->end() && it->is_array())
    ranks.assign(it->begin(), it->end());
  return attempt_environment_json(latest->value("recorded", nlohmann::json(nullptr)), ranks);
}

}  // namespace

namespace {

// Every field of a run but its spec and plan (run_json and run_body add them).
nlohmann::json run_fields(const db::Result& r, size_t i) {
  return {
      {"id", r.at(i, "id")},
      {"name", r.at(i, "name")},
      {"owner_id", nullable_string(r, i, "owner_id")},
      {"owner", nullable_string(r, i, "owner")},
      {"cluster_id", nullable_string(r, i, "cluster_id")},
      {"cluster", nullable_string(r, i, "cluster")},
      {"accelerator", nullable_string(r, i, "accelerator")},
      {"num_slices", nullable_int(r, i, "num_slices")},
      {"current_slices", nullable_int(r, i, "current_slices")},
      {"waiting_reason", nullable_string(r, i, "waiting_reason")},
      {"preflight", r.is_null(i, "preflight_state")
                        ? nlohmann::json(nullptr)
                        : nlohmann::json{{"kind", "compile"},
                                         {"state", r.at(i, "preflight_state")},
                                         {"run_id", nullable_string(r, i, "preflight_run_id")}}},
      {"compile_check_for", nullable_string(r, i, "compile_check_for")},
      {"imported", r.boolean(i, "imported")},
      {"dataset_id", nullable_string(r, i, "dataset_id")},
      {"dataset", nullable_string(r, i, "dataset")},
      {"model", r.at(i, "model")},
      {"workload", r.at(i, "workload")},
      {"forced", r.boolean(i, "forced")},
      {"skipped_checks", json_column(r, i, "skipped_checks").value_or(nlohmann::json::array())},
      {"state", r.at(i, "state")},
      {"failure_class", nullable_string(r, i, "failure_class")},
      {"failure_detail", nullable_string(r, i, "failure_detail")},
      {"environment", run_environment(r, i)},
      {"restarts", r.int64(i, "restarts")},
      {"recoveries", r.int64(i, "recoveries")},
      {"last_step", nullable_int(r, i, "last_step")},
      {"resumed_from_step", nullable_int(r, i, "resumed_from_step")},
      {"priority", r.at(i, "priority")},
      {"tags", json_column(r, i, "tags").value_or(nlohmann::json::array())},
      {"project", nullable_string(r, i, "project")},
      {"notes", r.at(i, "notes")},
      {"flags", run_flags(r, i)},
      {"created_at", r.at(i, "created_at")},
      {"started_at", nullable_string(r, i, "started_at")},
      {"finished_at", nullable_string(r, i, "finished_at")},
      {"updated_at", r.at(i, "updated_at")}};
}

}  // namespace

nlohmann::json run_json(const db::Result& r, size_t i, bool with_plan) {
  nlohmann::json j = run_fields(r, i);
  j["spec"] = json_column(r, i, "spec").value_or(nlohmann::json::object());
  if (with_plan) j["plan"] = json_column(r, i, "plan").value_or(nlohmann::json(nullptr));
  return j;
}

std::string run_body(const db::Result& r, size_t i) {
  std::string out = run_fields(r, i).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out.pop_back();  // the object's closing brace: the spliced fields follow
  out += ",\"spec\":";
  out += r.is_null(i, "spec") ? std::string("{}") : r.at(i, "spec");
  out += ",\"plan\":";
  out += r.is_null(i, "plan") ? std::string("null") : r.at(i, "plan");
  out += '}';
  return out;
}

db::Result load_run(db::Transaction& tx, const std::string& id) {
  auto r = tx.exec(run_select() + "WHERE r.id = $1", {id});
  if (r.empty()) throw http::not_found("no run " + id);
  return r;
}

db::Result load_run(db::Database& db, const std::string& id) {
  auto r = db.exec_alone(run_select() + "WHERE r.id = $1", {id});
  if (r.empty()) throw http::not_found("no run " + id);
  return r;
}

}  // namespace podium::api
