#include "backend/api/run_summary.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "backend/api/model_store.h"
#include "backend/api/sql_util.h"
#include "backend/common/problem.h"
#include "backend/sched/run_state.h"
#include "engine/core/metrics/goodput.h"
#include "engine/core/metrics/steady_state.h"
#include "engine/core/model/flops.h"
#include "engine/core/model/model_catalog.h"
#include "engine/core/topology/accelerator.h"

namespace podium::api {

namespace {

using nlohmann::json;

json number_or_null(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}

// A positive finite number at j[key], also when written as a numeric string (imported config
// values are kept as MaxText printed them when they are not plain numbers).
std::optional<double> positive_number(const json& j, const std::string& key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  double v = 0;
  if (it->is_number()) {
    v = it->get<double>();
  } else if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(v) || v <= 0) return std::nullopt;
  return v;
}

// The run's training shape: top-level spec fields, else its config (MaxText keys).
struct Shape {
  std::optional<double> per_device_batch_size;
  std::optional<double> max_target_length;
  double gradient_accumulation_steps = 1;
};

Shape shape_of(const json& spec) {
  Shape s;
  const json config = spec.is_object() && spec.contains("config") ? spec["config"] : json::object();
  s.per_device_batch_size = positive_number(spec, "per_device_batch_size");
  if (!s.per_device_batch_size)
    s.per_device_batch_size = positive_number(config, "per_device_batch_size");
  s.max_target_length = positive_number(spec, "max_target_length");
  if (!s.max_target_length) s.max_target_length = positive_number(config, "max_target_length");
  if (auto g = positive_number(config, "gradient_accumulation_steps"))
    s.gradient_accumulation_steps = *g;
  return s;
}

// Per-step TFLOPs per device and where the figure comes from, best source first.
std::pair<std::optional<double>, std::string> tflops_per_step(const RunFacts& f,
                                                              const Shape& shape) {
  if (auto v = positive_number(f.log_facts, "tflops_per_step_per_device")) return {v, "log"};
  if (f.plan.is_object() && f.plan.contains("estimate"))
    if (auto v = positive_number(f.plan["estimate"], "tflops_per_device_per_step"))
      return {v, "plan_estimate"};
  if (const core::ModelSpec* model = f.model_spec ? &*f.model_spec : nullptr;
      model != nullptr && shape.per_device_batch_size && shape.max_target_length) {
    core::TrainingShape ts;
    ts.per_device_batch_size = *shape.per_device_batch_size;
    ts.max_target_length = static_cast<int>(*shape.max_target_length);
    ts.gradient_accumulation_steps = static_cast<int>(shape.gradient_accumulation_steps);
    const double total = core::training_tflops_per_device(*model, ts).total_tflops;
    if (std::isfinite(total) && total > 0) return {total, "model_estimate"};
  }
  return {std::nullopt, ""};
}

bool in_ranges(std::int64_t step, const std::vector<core::StepRange>& ranges) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [&](const core::StepRange& r) { return step >= r.first && step <= r.last; });
}

}  // namespace

