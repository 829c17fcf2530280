// GET /compare?runs=ID,ID,...&baseline=ID: runs side by side, each figure with its ratio to the
// baseline's (row / baseline), from the same summaries as GET /runs/{id}/summary.
// Saved compares (POST|GET /compares, GET|DELETE /compares/{id}): a named set of runs with its
// baseline under a stable id, which the dashboard's /compare/{id} reloads.
#include <cmath>

#include "backend/api/api_context.h"
#include "backend/api/plan_check.h"
#include "backend/api/route_table.h"
#include "backend/api/run_summary_store.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"

namespace podium::api {

namespace {

using nlohmann::json;

constexpr std::size_t kMinRuns = 2;
constexpr std::size_t kMaxRuns = 20;

// Row members copied from the summary.
const std::vector<std::string> kRowFields = {"run_id",
                                             "name",
                                             "state",
                                             "failure_class",
                                             "imported",
                                             "model",
                                             "accelerator",
                                             "topology",
                                             "num_slices",
                                             "chips",
                                             "devices",
                                             "hosts",
                                             "per_device_batch_size",
                                             "max_target_length",
                                             "step_seconds",
                                             "steady_steps",
                                             "tflops_per_device",
                                             "tokens_per_second_per_device",
                                             "mfu",
                                             "plan_check",
                                             "hbm_gib_used",
                                             "goodput",
                                             "cost_per_billion_tokens",
                                             "basis"};
// Members that get a ratio to the baseline.
const std::vector<std::string> kRatioFields = {"chips",
                                               "devices",
                                               "hosts",
                                               "per_device_batch_size",
                                               "max_target_length",
                                               "step_seconds",
                                               "tflops_per_device",
                                               "tokens_per_second_per_device",
                                               "mfu",
                                               "hbm_gib_used",
                                               "goodput",
                                               "cost_per_billion_tokens"};

json ratio(const json& value, const json& base) {
  if (!value.is_number() || !base.is_number()) return nullptr;
  const double b = base.get<double>();
  const double v = value.get<double>();
  if (b == 0 || !std::isfinite(b) || !std::isfinite(v)) return nullptr;
  return v / b;
}

std::vector<std::string> split_ids(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string id = text.substr(start, comma - start);
    if (id.empty())
      throw http::bad_request("runs has an empty id",
                              {{"runs", "comma-separated run ids, none empty"}});
    if (std::find(out.begin(), out.end(), id) != out.end())
      throw http::bad_request("run " + id + " is listed twice", {{"runs", "each run once"}});
    out.push_back(std::move(id));
    start = comma + 1;
  }
  return out;
}

http::Response compare(ApiContext& ctx, http::RequestContext& rc) {
  const auto runs_param = rc.request.query_param("runs");
  if (!runs_param)
    throw http::bad_request("runs is required: ?runs=ID,ID,...",
                            {{"runs", "required: comma-separated run ids"}});
  const std::vector<std::string> ids = split_ids(*runs_param);
  if (ids.size() < kMinRuns || ids.size() > kMaxRuns)
    throw http::bad_request("compare takes " + std::to_string(kMinRuns) + " to " +
                                std::to_string(kMaxRuns) + " runs, not " +
                                std::to_string(ids.size()),
                            {{"runs", "between " + std::to_string(kMinRuns) + " and " +
                                          std::to_string(kMaxRuns) + " run ids"}});
  std::string baseline = ids.front();
  if (auto b = rc.request.query_param("baseline")) {
    if (std::find(ids.begin(), ids.end(), *b) == ids.end())
      throw http::bad_request("the baseline " + *b + " is not among runs",
                              {{"baseline", "must be one of the ids in runs"}});
    baseline = *b;
  }

  // One snapshot for every run, so the rows compare the same moment.
  const SummaryOptions options = summary_options(ctx.config);
  std::vector<SummaryToStore> computed;
  auto summaries = ctx.db.transact(
      [&](db::Transaction& tx) {
        tx.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        computed.clear();
        std::vector<json> out;
        for (const auto& id : ids)
          out.push_back(summary_of(tx, id, computed, options));  // 404: unknown
        return out;
      },
      db::TxMode::read_only);
  store_summaries(ctx.db, computed);

  json base;
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == baseline) base = summaries[i];
  json rows = json::array();
  for (const json& s : summaries) {
    json row = json::object();
    for (const auto& k : kRowFields) row[k] = s.contains(k) ? s[k] : json(nullptr);
    json ratios = json::object();
    for (const auto& k : kRatioFields) ratios[k] = ratio(s[k], base[k]);
    row["ratios"] = std::move(ratios);
    rows.push_back(std::move(row));
  }
  return json_response(200, {{"baseline", baseline}, {"rows", rows}});
}

constexpr size_t kSavedCompareNameMax = 200;

std::string saved_compare_select(const std::string& where) {
  return "SELECT s.id, s.seq, s.name, array_to_json(s.runs)::text AS runs, s.baseline, "
         "s.created_by, u.username AS created_by_name, " +
         rfc3339("s.created_at") +
         " AS created_at FROM compares s LEFT JOIN users u ON u.id = s.created_by " + where;
}

