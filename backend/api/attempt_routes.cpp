// GET /runs/{id}/attempts: every attempt of a run with its hosts, exits, failure class, the
// restart decision taken after it, the steps it ran, and the environment its ranks ran with.
#include "backend/api/api_context.h"
#include "backend/api/attempt_environment.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"
#include "backend/common/problem.h"

namespace podium::api {

namespace {

using nlohmann::json;

http::Response list_attempts(ApiContext& ctx, http::RequestContext& rc) {
  const std::string run_id = rc.param("id");
  auto page = read_page(rc, ctx.cursor_key);
  auto [attempts, hosts] = ctx.db.transact(
      [&](db::Transaction& tx) {
        if (tx.exec("SELECT 1 FROM runs WHERE id = $1", {run_id}).empty())
          throw http::not_found("no run " + run_id);
        auto a = tx.exec(
            "SELECT id, seq, number, state, reason, num_slices, world_size, "
            "array_to_json(slices)::text AS slices, coordinator_address, coordinator_port, "
            "ending_cause, failure_class, classification::text AS classification, "
            "restart_decision::text AS restart_decision, resumed_from_step, first_step, "
            "last_step, executor, engine_job_id, engine_state, engine_end::text AS engine_end, "
            "environment::text AS environment, " +
                rfc3339("created_at") + " AS created_at, " + rfc3339("running_at") +
                " AS started_at, " + rfc3339("finished_at") +
                " AS ended_at FROM attempts WHERE run_id = $1 AND ($2::bigint IS NULL OR seq > "
                "$2::bigint) ORDER BY seq LIMIT $3::int",
            {run_id, page.after_param(), page.limit_param()});
        auto h = tx.exec(
            "SELECT ah.attempt_id, ah.rank, ah.worker_id, ah.slice, ah.host, ah.gang_slice, "
            "ah.address, ah.state, ah.pid, ah.exit_code, ah.signal, " +
                rfc3339("ah.started_at") + " AS started_at, " + rfc3339("ah.ended_at") +
                " AS ended_at, COALESCE(w.hostname, NULLIF(ah.hostname, '')) AS hostname, "
                "ah.environment::text AS environment FROM "
                "attempt_hosts ah JOIN attempts a ON a.id = "
                "ah.attempt_id LEFT JOIN workers w ON w.id = ah.worker_id WHERE a.run_id = $1 "
                "ORDER BY a.seq, ah.rank",
            {run_id});
        return std::make_pair(std::move(a), std::move(h));
      },
      db::TxMode::read_only);
  std::map<std::string, json> by_attempt;
  std::map<std::string, std::vector<json>> reported;  // per attempt, in rank order
  for (size_t i = 0; i < hosts.size(); ++i) {
    auto environment = json_column(hosts, i, "environment");
    if (environment) reported[hosts.at(i, "attempt_id")].push_back(*environment);
    by_attempt[hosts.at(i, "attempt_id")].push_back(
        {{"rank", hosts.int64(i, "rank")},
         {"worker_id", nullable_string(hosts, i, "worker_id")},
         {"hostname", nullable_string(hosts, i, "hostname")},
         {"slice", hosts.int64(i, "slice")},
         {"host", hosts.int64(i, "host")},
         {"gang_slice", hosts.int64(i, "gang_slice")},
         {"address", hosts.at(i, "address")},
         {"state", hosts.at(i, "state")},
         {"pid", nullable_int(hosts, i, "pid")},
         {"exit_code", nullable_int(hosts, i, "exit_code")},
         {"signal", nullable_int(hosts, i, "signal")},
         {"started_at", nullable_string(hosts, i, "started_at")},
         {"ended_at", nullable_string(hosts, i, "ended_at")},
         {"environment", environment.value_or(json(nullptr))}});
  }
  json items = json::array();
  std::vector<int64_t> seqs;
  std::optional<int64_t> previous_last;
  for (size_t i = 0; i < attempts.size(); ++i) {
    json exit_codes = json::array();
    auto& hs = by_attempt[attempts.at(i, "id")];
    if (hs.is_null()) hs = json::array();
    for (const auto& h : hs)
      if (!h["exit_code"].is_null()) exit_codes.push_back(h["exit_code"]);
    auto first = attempts.opt_int64(i, "first_step");
    json redone = nullptr;
    if (previous_last && first) redone = std::max<int64_t>(0, *previous_last - *first + 1);
    if (auto last = attempts.opt_int64(i, "last_step")) previous_last = last;
    items.push_back(
        {{"id", attempts.at(i, "id")},
         {"number", attempts.int64(i, "number")},
         {"state", attempts.at(i, "state")},
         {"reason", attempts.at(i, "reason")},
         {"num_slices", attempts.int64(i, "num_slices")},
         {"world_size", attempts.int64(i, "world_size")},
         {"slices", json_column(attempts, i, "slices").value_or(json::array())},
         {"coordinator",
          attempts.at(i, "coordinator_address") + ":" + attempts.at(i, "coordinator_port")},
         {"ending_cause", nullable_string(attempts, i, "ending_cause")},
         {"failure_class", nullable_string(attempts, i, "failure_class")},
         {"classification", json_column(attempts, i, "classification").value_or(json(nullptr))},
         {"restart_decision", json_column(attempts, i, "restart_decision").value_or(json(nullptr))},
         {"resumed_from_step", nullable_int(attempts, i, "resumed_from_step")},
         {"first_step", nullable_int(attempts, i, "first_step")},
         {"last_step", nullable_int(attempts, i, "last_step")},
         {"steps_redone", redone},
         {"exit_codes", exit_codes},
         {"executor", attempts.at(i, "executor")},
         {"engine",
          attempts.at(i, "executor") == "agent"
              ? json(nullptr)
              : json{{"job_id", nullable_string(attempts, i, "engine_job_id")},
                     {"state", nullable_string(attempts, i, "engine_state")},
                     {"end", json_column(attempts, i, "engine_end").value_or(json(nullptr))}}},
         {"created_at", attempts.at(i, "created_at")},
         {"started_at", nullable_string(attempts, i, "started_at")},
         {"ended_at", nullable_string(attempts, i, "ended_at")},
         {"environment",
          attempt_environment_json(json_column(attempts, i, "environment").value_or(nullptr),
                                   reported[attempts.at(i, "id")])},
         {"hosts", hs}});
    seqs.push_back(attempts.int64(i, "seq"));
  }
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

}  // namespace

void register_attempt_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/runs/{id}/attempts", http::Access::reader, list_attempts);
}

}  // namespace podium::api
