// Runs: submission (validated and planned), listing with filters, curation (run_curation.h),
// state changes, history.

#include "backend/api/api_context.h"
#include "backend/api/app.h"
#include "backend/api/checkpoint_lifecycle.h"
#include "backend/api/compile_check.h"
#include "backend/api/launch_policy_check.h"
#include "backend/api/resolve.h"
#include "backend/api/rfc3339_query.h"
#include "backend/api/route_table.h"
#include "backend/api/run_curation.h"
#include "backend/api/run_read_batch.h"
#include "backend/api/run_submission.h"
#include "backend/api/run_view.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"
#include "backend/sched/dispatch/attempt_lifecycle.h"
#include "backend/sched/lifecycle/run_writes.h"
#include "backend/sched/run_state.h"
#include "engine/core/spec/run_spec.h"

namespace podium::api {

namespace {

// Members manage only their own runs; admins manage all.
void require_owner(const http::RequestContext& rc, const db::Result& r) {
  if (rc.principal->is_admin()) return;
  if (r.at(0, "owner_id") != user_id(rc))
    throw http::forbidden("only the run's owner or an admin may change it");
}

http::Response list_runs(ApiContext& ctx, http::RequestContext& rc) {
  auto page = read_page(rc, ctx.cursor_key);
  const auto& q = rc.request;
  auto state = q.query_param("state");
  if (state && !sched::parse_run_state(*state))
    throw http::bad_request("unknown state '" + *state + "'", {{"state", "must be a run state"}});
  const auto since = query_rfc3339(rc, "since");  // created at or after
  const auto until = query_rfc3339(rc, "until");  // created before
  // Only the filters given become conditions: a prepared statement of "($n IS NULL OR ...)"
  // conditions gets a generic plan after five executions that cannot tell which are absent
  // (one row estimated for each), so it read and joined every run before sorting (75 ms for
  // 11,000 runs, growing with the table) where the plain list is a backward scan of the seq
  // index that stops after a page.
  std::string where = "WHERE TRUE ";
  std::vector<db::Param> params = {page.limit_param()};
  auto add = [&](const std::optional<std::string>& value, const std::string& condition) {
    if (!value) return;
    params.emplace_back(*value);
    const std::string n = "$" + std::to_string(params.size());
    std::string c = condition;
    for (auto at = c.find("$?"); at != std::string::npos; at = c.find("$?", at + n.size()))
      c.replace(at, 2, n);
    where += "AND (" + c + ") ";
  };
  auto text = [&](const char* k) -> std::optional<std::string> {
    if (auto v = q.query_param(k)) return std::string(*v);
    return std::nullopt;
  };
  if (page.after_seq) add(std::to_string(*page.after_seq), "r.seq < $?::bigint");
  add(text("state"), "r.state = $?");
  add(text("cluster"), "c.id = $? OR c.name = $?");
  add(text("model"), "r.model = $?");
  add(text("owner"), "u.username = $? OR r.owner_id = $?");
  add(text("tag"), "$? = ANY(r.tags)");
  add(text("q"), "strpos(lower(r.name), lower($?)) > 0");
  add(text("project"), "r.project = $?");
  add(text("dataset"), "d.id = $? OR d.name = $?");
  // An accelerator type ("v5p-128") or a whole family ("v5p").
  add(text("accelerator"),
      "COALESCE(r.accelerator, c.accelerator) = $? OR "
      "split_part(COALESCE(r.accelerator, c.accelerator), '-', 1) = $?");
  add(since, "r.created_at >= $?::timestamptz");
  add(until, "r.created_at < $?::timestamptz");
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        return tx.exec(run_select() + where + "ORDER BY r.seq DESC LIMIT $1", params);
      },
      db::TxMode::read_only);
  nlohmann::json items = nlohmann::json::array();
  std::vector<int64_t> seqs;
  for (size_t i = 0; i < r.size(); ++i) {
    items.push_back(run_json(r, i, false));
    seqs.push_back(r.int64(i, "seq"));
  }
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

// Preflight: the same planning as submission, nothing stored.
http::Response plan_run(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  auto plan =
      ctx.db.transact([&](db::Transaction& tx) { return prepare_submission(tx, body).plan; },
                      db::TxMode::read_only);
  return json_response(200, plan);
}

http::Response submit_run(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  const std::string id = new_id("run");
  auto r = ctx.db.transact([&](db::Transaction& tx) {
    auto s = prepare_submission(tx, body);  // 400 field errors, 422 unknown cluster/dataset
    enforce_launch_policy(tx, s.spec, s.cluster_id, *rc.principal);  // 403 when not allowed
    // 422 unless init_from names another run's finished checkpoint of the same model shape.
    if (s.spec_json.contains("init_from") && !s.spec_json["init_from"].is_null())
      s.spec_json["init_from"]["run"] = check_init_from(tx, s.spec_json);
    if (s.plan_blocked) {
      auto p = http::unprocessable(
          "the plan has errors; fix them, or skip their checks with \"skip_checks\" (the "
          "error's \"check\")");
      p.extra["plan"] = s.plan;
      throw p;
    }
    // Submitted despite errors: every one of them is in a skipped check.
    const bool forced = !s.plan_ok;
    nlohmann::json skipped_checks = nlohmann::json::array();
    for (const auto& [check, codes] : s.skipped) skipped_checks.push_back(check);
    std::vector<std::string> skipped;
    for (const auto& [check, codes] : s.skipped) skipped.push_back(check);
    sched::create_queued_run(
        tx, {.id = id,
             .name = s.spec.name,
             .owner_id = user_id(rc),
             .cluster_id = s.cluster_id,
             .dataset_id = s.dataset_id,
             .model = s.spec.model.value_or(""),
             .workload = core::to_string(s.spec.workload),
             .spec = s.spec_json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
             .plan = s.plan.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
             .forced = forced,
             .priority = s.spec.priority,
             .tags = s.spec.tags,
             .code_bundle = s.spec.code_bundle,
             .skipped_checks = skipped,
             .compile_check_for = std::nullopt,
             .cause = forced ? "submitted despite plan errors, skipping " + skipped_checks.dump()
                             : "submitted"});
    apply_spec_curation(tx, id, s.spec_json);  // "project", "notes"
    if (s.spec.preflight_compile) create_compile_check(ctx, tx, id, s, user_id(rc));
    audit(tx, rc, "create", "run", id,
          {{"name", s.spec.name}, {"forced", forced}, {"skipped_checks", skipped_checks}});
    // One audit row per skipped check, with the plan errors it let through.
    for (const auto& [check, codes] : s.skipped)
      audit(tx, rc, "skip_check", "run", id,
            {{"check", check}, {"errors", codes}, {"force", s.spec.force}});
    return load_run(tx, id);
  });
  return json_response(201, run_json(r, 0, true));
}

// GET /runs/{id} answered from its batch's rows (run_read_batch.h) once they are there. The
// wait holds no handler thread; rendering runs on one when the wait ends. Its answer (200, 404,
// 503) is what the access log and the metrics record (RecordedOnAnswer).
class BatchedRunRead final : public RecordedOnAnswer {
 public:
  BatchedRunRead(ApiContext& ctx, std::shared_ptr<RunReadBatcher::Read> read,
                 std::string request_id)
      : ctx_(ctx), read_(std::move(read)), request_id_(std::move(request_id)) {}

