#pragma once
// Plan against actual (issue 26 point 3): once a run's step time is steady, its measured
// TFLOP/s/device is set against what the planner expected; far below it, the run is
// "underperforming" and says so with both figures. Pure: no I/O.
//
// The expectation is the planner's throughput estimate (planner.h ThroughputEstimate): the
// plan's TFLOPs per step per device over its estimated step time, which is its assumed (or
// history-calibrated) MFU times the accelerator's per-device peak. A run stored without a plan
// (imported from a log) gets what the planner would have assumed for it: its default MFU for
// the model's kind (dense or MoE) on the accelerator's kind. No expectation (CPU clusters: no
// peak; a model the catalog does not know: no FLOPs, no MoE-ness) means nothing is said.
//
// The threshold. The default flags a run below 0.1 of the expectation, a factor of ten:
//  - the expectation itself is uncertain by a factor of 2-4: the planner assumes 40 % MFU
//    (dense) and 30 % (MoE), published well-tuned MaxText runs reach 55-65 %, and real first
//    runs of a configuration sit well below; the seed's ALModel run on tpu7x 2x4x4 (fsdp 16 x
//    tensor 4, muon) ran at 8.6 % MFU, 0.29 of the MoE expectation, and was a healthy run;
//  - what a factor of ten or more reveals is structural, not tuning: a slice far too small
//    (the seed's tpu7x 2x2x1 run: 0.05 % MFU, 0.0017 of the expectation), JAX silently on CPU
//    (TPU already in use), a host-bound input pipeline, a mesh that puts collectives on DCN.
// The server's configuration sets another ratio (summaries.underperforming_ratio, 0 = off).
//
// Steady means at least kMinSteadyStepsForPlanCheck steps survived the steady-state filter
// (steady_state.h: compile, warm-up, dispatch artefacts and outliers excluded), the same minimum
// history calibration asks of a run (backend/api/plan_history.cpp).

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/model/model_catalog.h"
#include "engine/core/topology/accelerator.h"

namespace podium::core {

inline constexpr double kDefaultUnderperformingRatio = 0.1;
inline constexpr std::size_t kMinSteadyStepsForPlanCheck = 5;

struct PlanCheckOptions {
  // Underperforming below this fraction of the expectation; 0 turns the check off.
  double underperforming_ratio = kDefaultUnderperformingRatio;
  std::size_t min_steady_steps = kMinSteadyStepsForPlanCheck;
};

// The planner's expected TFLOP/s/device, and where it comes from.
struct PlanExpectation {
  double tflops_per_device = 0;
  std::string basis;  // "plan" (the run's stored plan) or "planner_default" (no plan stored)
};

// From a stored plan JSON (planner.h to_json): estimate.tflops_per_device_per_step /
// estimate.step_seconds. nullopt when the plan has no estimate (CPU, unknown model) or its
// figures are not positive and finite.
std::optional<PlanExpectation> expectation_from_plan(const nlohmann::json& plan);

// What the planner would assume for a run without a plan: default_efficiency(kind, MoE) x the
// per-device peak. nullopt without a model or on an accelerator without a peak (CPU).
std::optional<PlanExpectation> default_expectation(const AcceleratorType& accelerator,
                                                   const ModelSpec* model);

struct PlanCheck {
  double tflops_per_device = 0;           // measured: steady-state median
  double expected_tflops_per_device = 0;  // the planner's
  double ratio = 0;                       // measured / expected
  double threshold = 0;                   // underperforming below this ratio
  std::size_t steady_steps = 0;           // what the measured figure rests on
  std::string expected_basis;             // PlanExpectation::basis
  bool underperforming = false;
};

// nullopt when there is nothing to say: the check is off, no expectation, no measured figure,
// or fewer steady steps than options.min_steady_steps (not steady yet).
std::optional<PlanCheck> check_plan_against_actual(std::optional<double> measured_tflops_per_device,
                                                   std::size_t steady_steps,
                                                   const std::optional<PlanExpectation>& expected,
                                                   const PlanCheckOptions& options = {});

// {"verdict":"underperforming"|"as_planned","tflops_per_device","expected_tflops_per_device",
//  "ratio","threshold","steady_steps","expected_basis"}
nlohmann::json to_json(const PlanCheck& check);

// One line for a run's timeline: "underperforming: 0.577 TFLOP/s/device measured, 346
// expected by the plan (0.00167 of it)".
std::string describe(const PlanCheck& check);

}  // namespace podium::core