RunFacts load_run_facts(db::Transaction& tx, const std::string& run_id, bool with_metrics) {
  auto r = tx.exec(
      "SELECT r.id, r.name, r.state, r.failure_class, r.imported, r.model, "
      "COALESCE(r.accelerator, c.accelerator) AS accelerator, "
      "COALESCE(r.num_slices, CASE WHEN jsonb_typeof(r.spec->'num_slices') = 'number' "
      "THEN (r.spec->>'num_slices')::numeric::int END, c.num_slices, 1) AS num_slices, "
      "c.price_per_chip_hour, r.restarts, r.recoveries, r.last_step, "
      "EXTRACT(EPOCH FROM r.created_at)::float8 AS created, "
      "EXTRACT(EPOCH FROM r.finished_at)::float8 AS finished, "
      "EXTRACT(EPOCH FROM now())::float8 AS now, r.spec::text AS spec, r.plan::text AS plan, "
      "r.log_facts::text AS log_facts, r.plan_check::text AS plan_check FROM runs r LEFT JOIN "
      "clusters c ON c.id = r.cluster_id "
      "WHERE r.id = $1",
      {run_id});
  if (r.empty()) throw http::not_found("no run " + run_id);
  RunFacts f;
  f.id = r.at(0, "id");
  f.name = r.at(0, "name");
  f.state = r.at(0, "state");
  f.failure_class = r.opt(0, "failure_class");
  f.imported = r.boolean(0, "imported");
  f.model = r.at(0, "model");
  if (auto stored = load_model(tx, f.model)) f.model_spec = std::move(stored->spec);
  f.accelerator = r.opt(0, "accelerator");
  f.num_slices = static_cast<int>(r.int64(0, "num_slices"));
  f.price_per_chip_hour = r.opt_double(0, "price_per_chip_hour");
  f.restarts = r.int64(0, "restarts");
  f.recoveries = r.int64(0, "recoveries");
  f.last_step = r.opt_int64(0, "last_step");
  f.created = r.opt_double(0, "created").value_or(0);
  f.finished = r.opt_double(0, "finished");
  f.now = r.opt_double(0, "now").value_or(0);
  f.spec = json_column(r, 0, "spec").value_or(json::object());
  f.plan = json_column(r, 0, "plan").value_or(json(nullptr));
  f.log_facts = json_column(r, 0, "log_facts").value_or(json::object());
  f.plan_check = json_column(r, 0, "plan_check").value_or(json(nullptr));

  auto a = tx.exec(
      "SELECT number, num_slices, EXTRACT(EPOCH FROM created_at)::float8 AS created, "
      "EXTRACT(EPOCH FROM running_at)::float8 AS running, "
      "EXTRACT(EPOCH FROM COALESCE(finished_at, CASE WHEN state IN ('succeeded', 'failed', "
      "'cancelled') THEN ending_at END))::float8 AS finished "
      "FROM attempts WHERE run_id = $1 ORDER BY number",
      {run_id});
  for (size_t i = 0; i < a.size(); ++i)
    f.attempts.push_back(AttemptRow{static_cast<int>(a.int64(i, "number")),
                                    static_cast<int>(a.int64(i, "num_slices")),
                                    a.opt_double(i, "created").value_or(f.created),
                                    a.opt_double(i, "running"), a.opt_double(i, "finished")});

  if (with_metrics) load_run_metrics(tx, f);
  return f;
}

void load_run_metrics(db::Transaction& tx, RunFacts& f) {
  auto m = tx.exec(
      "SELECT attempt_number, step, step_seconds, tflops_per_device, "
      "tokens_per_second_per_device, rampup FROM metrics WHERE run_id = $1 "
      "ORDER BY attempt_number, step",
      {f.id});
  f.metrics.clear();
  f.metrics.reserve(m.size());
  for (size_t i = 0; i < m.size(); ++i)
    f.metrics.push_back(
        MetricRow{static_cast<int>(m.int64(i, "attempt_number")), m.int64(i, "step"),
                  m.opt_double(i, "step_seconds"), m.opt_double(i, "tflops_per_device"),
                  m.opt_double(i, "tokens_per_second_per_device"), m.boolean(i, "rampup")});
}

std::optional<core::PlanExpectation> plan_expectation(const RunFacts& f) {
  if (f.plan.is_object()) return core::expectation_from_plan(f.plan);
  if (!f.accelerator) return std::nullopt;
  const auto accel = core::parse_accelerator(*f.accelerator);
  if (!accel.value) return std::nullopt;
  return core::default_expectation(*accel.value, f.model_spec ? &*f.model_spec : nullptr);
}