  http::Wait wait() override {
    http::Wait w;
    w.keys = {std::string(RunReadBatcher::kChannel) + ":" + read_->key};
    // A batch's query gives up within the pool's wait and the statement timeout; the margin
    // covers the batch queued ahead of it.
    const auto& o = ctx_.db.options();
    w.timeout = 2 * (o.acquire_timeout + o.statement_timeout) + std::chrono::seconds(1);
    w.fired = [read = read_] { return read->done.load(std::memory_order_acquire); };
    return w;
  }

  std::optional<http::Response> resume(bool timed_out) override {
    if (!read_->done.load(std::memory_order_acquire)) {
      if (!timed_out) return std::nullopt;  // not this read's wake-up
      auto r =
          http::unavailable("the database did not answer in time; retry shortly").to_response();
      r.set_header("Retry-After", "1");
      return r;
    }
    if (read_->error) {
      try {
        std::rethrow_exception(read_->error);
      } catch (const db::DbError& e) {
        ctx_.metrics.count("podium_database_errors_total",
                           "Database errors seen by request handlers.");
        return from_db_error(ctx_, e, request_id_);
      }
    }
    if (read_->row < 0) return http::not_found("no run " + read_->id).to_response();
    return http::Response::json(200, run_body(*read_->rows, static_cast<size_t>(read_->row)));
  }

