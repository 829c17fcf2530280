#include "engine/core/plan/plan_vs_actual.h"

#include <cmath>
#include <cstdio>

#include "engine/core/plan/planner.h"

namespace podium::core {

namespace {

std::optional<double> positive_member(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v <= 0) return std::nullopt;
  return v;
}

// Three significant digits, as a person reads a throughput ("0.577", "346", "1.15e+03").
std::string three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

std::optional<PlanExpectation> expectation_from_plan(const nlohmann::json& plan) {
  if (!plan.is_object()) return std::nullopt;
  auto it = plan.find("estimate");
  if (it == plan.end()) return std::nullopt;
  const auto tflops = positive_member(*it, "tflops_per_device_per_step");
  const auto seconds = positive_member(*it, "step_seconds");
  if (!tflops || !seconds) return std::nullopt;
  const double expected = *tflops / *seconds;
  if (!std::isfinite(expected) || expected <= 0) return std::nullopt;
  return PlanExpectation{expected, "plan"};
}

std::optional<PlanExpectation> default_expectation(const AcceleratorType& accelerator,
                                                   const ModelSpec* model) {
  if (model == nullptr || accelerator.kind == AcceleratorKind::cpu ||
      !(accelerator.peak_tflops_per_device > 0) ||
      !std::isfinite(accelerator.peak_tflops_per_device))
    return std::nullopt;
  return PlanExpectation{
      default_efficiency(accelerator.kind, model->is_moe()) * accelerator.peak_tflops_per_device,
      "planner_default"};
}

std::optional<PlanCheck> check_plan_against_actual(std::optional<double> measured_tflops_per_device,
                                                   std::size_t steady_steps,
                                                   const std::optional<PlanExpectation>& expected,
                                                   const PlanCheckOptions& options) {
  if (!(options.underperforming_ratio > 0) || !std::isfinite(options.underperforming_ratio))
    return std::nullopt;  // off
  if (!expected || !(expected->tflops_per_device > 0) ||
      !std::isfinite(expected->tflops_per_device))
    return std::nullopt;
  if (!measured_tflops_per_device || !std::isfinite(*measured_tflops_per_device) ||
      *measured_tflops_per_device < 0)
    return std::nullopt;
  if (steady_steps < options.min_steady_steps || steady_steps == 0) return std::nullopt;
  PlanCheck c;
  c.tflops_per_device = *measured_tflops_per_device;
  c.expected_tflops_per_device = expected->tflops_per_device;
  c.ratio = c.tflops_per_device / c.expected_tflops_per_device;
  c.threshold = options.underperforming_ratio;
  c.steady_steps = steady_steps;
  c.expected_basis = expected->basis;
  c.underperforming = c.ratio < c.threshold;
  return c;
}

nlohmann::json to_json(const PlanCheck& c) {
  return {{"verdict", c.underperforming ? "underperforming" : "as_planned"},
          {"tflops_per_device", c.tflops_per_device},
          {"expected_tflops_per_device", c.expected_tflops_per_device},
          {"ratio", c.ratio},
          {"threshold", c.threshold},
          {"steady_steps", c.steady_steps},
          {"expected_basis", c.expected_basis}};
}

std::string describe(const PlanCheck& c) {
  return std::string(c.underperforming ? "underperforming" : "as planned") + ": " +
         three_digits(c.tflops_per_device) + " TFLOP/s/device measured, " +
         three_digits(c.expected_tflops_per_device) + " expected by the plan (" +
         three_digits(c.ratio) + " of it, over " + std::to_string(c.steady_steps) +
         " steady steps)";
}

}  // namespace podium::core
