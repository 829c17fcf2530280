// GET /runs/{id}/metrics: step series for charts, downsampled on the server keeping each bucket's
// extremes (engine/core/metrics/downsample.h); GET /runs/{id}/summary (run_summary.h, stored for
// settled runs by run_summary_store.h).
//
// A long run is first reduced in PostgreSQL: a range of more than kReduceAboveFineBuckets *
// kFineBucketsPerPoint * max_points steps is cut into kFineBucketsPerPoint * max_points
// equal-width step buckets and only the steps holding a bucket's minimum or maximum of a
// requested series (and the range's first and last step) are read out; downsample_aligned then
// picks from those. A run of 1,000,000 steps ships about 10,000 rows to the server instead of
// 1,000,000 (issue 31: the run page at team scale). Every spike
// stays: a chart bucket's extreme is the extreme of a fine bucket inside it, or, where a fine
// bucket straddles two chart buckets, a point at most one fine bucket (1/8 of a chart bucket at
// the default budget) away from it. A settled run's answers are kept in memory
// (backend/common/fingerprinted_cache.h): a reload does not read its rows again.
#include <charconv>
#include <cmath>
#include <set>

#include "backend/api/api_context.h"
#include "backend/api/plan_check.h"
#include "backend/api/route_table.h"
#include "backend/api/run_summary_store.h"
#include "backend/api/sql_util.h"
#include "backend/common/fingerprinted_cache.h"
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
// Fine buckets of the database-side reduction per point of the answer's budget: enough that a
// chart bucket (max_points / 2 of them at most) holds several, few enough that the rows read
// out stay small (at most 2 per series and fine bucket).
constexpr std::size_t kFineBucketsPerPoint = 4;
// The reduction costs about 1.5 us a row in PostgreSQL (ten ARRAY min/max aggregates) plus a
// fixed cost per fine bucket; reading every row and downsampling in the server costs about
// 2 us a row. Measured end to end at 1,000 points (bench PostgreSQL, one run): 10,000 steps
// 20 ms read whole against 56-137 ms reduced, 50,000: 96-123 against 190-395, 300,000: about
// 1,000 against 600, 1,000,000: 2,800 against 1,500. So only a range of more than this many fine
// buckets (128,000 steps at 1,000 points) is reduced.
constexpr std::size_t kReduceAboveFineBuckets = 32;
// Memory for settled runs' answers: about 1,000 charts of 1,000 points.
constexpr std::size_t kAnswerCacheBytes = 64 << 20;

// Whether the run is settled (finished, no attempt open) and its metrics' fingerprint (the run
// row's and its attempt rows' versions, as run_summary_store.h explains); no row: no such run.
constexpr const char* kRunVersionSql =
    "SELECT (r.state IN ('succeeded', 'failed', 'cancelled') AND r.finished_at IS NOT NULL AND "
    "NOT EXISTS (SELECT 1 FROM attempts a WHERE a.run_id = r.id AND COALESCE(a.finished_at, "
    "CASE WHEN a.state IN ('succeeded', 'failed', 'cancelled') THEN a.ending_at END) IS NULL)) "
    "AS settled, r.xmin::text || '/' || COALESCE((SELECT string_agg(a.xmin::text, ',' ORDER BY "
    "a.number) FROM attempts a WHERE a.run_id = r.id), '') AS fingerprint, "
    "(SELECT count(*) FROM attempts a WHERE a.run_id = r.id AND EXISTS (SELECT 1 FROM metrics x "
    "WHERE x.attempt_id = a.id)) AS attempts_with_metrics FROM runs r WHERE r.id = $1";

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

// The value of a requested field in a metrics row `m`, as float8 or NULL: a column, or a numeric
// key of `extra` (the keys are $4, a jsonb array, addressed by position).
std::string field_value_sql(const std::string& field,
                            const std::vector<std::string>& extra_fields) {
  if (standard(field)) return "m." + field;
  const auto at = std::find(extra_fields.begin(), extra_fields.end(), field) - extra_fields.begin();
  const std::string v = "(m.extra -> ($4::jsonb ->> " + std::to_string(at) + "))";
  // jsonb numbers are numeric: out of float8's range they would fail the cast.
  return "(CASE WHEN jsonb_typeof(" + v + ") = 'number' AND abs(" + v + "::numeric) < 1e300 THEN " +
         v + "::numeric::float8 END)";
}

// Rows of each step's latest execution in [$2, $3] (NULL: open), as the downsampler reads them;
// `picked_steps` is NULL (every step) or a CTE body giving column `step` (the steps to read).
std::string metrics_rows_sql(const std::string& picked_steps) {
  std::string out =
      "SELECT DISTINCT ON (m.step) m.step, m.step_seconds, m.tflops_per_device, "
      "m.tokens_per_second_per_device, m.loss, m.total_weights, "
      "CASE WHEN $4::jsonb = '[]'::jsonb THEN NULL ELSE "
      "(SELECT jsonb_object_agg(k, m.extra->k) FROM jsonb_array_elements_text($4::jsonb) "
      "AS k WHERE m.extra ? k)::text END AS picked "
      "FROM metrics m WHERE m.run_id = $1 AND ($2::bigint IS NULL OR m.step >= $2::bigint) "
      "AND ($3::bigint IS NULL OR m.step <= $3::bigint) ";
  if (!picked_steps.empty()) out += "AND m.step IN (SELECT step FROM picked) ";
  out += "ORDER BY m.step, m.attempt_number DESC";
  return picked_steps.empty() ? out : "WITH " + picked_steps + " " + out;
}