 private:
  ApiContext& ctx_;
  std::shared_ptr<RunReadBatcher::Read> read_;
  std::string request_id_;
};

http::Response get_run(ApiContext& ctx, http::RequestContext& rc) {
  const std::string& id = rc.param("id");
  if (!ctx.run_reads) return json_response(200, run_json(load_run(ctx.db, id), 0, true));
  http::Response res;
  res.deferred =
      std::make_shared<BatchedRunRead>(ctx, ctx.run_reads->submit(id), rc.request.request_id);
  return res;
}

http::Response request_cancel(ApiContext& ctx, http::RequestContext& rc) {
  auto r = ctx.db.transact([&](db::Transaction& tx) {
    auto cur =
        tx.exec("SELECT id, owner_id, state FROM runs WHERE id = $1 FOR UPDATE", {rc.param("id")});
    if (cur.empty()) throw http::not_found("no run " + rc.param("id"));
    require_owner(rc, cur);
    // Nothing running: cancelled at once. Otherwise every rank gets a cancel
    // (SIGTERM, SIGKILL after the grace) and the run is cancelling until they ended.
    auto outcome = sched::cancel_run(tx, rc.param("id"), rc.principal->display(), ctx.engine);
    if (outcome == sched::CancelOutcome::finished)
      throw http::conflict("the run is already " + cur.at(0, "state"));
    if (outcome != sched::CancelOutcome::already_cancelling)
      audit(tx, rc, "cancel", "run", rc.param("id"));
    return load_run(tx, rc.param("id"));
  });
  return json_response(200, run_json(r, 0, false));
}

http::Response delete_run(ApiContext& ctx, http::RequestContext& rc) {
  ctx.db.transact([&](db::Transaction& tx) {
    auto cur =
        tx.exec("SELECT id, owner_id, state FROM runs WHERE id = $1 FOR UPDATE", {rc.param("id")});
    if (cur.empty()) throw http::not_found("no run " + rc.param("id"));
    require_owner(rc, cur);
    if (!sched::is_terminal_run_state(cur.at(0, "state")))
      throw http::conflict("the run is " + cur.at(0, "state") +
                           "; cancel it and wait until it finished");
    tx.exec("DELETE FROM runs WHERE id = $1", {rc.param("id")});
    audit(tx, rc, "delete", "run", rc.param("id"));
  });
  return http::Response::empty(204);
}

http::Response list_run_events(ApiContext& ctx, http::RequestContext& rc) {
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        load_run(tx, rc.param("id"));
        return tx.exec("SELECT id, " + rfc3339("at") +
                           " AS at, from_state, to_state, cause, kind, "
                           "detail::text AS detail FROM run_events WHERE "
                           "run_id = $1 ORDER BY id",
                       {rc.param("id")});
      },
      db::TxMode::read_only);
  nlohmann::json items = nlohmann::json::array();
  for (size_t i = 0; i < r.size(); ++i)
    items.push_back({{"at", r.at(i, "at")},
                     {"from_state", nullable_string(r, i, "from_state")},
                     {"to_state", r.at(i, "to_state")},
                     {"cause", r.at(i, "cause")},
                     {"kind", r.at(i, "kind")},
                     {"detail", json_column(r, i, "detail").value_or(nullptr)}});
  return json_response(200, {{"items", items}, {"next_cursor", nullptr}});
}

// What an external executor was or would be given (the sbatch script, the JobSet YAML).
http::Response get_run_manifest(ApiContext& ctx, http::RequestContext& rc) {
  auto out = ctx.db.transact(
      [&](db::Transaction& tx) -> std::optional<nlohmann::json> {
        load_run(tx, rc.param("id"));
        if (!ctx.external) return std::nullopt;
        return ctx.external->manifest(tx, rc.param("id"));
      },
      db::TxMode::read_only);
  if (!out)
    throw http::conflict("run " + rc.param("id") +
                         " runs on Podium's agents (its cluster's executor is agent): there is no "
                         "engine manifest");
  return json_response(200, *out);
}

http::Response list_checkpoints(ApiContext& ctx, http::RequestContext& rc) {
  auto items = ctx.db.transact(
      [&](db::Transaction& tx) {
        load_run(tx, rc.param("id"));
        return checkpoint_list(tx, rc.param("id"));
      },
      db::TxMode::read_only);
  return json_response(200, {{"items", items}, {"next_cursor", nullptr}});
}

}  // namespace

void register_run_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/runs", http::Access::reader, list_runs);
  routes.add("POST", "/api/v1/plan", http::Access::reader, plan_run);
  routes.add("POST", "/api/v1/runs", http::Access::writer, submit_run);
  routes.add("GET", "/api/v1/runs/{id}", http::Access::reader, get_run);
  routes.add("POST", "/api/v1/runs/{id}/cancel", http::Access::writer, request_cancel);
  routes.add("PATCH", "/api/v1/runs/{id}", http::Access::writer, patch_run);
  routes.add("DELETE", "/api/v1/runs/{id}", http::Access::writer, delete_run);
  routes.add("GET", "/api/v1/runs/{id}/events", http::Access::reader, list_run_events);
  routes.add("GET", "/api/v1/runs/{id}/manifest", http::Access::reader, get_run_manifest);
  routes.add("GET", "/api/v1/runs/{id}/checkpoints", http::Access::reader, list_checkpoints);
}

}  // namespace podium::api
