// GET /compare?runs=ID,ID,...&baseline=ID: runs side by side, each figure with its ratio to the
// baseline's (row / baseline), from the same summaries as GET /runs/{id}/summary.
#include <cmath>

#include "backend/api/api_context.h"
#include "backend/api/plan_check.h"
#include "backend/api/route_table.h"
#include "backend/api/run_summary_store.h"
#include "backend/api/sql_util.h"
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

}  // namespace

void register_compare_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/compare", http::Access::reader, compare);
}

}  // namespace podium::api