json summarize(const RunFacts& f, const SummaryOptions& options) {
  // Accelerator and size. An elastic run's latest attempt says how many slices it really used.
  std::optional<core::AcceleratorType> accel;
  if (f.accelerator)
    if (auto p = core::parse_accelerator(*f.accelerator); p.value) accel = *p.value;
  const int slices = f.attempts.empty() ? f.num_slices : f.attempts.back().num_slices;
  const Shape shape = shape_of(f.spec);
  std::optional<double> peak;
  if (accel && accel->kind != core::AcceleratorKind::cpu && accel->peak_tflops_per_device > 0)
    peak = accel->peak_tflops_per_device;

  // Steady state over each step's latest execution (rows come by attempt, so later wins).
  std::vector<core::StepSample> samples;
  std::map<std::int64_t, const MetricRow*> latest;
  std::map<int, std::int64_t> attempt_first_step;
  std::int64_t rampup_steps = 0;
  for (const MetricRow& m : f.metrics) {
    latest[m.step] = &m;
    if (!attempt_first_step.count(m.attempt_number)) attempt_first_step[m.attempt_number] = m.step;
  }
  for (const auto& [step, m] : latest) {
    if (m->rampup) {
      ++rampup_steps;  // another batch size: not comparable with the steady steps
      continue;
    }
    if (!m->step_seconds) continue;
    samples.push_back(
        {step, *m->step_seconds, m->tflops_per_device, m->tokens_per_second_per_device});
  }
  core::SteadyStateOptions so;
  for (const auto& [number, first] : attempt_first_step) so.attempt_start_steps.push_back(first);
  so.last_step_data_exhausted = f.failure_class && *f.failure_class == "data_exhausted";
  so.peak_tflops_per_device = peak;
  const auto [tflops_step, tflops_source] = tflops_per_step(f, shape);
  so.tflops_per_step_per_device = tflops_step;
  std::optional<double> tokens_per_step_per_device;
  if (shape.per_device_batch_size && shape.max_target_length)
    tokens_per_step_per_device =
        *shape.per_device_batch_size * *shape.max_target_length * shape.gradient_accumulation_steps;
  so.tokens_per_step_per_device = tokens_per_step_per_device;
  const core::SteadyState steady = core::compute_steady_state(samples, so);

  bool logged_tflops = false, logged_tokens = false;
  for (const auto& s : samples) {
    if (!in_ranges(s.step, steady.kept_ranges)) continue;
    logged_tflops |= s.tflops_per_device && std::isfinite(*s.tflops_per_device);
    logged_tokens |=
        s.tokens_per_second_per_device && std::isfinite(*s.tokens_per_second_per_device);
  }
  json basis = {{"tflops_per_device", nullptr},
                {"tokens_per_second_per_device", nullptr},
                {"goodput", f.imported ? "log_steps" : "timestamps"}};
  if (steady.tflops_per_device)
    basis["tflops_per_device"] = logged_tflops ? "logged" : tflops_source;
  if (steady.tokens_per_second_per_device)
    basis["tokens_per_second_per_device"] = logged_tokens ? "logged" : "config";

  // Goodput. A live run (or attempt) ends now.
  std::vector<core::AttemptTimeline> timelines;
  double submitted = f.created;
  double end = f.finished.value_or(f.now);
  if (f.imported) {
    // No clock in an imported log: its timeline is its step times, back to back.
    core::AttemptTimeline t;
    for (const MetricRow& m : f.metrics)
      if (m.step_seconds && std::isfinite(*m.step_seconds) && *m.step_seconds > 0) {
        t.steps.push_back({m.step, *m.step_seconds});
        t.end += *m.step_seconds;
      }
    submitted = 0;
    end = t.end;
    timelines.push_back(std::move(t));
  } else {
    for (const AttemptRow& a : f.attempts) {
      core::AttemptTimeline t;
      t.start = a.created;
      t.end = std::max(a.created, a.finished.value_or(f.finished.value_or(f.now)));
      t.waiting_for_hosts_seconds = std::max(0.0, a.running.value_or(t.end) - a.created);
      for (const MetricRow& m : f.metrics)
        if (m.attempt_number == a.number && m.step_seconds && std::isfinite(*m.step_seconds) &&
            *m.step_seconds > 0)
          t.steps.push_back({m.step, *m.step_seconds});
      timelines.push_back(std::move(t));
    }
  }
  core::GoodputOptions go;
  go.ideal_step_seconds = steady.median_seconds;
  const core::GoodputReport goodput = core::compute_goodput(submitted, end, timelines, go);

  // HBM: the peak a log printed, against the device's capacity.
  json hbm = nullptr;
  json hbm_used = nullptr;
  if (f.log_facts.is_object() && f.log_facts.contains("hbm") && f.log_facts["hbm"].is_object()) {
    const json& h = f.log_facts["hbm"];
    if (auto used = positive_number(h, "used_gib")) {
      hbm_used = *used;
      hbm = {{"used_gib", *used},
             {"limit_gib", number_or_null(positive_number(h, "limit_gib"))},
             {"device", h.value("device", "")},
             {"source", h.value("source", "memstats")},
             {"label", h.value("label", "")},
             {"capacity_gib_per_device", accel && accel->hbm_gib_per_device > 0
                                             ? json(accel->hbm_gib_per_device)
                                             : json(nullptr)}};
    }
  }

  // Cost: chips x price per chip-hour over the tokens the whole run trains per hour.
  json cost = nullptr;
  if (f.price_per_chip_hour && *f.price_per_chip_hour >= 0 && accel && steady.median_seconds &&
      steady.tokens_per_second_per_device && *steady.tokens_per_second_per_device > 0) {
    const double chips = static_cast<double>(accel->chips_per_slice) * slices;
    const double devices = static_cast<double>(accel->devices_per_slice) * slices;
    const double step = *steady.median_seconds;
    const double tokens_per_step = *steady.tokens_per_second_per_device * step * devices;
    const double value = chips * *f.price_per_chip_hour * step / 3600.0 / tokens_per_step * 1e9;
    if (std::isfinite(value)) cost = value;
  }

  // Plan against actual: the run's decision once made, else what the steady figures say now.
  // The expectation is the stored plan's; a run stored without one (imported) gets what the
  // planner would have assumed for its model on its accelerator.
  json plan_check = nullptr;
  if (f.plan_check.is_object()) {
    if (f.plan_check.value("verdict", "") != "none") plan_check = f.plan_check;
  } else {
    if (auto c = core::check_plan_against_actual(steady.tflops_per_device, steady.kept_count,
                                                 plan_expectation(f), options.plan_check)) {
      plan_check = core::to_json(*c);
      plan_check["decided_at"] = nullptr;
      plan_check["at_step"] = nullptr;
    }
  }

  std::set<std::int64_t> distinct;
  for (const MetricRow& m : f.metrics) distinct.insert(m.step);
  json first_step = distinct.empty() ? json(nullptr) : json(*distinct.begin());
  json last_step = f.last_step        ? json(*f.last_step)
                   : distinct.empty() ? json(nullptr)
                                      : json(*distinct.rbegin());

  json out = {
      {"run_id", f.id},
      {"name", f.name},
      {"state", f.state},
      {"failure_class", f.failure_class ? json(*f.failure_class) : json(nullptr)},
      {"imported", f.imported},
      {"live", !sched::is_terminal_run_state(f.state)},
      {"model", f.model},
      {"accelerator", accel ? json(accel->type) : json(nullptr)},
      {"topology", accel ? json(accel->topology) : json(nullptr)},
      {"num_slices", slices},
      {"chips", accel ? json(accel->chips_per_slice * slices) : json(nullptr)},
      {"devices", accel ? json(accel->devices_per_slice * slices) : json(nullptr)},
      {"hosts", accel ? json(accel->hosts_per_slice * slices) : json(nullptr)},
      {"peak_tflops_per_device", number_or_null(peak)},
      {"per_device_batch_size", number_or_null(shape.per_device_batch_size)},
      {"max_target_length", number_or_null(shape.max_target_length)},
      {"gradient_accumulation_steps", shape.gradient_accumulation_steps},
      {"step_seconds", number_or_null(steady.median_seconds)},
      {"steady_steps", steady.kept_count},
      {"steady_state", core::to_json(steady)},
      {"tflops_per_device", number_or_null(steady.tflops_per_device)},
      {"tflops_per_step_per_device", number_or_null(tflops_step)},
      {"tokens_per_second_per_device", number_or_null(steady.tokens_per_second_per_device)},
      {"mfu", number_or_null(steady.mfu)},
      {"plan_check", plan_check},
      {"hbm_gib_used", hbm_used},
      {"hbm", hbm},
      {"goodput", number_or_null(goodput.goodput)},
      {"badput", core::to_json(goodput.badput)},
      {"goodput_detail", core::to_json(goodput)},
      {"price_per_chip_hour", number_or_null(f.price_per_chip_hour)},
      {"cost_per_billion_tokens", cost},
      {"basis", basis},
      {"num_params_billion", number_or_null(positive_number(f.log_facts, "num_params_billion"))},
      {"steps", distinct.size()},
      {"step_executions", f.metrics.size()},
      {"rampup_steps", rampup_steps},
      {"first_step", first_step},
      {"last_step", last_step},
      {"attempts", f.attempts.size()},
      {"restarts", f.restarts},
      {"recoveries", f.recoveries},
  };
  return out;
}

}  // namespace podium::api