// The CTEs that pick, in [$5, $6], the steps of each of $7 equal-width buckets' minimum and
// maximum of every field (the first of equal values, NaN as the largest, as downsample.h), plus
// $5 and $6. A step's latest execution only: with `redone_steps` (more than one attempt has
// metrics), a row is left out when a later attempt has a row at its step (checked only inside
// that attempt's step span).
std::string picked_steps_sql(const std::vector<std::string>& fields,
                             const std::vector<std::string>& extra_fields, bool redone_steps) {
  std::string extremes;
  for (const auto& f : fields) {
    const std::string v = field_value_sql(f, extra_fields);
    const std::string present = " FILTER (WHERE " + v + " IS NOT NULL)";
    extremes += (extremes.empty() ? "" : ", ") + std::string("(min(ARRAY[") + v +
                ", m.step::float8])" + present + ")[2], -(max(ARRAY[" + v + ", -m.step::float8])" +
                present + ")[2]";
  }
  const std::string spans =
      redone_steps ? "spans AS MATERIALIZED (SELECT a.number, s.lo, s.hi FROM attempts a, LATERAL "
                     "(SELECT min(step) AS lo, max(step) AS hi FROM metrics WHERE attempt_id = "
                     "a.id) s WHERE a.run_id = $1 AND s.lo IS NOT NULL), "
                   : "";
  const std::string latest_only =
      redone_steps ? "AND NOT EXISTS (SELECT 1 FROM spans s WHERE s.number > m.attempt_number "
                     "AND m.step BETWEEN s.lo AND s.hi AND EXISTS (SELECT 1 FROM metrics l WHERE "
                     "l.run_id = $1 AND l.step = m.step AND l.attempt_number = s.number)) "
                   : "";
  return spans + "extremes AS (SELECT ARRAY[" + extremes +
         "] AS steps FROM metrics m WHERE m.run_id = $1 AND m.step BETWEEN $5::bigint AND "
         "$6::bigint " +
         latest_only +
         "GROUP BY floor((m.step - $5::bigint)::float8 * $7::bigint / "
         "($6::bigint - $5::bigint + 1)::float8)), "
         "picked AS (SELECT $5::bigint AS step UNION SELECT $6::bigint UNION "
         "SELECT s::bigint FROM extremes, unnest(extremes.steps) s WHERE s IS NOT NULL)";
}

http::Response metrics(ApiContext& ctx, http::RequestContext& rc, FingerprintedCache& cache) {
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

  // The request, each part length-prefixed: field names are free text (a separator could be
  // part of one).
  std::string key;
  auto add_part = [&key](const std::string& part) {
    key += std::to_string(part.size()) + ":" + part;
  };
  add_part(run_id);
  add_part(std::to_string(max_points));
  add_part(from ? std::to_string(*from) : "-");
  add_part(to ? std::to_string(*to) : "-");
  for (const auto& f : fields) add_part(f);
  std::optional<std::string> cached;
  std::optional<std::string> settled_fingerprint;
  auto rows = ctx.db.transact(
      [&](db::Transaction& tx) {
        cached.reset();
        settled_fingerprint.reset();
        auto version = tx.exec(kRunVersionSql, {run_id});
        if (version.empty()) throw http::not_found("no run " + run_id);
        if (version.boolean(0, "settled")) {
          settled_fingerprint = version.at(0, "fingerprint");
          cached = cache.find(key, *settled_fingerprint);
          if (cached) return db::Result();
        }
        const bool redone_steps = version.int64(0, "attempts_with_metrics") > 1;
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
        std::vector<db::Param> params = {
            run_id, from ? db::Param(std::to_string(*from)) : db::Param(),
            to ? db::Param(std::to_string(*to)) : db::Param(), json(extra_fields).dump()};
        // The range's first and last step (two index probes): a long range is reduced first.
        auto bounds = tx.exec(
            "SELECT min(step) AS lo, max(step) AS hi FROM metrics WHERE run_id = $1 AND "
            "($2::bigint IS NULL OR step >= $2::bigint) AND ($3::bigint IS NULL OR step <= "
            "$3::bigint)",
            {params[0], params[1], params[2]});
        const auto lo = bounds.opt_int64(0, "lo");
        const auto hi = bounds.opt_int64(0, "hi");
        const std::size_t fine = kFineBucketsPerPoint * max_points;
        // Each step's latest execution: a step redone after a restart shows its last run.
        if (!lo || !hi ||
            static_cast<std::uint64_t>(*hi) - static_cast<std::uint64_t>(*lo) <
                kReduceAboveFineBuckets * fine)
          return tx.exec(metrics_rows_sql(""), params);
        params.push_back(std::to_string(*lo));
        params.push_back(std::to_string(*hi));
        params.push_back(std::to_string(fine));
        // One pass over a long range: compiling it (JIT) costs more than it saves.
        tx.exec("SET LOCAL jit = off");
        return tx.exec(metrics_rows_sql(picked_steps_sql(fields, extra_fields, redone_steps)),
                       params);
      },
      db::TxMode::read_only);
  if (cached) return http::Response::json(200, std::move(*cached));

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
  http::Response response = json_response(200, core::to_json(out));
  if (settled_fingerprint) cache.put(key, *settled_fingerprint, response.body);
  return response;
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
  auto cache = std::make_shared<FingerprintedCache>(kAnswerCacheBytes);
  routes.add("GET", "/api/v1/runs/{id}/metrics", http::Access::reader,
             [cache](ApiContext& c, http::RequestContext& rc) { return metrics(c, rc, *cache); });
  routes.add("GET", "/api/v1/runs/{id}/summary", http::Access::reader, summary);
}

}  // namespace podium::api