json saved_compare_json(const db::Result& r, size_t i) {
  return {{"id", r.at(i, "id")},
          {"name", r.at(i, "name")},
          {"runs", json_column(r, i, "runs").value_or(json::array())},
          {"baseline", r.at(i, "baseline")},
          {"created_by", nullable_string(r, i, "created_by")},
          {"created_by_name", nullable_string(r, i, "created_by_name")},
          {"created_at", r.at(i, "created_at")}};
}

db::Result require_saved_compare(db::Transaction& tx, const std::string& id) {
  auto r = tx.exec(saved_compare_select("WHERE s.id = $1"), {id});
  if (r.empty()) throw http::not_found("no saved compare " + id);
  return r;
}

// {"name","runs":[IDs],"baseline":ID}: the same rules as GET /compare's runs and baseline (2 to
// 20 distinct runs, the baseline one of them, the first when none is given); every run must
// exist now (422 naming the unknown ids).
http::Response save_compare(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto name = in.string("name", true, kSavedCompareNameMax);
  if (name && name->find('\0') != std::string::npos)
    in.error("name", "must not contain NUL characters");
  auto runs = in.string_array("runs", true, kMaxRuns);
  if (runs) {
    std::vector<std::string> seen;
    for (const auto& id : *runs) {
      if (id.empty() || id.find('\0') != std::string::npos)
        in.error("runs", "run ids are non-empty strings");
      else if (std::find(seen.begin(), seen.end(), id) != seen.end())
        in.error("runs", "run " + id + " is listed twice");
      seen.push_back(id);
    }
    if (runs->size() < kMinRuns)
      in.error("runs", "between " + std::to_string(kMinRuns) + " and " + std::to_string(kMaxRuns) +
                           " run ids");
  }
  auto baseline = in.string("baseline", false, 256);
  if (baseline && runs && std::find(runs->begin(), runs->end(), *baseline) == runs->end())
    in.error("baseline", "must be one of the ids in runs");
  in.reject_unknown_fields();
  if (!in.errors().empty()) throw http::unprocessable("the saved compare is invalid", in.errors());

  const std::string id = new_id("cmp");
  auto r = ctx.db.transact([&](db::Transaction& tx) {
    auto known = tx.exec(
        "SELECT COALESCE(json_agg(x), '[]')::text AS missing FROM "
        "jsonb_array_elements_text($1::jsonb) AS x WHERE NOT EXISTS "
        "(SELECT 1 FROM runs WHERE id = x)",
        {json(*runs).dump()});
    const json missing = json_column(known, 0, "missing").value_or(json::array());
    if (!missing.empty())
      throw http::unprocessable("unknown runs: " + missing.dump(),
                                {{"runs", "no run " + missing[0].get<std::string>()}});
    tx.exec(
        "INSERT INTO compares (id, name, runs, baseline, created_by) VALUES ($1, $2, "
        "ARRAY(SELECT jsonb_array_elements_text($3::jsonb)), $4, $5)",
        {id, *name, json(*runs).dump(), baseline.value_or(runs->front()), user_id(rc)});
    audit(tx, rc, "create", "compare", id, {{"name", *name}, {"runs", *runs}});
    return require_saved_compare(tx, id);
  });
  return json_response(201, saved_compare_json(r, 0));
}

http::Response list_saved_compares(ApiContext& ctx, http::RequestContext& rc) {
  auto page = read_page(rc, ctx.cursor_key);
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        return tx.exec(saved_compare_select(
                           "WHERE ($1::bigint IS NULL OR s.seq < $1) ORDER BY s.seq DESC LIMIT $2"),
                       {page.after_param(), page.limit_param()});
      },
      db::TxMode::read_only);
  json items = json::array();
  std::vector<int64_t> seqs;
  for (size_t i = 0; i < r.size(); ++i) {
    items.push_back(saved_compare_json(r, i));
    seqs.push_back(r.int64(i, "seq"));
  }
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

http::Response get_saved_compare(ApiContext& ctx, http::RequestContext& rc) {
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) { return require_saved_compare(tx, rc.param("id")); },
      db::TxMode::read_only);
  return json_response(200, saved_compare_json(r, 0));
}

http::Response delete_saved_compare(ApiContext& ctx, http::RequestContext& rc) {
  ctx.db.transact([&](db::Transaction& tx) {
    auto cur = require_saved_compare(tx, rc.param("id"));
    if (!rc.principal->is_admin() && cur.opt(0, "created_by") != user_id(rc))
      throw http::forbidden("only the saved compare's creator or an admin may delete it");
    tx.exec("DELETE FROM compares WHERE id = $1", {rc.param("id")});
    audit(tx, rc, "delete", "compare", rc.param("id"), {{"name", cur.at(0, "name")}});
  });
  return http::Response::empty(204);
}

}  // namespace

void register_compare_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/compare", http::Access::reader, compare);
  routes.add("POST", "/api/v1/compares", http::Access::writer, save_compare);
  routes.add("GET", "/api/v1/compares", http::Access::reader, list_saved_compares);
  routes.add("GET", "/api/v1/compares/{id}", http::Access::reader, get_saved_compare);
  routes.add("DELETE", "/api/v1/compares/{id}", http::Access::writer, delete_saved_compare);
}

}  // namespace podium::api
