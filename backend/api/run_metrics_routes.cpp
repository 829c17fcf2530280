// GET /runs/{id}/metrics: step series for charts, downsampled on the server keeping each bucket's
// extremes (engine/core/metrics/downsample.h); GET /runs/{id}/summary (run_summary.h, stored for
// settled runs by run_summary_store.h).
#include <charconv>
#include <cmath>
#include <set>

#include "backend/api/api_context.h"
#include "backend/api/plan_check.h"
#include "backend/api/route_table.h"
#include "backend/api/run_summary_store.h"
#include "backend/api/sql_util.h"
#include "backend/common/problem.h"
#include "engine/core/metrics/downsample.h"

namespace podium::api {

namespace {

using nlohmann::json;

// Columns of the metrics table a client may ask for by name; any key of the `extra` column
// (lm_loss, perplexity, grad_norm, ...) may be asked for too.
const std::vector<std::string> kStandardFields = {
    "step_seconds", "tflops_per_device", "tokens_per_second_per_device", "loss", "total_weights"};
constexpr std::size_t kDefaultMaxPoints = 1000;
constexpr std::size_t kMaxMaxPoints = 10000;
constexpr std::size_t kMaxFields = 50;

bool standard(const std::string& f) {
  return std::find(kStandardFields.begin(), kStandardFields.end(), f) != kStandardFields.end();
}

std::vector<std::string> split_fields(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string name = text.substr(start, comma - start);
    while (!name.empty() && name.front() == ' ') name.erase(name.begin());
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (name.empty())
      throw http::bad_request("fields has an empty name",
                              {{"fields", "comma-separated field names, none empty"}});
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    start = comma + 1;
  }
  return out;
}

http::Response metrics(ApiContext& ctx, http::RequestContext& rc) {
  const std::string run_id = rc.param("id");
  std::vector<std::string> fields = kStandardFields;
  if (auto f = rc.request.query_param("fields")) fields = split_fields(*f);
  if (fields.size() > kMaxFields)
    throw http::bad_request("at most " + std::to_string(kMaxFields) + " fields",
                            {{"fields", "at most " + std::to_string(kMaxFields) + " names"}});
  const auto from = query_integer(rc, "from_step", 0, INT64_MAX, "an integer >= 0");
  const auto to = query_integer(rc, "to_step", 0, INT64_MAX, "an integer >= 0");
  if (from && to && *from > *to)
    throw http::bad_request("from_step must not exceed to_step",
                            {{"from_step", "must not exceed to_step"}});
  // Values above the maximum are served at the maximum: a chart asking for "everything" gets
  // the most the server ships.
  auto max_points = static_cast<std::size_t>(
      query_integer(rc, "max_points", 1, INT64_MAX, "an integer >= 1").value_or(kDefaultMaxPoints));
  max_points = std::min(max_points, kMaxMaxPoints);

  std::vector<std::string> extra_fields;
  for (const auto& f : fields)
    if (!standard(f)) extra_fields.push_back(f);

  auto rows = ctx.db.transact(
      [&](db::Transaction& tx) {
        if (tx.exec("SELECT 1 FROM runs WHERE id = $1", {run_id}).empty())
          throw http::not_found("no run " + run_id);
        if (!extra_fields.empty()) {
          auto known = tx.exec(
              "SELECT DISTINCT k FROM metrics m, jsonb_object_keys(m.extra) AS k "
              "WHERE m.run_id = $1 ORDER BY k",
              {run_id});
          std::set<std::string> keys;
          for (size_t i = 0; i < known.size(); ++i) keys.insert(known.at(i, "k"));
          std::vector<http::FieldError> errors;
          for (const auto& f : extra_fields)
            if (!keys.count(f)) errors.push_back({"fields", "unknown field '" + f + "'"});
          if (!errors.empty()) {
            std::string valid;
            for (const auto& s : kStandardFields) valid += (valid.empty() ? "" : ", ") + s;
            for (const auto& k : keys) valid += ", " + k;
            auto p = http::bad_request("unknown field name(s); valid fields of this run: " + valid,
                                       std::move(errors));
            json list = kStandardFields;
            for (const auto& k : keys) list.push_back(k);
            p.extra["valid_fields"] = list;
            throw p;
          }
        }
        // Each step's latest execution: a step redone after a restart shows its last run.
        return tx.exec(
            "SELECT DISTINCT ON (m.step) m.step, m.step_seconds, m.tflops_per_device, "
            "m.tokens_per_second_per_device, m.loss, m.total_weights, "
            "CASE WHEN $4::jsonb = '[]'::jsonb THEN NULL ELSE "
            "(SELECT jsonb_object_agg(k, m.extra->k) FROM jsonb_array_elements_text($4::jsonb) "
            "AS k WHERE m.extra ? k)::text END AS picked "
            "FROM metrics m WHERE m.run_id = $1 AND ($2::bigint IS NULL OR m.step >= $2::bigint) "
            "AND ($3::bigint IS NULL OR m.step <= $3::bigint) "
            "ORDER BY m.step, m.attempt_number DESC",
            {run_id, from ? db::Param(std::to_string(*from)) : db::Param(),
             to ? db::Param(std::to_string(*to)) : db::Param(), json(extra_fields).dump()});
      },
      db::TxMode::read_only);

  std::map<std::string, std::vector<core::SeriesPoint>> series;
  for (const auto& f : fields) series[f];
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::int64_t step = rows.int64(i, "step");
    for (const auto& f : fields) {
      if (!standard(f)) continue;
      if (auto v = rows.opt_double(i, f)) series[f].push_back({step, *v});
    }
    if (extra_fields.empty()) continue;
    auto picked = json_column(rows, i, "picked");
    if (!picked || !picked->is_object()) continue;
    for (const auto& [k, v] : picked->items())
      if (v.is_number()) series[k].push_back({step, v.get<double>()});
  }
  const core::AlignedSeries out = core::downsample_aligned(series, max_points);
  return json_response(200, core::to_json(out));
}

http::Response summary(ApiContext& ctx, http::RequestContext& rc) {
  std::vector<SummaryToStore> computed;
  auto out = ctx.db.transact(
      [&](db::Transaction& tx) {
        computed.clear();
        return summary_of(tx, rc.param("id"), computed, summary_options(ctx.config));
      },
      db::TxMode::read_only);
  store_summaries(ctx.db, computed);
  return json_response(200, out);
}

}  // namespace

void register_run_metrics_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/runs/{id}/metrics", http::Access::reader, metrics);
  routes.add("GET", "/api/v1/runs/{id}/summary", http::Access::reader, summary);
}

}  // namespace podium::api
