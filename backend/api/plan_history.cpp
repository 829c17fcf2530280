#include "backend/api/plan_history.h"

#include <algorithm>
#include <map>
#include <vector>

namespace podium::api {

namespace {
// Compile and warm-up steps are not steady; runs with fewer steady steps say little.
constexpr int kFirstSteadyStep = 3;
constexpr int kMinSteadySteps = 5;
constexpr int kHistoryMaxRuns = 10;

// What decides HBM besides the tokens per device: the mesh axes (from the spec's parallelism or
// MaxText's ici_*/dcn_*_parallelism config keys, as imported logs carry them; axes of 1 left
// out), the remat policy and the optimizer (MaxText's defaults when unset).
std::string memory_layout(const nlohmann::json& spec) {
  std::map<std::string, std::string> axes;
  auto add = [&](std::string key, const nlohmann::json& v) {
    const std::string suffix = "_parallelism";
    if (key.size() > suffix.size() &&
        key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0)
      key.resize(key.size() - suffix.size());
    if (key.rfind("ici_", 0) != 0 && key.rfind("dcn_", 0) != 0) return;
    if (!v.is_number_integer() || v.get<long long>() == 1) return;
    axes[key] = std::to_string(v.get<long long>());
  };
  if (spec.contains("parallelism") && spec["parallelism"].is_object())
    for (const auto& [k, v] : spec["parallelism"].items()) add(k, v);
  std::string remat = "full", opt = "adamw";
  if (spec.contains("config") && spec["config"].is_object()) {
    const auto& c = spec["config"];
    for (const auto& [k, v] : c.items())
      if (k.size() > 12 && k.compare(k.size() - 12, 12, "_parallelism") == 0) add(k, v);
    if (c.contains("remat_policy") && c["remat_policy"].is_string()) remat = c["remat_policy"];
    if (c.contains("opt_type") && c["opt_type"].is_string()) opt = c["opt_type"];
  }
  std::string out = remat + "|" + opt;
  for (const auto& [k, v] : axes) out += "|" + k + "=" + v;
  return out;
}
}  // namespace

std::optional<core::HistoryFacts> load_plan_history(db::Transaction& tx, const std::string& model,
                                                    const std::string& accelerator_type,
                                                    double peak_tflops_per_device,
                                                    const nlohmann::json& spec) {
  if (model.empty() || accelerator_type.empty()) return std::nullopt;
  core::HistoryFacts facts;
  bool any = false;

  if (peak_tflops_per_device > 0) {
    // Per run: the median TFLOP/s/device over its steady steps (each step's latest execution is
    // close enough here: redone steps ran at the same speed). A run found underperforming
    // (backend/api/plan_check.h) is left out: its speed says what went wrong with it, not what
    // the configuration does, and counting it would lower every later plan's expectation to it.
    auto r = tx.exec(
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY m.tflops_per_device) AS tflops "
        "FROM runs r LEFT JOIN clusters c ON c.id = r.cluster_id JOIN metrics m ON m.run_id = "
        "r.id WHERE r.model = $1 AND COALESCE(r.accelerator, c.accelerator) = $2 AND r.state IN "
        "('succeeded', 'failed') AND r.plan_check->>'verdict' IS DISTINCT FROM 'underperforming' "
        "AND m.step >= $3::bigint AND m.tflops_per_device > 0 "
        "GROUP BY r.id HAVING count(*) >= $4::bigint ORDER BY max(r.seq) DESC LIMIT $5::int",
        {model, accelerator_type, std::to_string(kFirstSteadyStep), std::to_string(kMinSteadySteps),
         std::to_string(kHistoryMaxRuns)});
    std::vector<double> mfus;
    for (size_t i = 0; i < r.size(); ++i)
      if (auto t = r.opt_double(i, "tflops"); t && *t > 0)
        mfus.push_back(*t / peak_tflops_per_device);
    if (!mfus.empty()) {
      std::sort(mfus.begin(), mfus.end());
      const size_t n = mfus.size();
      const double median = n % 2 ? mfus[n / 2] : (mfus[n / 2 - 1] + mfus[n / 2]) / 2;
      if (median > 0 && median <= 1) {
        facts.mfu = median;
        facts.mfu_runs = static_cast<int>(n);
        any = true;
      }
    }
  }

  // HBM only transfers between runs that shard and rematerialize the same way.
  const auto layout = memory_layout(spec);
  auto h = tx.exec(
      "SELECT r.id, (r.log_facts->'hbm'->>'used_gib')::float8 AS used, "
      "COALESCE(r.log_facts->'hbm'->>'source', 'memstats') AS source, "
      "(r.spec->>'per_device_batch_size')::float8 AS batch, "
      "(r.spec->>'max_target_length')::float8 AS seq, r.spec::text AS spec "
      "FROM runs r LEFT JOIN clusters c ON c.id = r.cluster_id "
      "WHERE r.model = $1 AND COALESCE(r.accelerator, c.accelerator) = $2 AND r.log_facts ? "
      "'hbm' ORDER BY r.seq DESC LIMIT $3::int",
      {model, accelerator_type, std::to_string(kHistoryMaxRuns)});
  for (size_t i = 0; i < h.size(); ++i) {
    auto earlier = nlohmann::json::parse(h.at(i, "spec"), nullptr, false);
    if (!earlier.is_object() || memory_layout(earlier) != layout) continue;
    // A parameter footprint (Memstats after params initialized) is no peak: not an observation.
    const std::string source = h.at(i, "source");
    if (source == "params_only") continue;
    auto used = h.opt_double(i, "used");
    auto batch = h.opt_double(i, "batch");
    auto seq = h.opt_double(i, "seq");
    if (used && batch && seq && *used > 0 && *batch > 0 && *seq > 0) {
      core::HbmObservation o;
      o.gib_per_device = *used;
      o.tokens_per_device = *batch * *seq;
      o.per_device_batch_size = *batch;
      o.max_target_length = *seq;
      o.source = source;
      o.oom = source == "oom_required";
      o.run = h.at(i, "id");
      facts.hbm.push_back(std::move(o));
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return facts;
}

}  // namespace podium::api
