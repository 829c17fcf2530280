#include "engine/core/plan/plan_vs_actual.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "engine/core/plan/planner.h"

namespace podium::core {
namespace {

AcceleratorType accelerator(const std::string& name) {
  auto parsed = parse_accelerator(name);
  EXPECT_TRUE(parsed.value.has_value()) << name;
  return parsed.value.value_or(AcceleratorType{});
}

// The seed's tpu7x 2x2x1 run: ALModel (MoE) at 0.05 % MFU, 0.577 TFLOP/s/device of the 1153.5
// a device can do, against the planner's MoE assumption (30 % MFU): flagged with both figures.
TEST(PlanVsActualTest, TheSeedsTinySliceRunIsUnderperforming) {
  const auto expected = default_expectation(accelerator("tpu7x-2x2x1"), find_model("almodel-8b"));
  ASSERT_TRUE(expected);
  EXPECT_NEAR(expected->tflops_per_device, 0.30 * 1153.5, 1e-9);
  EXPECT_EQ(expected->basis, "planner_default");
  const auto check = check_plan_against_actual(0.577, 25, expected);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->underperforming);
  EXPECT_NEAR(check->ratio, 0.577 / (0.30 * 1153.5), 1e-12);
  EXPECT_DOUBLE_EQ(check->threshold, kDefaultUnderperformingRatio);
  const auto j = to_json(*check);
  EXPECT_EQ(j["verdict"], "underperforming");
  EXPECT_DOUBLE_EQ(j["tflops_per_device"].get<double>(), 0.577);
  EXPECT_NEAR(j["expected_tflops_per_device"].get<double>(), 346.05, 1e-9);
  EXPECT_EQ(j["steady_steps"], 25);
  EXPECT_EQ(j["expected_basis"], "planner_default");
  EXPECT_EQ(describe(*check),
            "underperforming: 0.577 TFLOP/s/device measured, 346 expected by the plan (0.00167 of "
            "it, over 25 steady steps)");
}

// The seed's 2x4x4 run at 8.6 % MFU (99.4 TFLOP/s/device) is 0.29 of the MoE expectation: a
// healthy first run, not flagged by the default threshold; a stricter server flags it.
TEST(PlanVsActualTest, TheSeedsHealthyRunIsNotFlaggedByTheDefault) {
  const auto expected = default_expectation(accelerator("tpu7x-64"), find_model("almodel-8b"));
  const auto check = check_plan_against_actual(99.448, 25, expected);
  ASSERT_TRUE(check);
  EXPECT_FALSE(check->underperforming);
  EXPECT_EQ(to_json(*check)["verdict"], "as_planned");
  PlanCheckOptions strict;
  strict.underperforming_ratio = 0.5;
  EXPECT_TRUE(check_plan_against_actual(99.448, 25, expected, strict)->underperforming);
}

TEST(PlanVsActualTest, TheBoundaryIsStrictlyBelowTheThreshold) {
  const PlanExpectation expected{100.0, "plan"};
  EXPECT_FALSE(check_plan_against_actual(10.0, 5, expected)->underperforming);  // exactly 0.1
  EXPECT_TRUE(check_plan_against_actual(9.99, 5, expected)->underperforming);
  EXPECT_TRUE(check_plan_against_actual(0.0, 5, expected)->underperforming);     // logged zero
  EXPECT_FALSE(check_plan_against_actual(250.0, 5, expected)->underperforming);  // above plan
}

TEST(PlanVsActualTest, SaysNothingBeforeSteadyState) {
  const PlanExpectation expected{100.0, "plan"};
  EXPECT_FALSE(check_plan_against_actual(1.0, 4, expected));
  EXPECT_FALSE(check_plan_against_actual(1.0, 0, expected));
  PlanCheckOptions any;
  any.min_steady_steps = 0;  // even then a figure must rest on a step
  EXPECT_FALSE(check_plan_against_actual(1.0, 0, expected, any));
  EXPECT_TRUE(check_plan_against_actual(1.0, 5, expected));
}

TEST(PlanVsActualTest, SaysNothingWithoutAnExpectationOrAMeasurement) {
  // CPU cluster: no peak. Unknown model: nothing to plan with.
  EXPECT_FALSE(default_expectation(accelerator("cpu-2"), find_model("reference-tiny")));
  EXPECT_FALSE(default_expectation(accelerator("tpu7x-64"), find_model("no-such-model")));
  EXPECT_FALSE(check_plan_against_actual(1.0, 20, std::nullopt));
  const PlanExpectation expected{100.0, "plan"};
  EXPECT_FALSE(check_plan_against_actual(std::nullopt, 20, expected));
  EXPECT_FALSE(check_plan_against_actual(std::numeric_limits<double>::quiet_NaN(), 20, expected));
  EXPECT_FALSE(check_plan_against_actual(-1.0, 20, expected));
  EXPECT_FALSE(check_plan_against_actual(1.0, 20, PlanExpectation{0.0, "plan"}));
  PlanCheckOptions off;
  off.underperforming_ratio = 0;
  EXPECT_FALSE(check_plan_against_actual(1.0, 20, expected, off));
}

TEST(PlanVsActualTest, ReadsTheExpectationFromAStoredPlan) {
  // A dense model on v6e: the planner's estimate as POST /plan stores it.
  PlanInput in;
  in.spec.model = "llama3-8b";
  in.spec.per_device_batch_size = 1;
  in.spec.max_target_length = 2048;
  in.spec.steps = 10;
  in.accelerator = accelerator("v6e-8");
  const nlohmann::json plan = to_json(make_plan(in));
  const auto e = expectation_from_plan(plan);
  ASSERT_TRUE(e) << plan.dump();
  EXPECT_EQ(e->basis, "plan");
  EXPECT_NEAR(e->tflops_per_device, kDefaultMfuTpuDense * 918.0, 1e-6);

  EXPECT_FALSE(expectation_from_plan(nullptr));
  EXPECT_FALSE(expectation_from_plan({{"estimate", nullptr}}));
  EXPECT_FALSE(expectation_from_plan(
      {{"estimate", {{"tflops_per_device_per_step", 10.0}, {"step_seconds", 0}}}}));
  EXPECT_FALSE(expectation_from_plan(
      {{"estimate", {{"tflops_per_device_per_step", "10"}, {"step_seconds", 1.0}}}}));
  const auto by_hand = expectation_from_plan(
      {{"estimate", {{"tflops_per_device_per_step", 30.0}, {"step_seconds", 0.5}}}});
  ASSERT_TRUE(by_hand);
  EXPECT_DOUBLE_EQ(by_hand->tflops_per_device, 60.0);
}

}  // namespace
}  // namespace podium::core
