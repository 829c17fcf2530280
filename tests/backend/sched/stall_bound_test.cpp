#include "backend/sched/stall_bound.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::sched {
namespace {

using ::testing::HasSubstr;

StallSettings settings() {
  StallSettings s;
  s.floor_seconds = 5;
  s.step_factor = 10;
  s.compile_seconds = 1800;
  s.compile_factor = 3;
  return s;
}

// An attempt that started running at t=1000 and logged steps first..last of `seconds` each
// (step `first` compiled for `compile` seconds), the last one stored at `last_at`.
StallInput stepping(std::int64_t first, std::int64_t last, double seconds, double last_at,
                    double compile = 60) {
  StallInput in;
  in.running_since = 1000;
  in.last_step = last;
  in.last_step_at = last_at;
  for (std::int64_t s = first; s <= last; ++s)
    in.recent_steps.push_back({s, s == first ? compile : seconds});
  return in;
}

TEST(StallBoundTest, KTimesTheSteadyStepTimeAboveTheFloor) {
  StallInput in = stepping(0, 19, 2.0, 2000);
  in.now = 2020;  // exactly the bound: not yet
  EXPECT_FALSE(check_stall(in, settings()).has_value());
  in.now = 2020.5;
  auto v = check_stall(in, settings());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->bound.phase, StallPhase::steps);
  EXPECT_DOUBLE_EQ(v->bound.seconds, 20);
  EXPECT_EQ(v->bound.basis, "steady_step_time");
  EXPECT_EQ(v->bound.steady_step_seconds, 2.0);
  // Compile step and two warm-up steps dropped.
  EXPECT_EQ(v->bound.steady_steps, 17u);
  EXPECT_DOUBLE_EQ(v->silence_seconds, 20.5);
  EXPECT_EQ(v->last_step, 19);
  EXPECT_EQ(describe(*v),
            "stalled: no step for 20 s after step 19 (bound 20 s: 10 x steady step 2.0 s (17 "
            "steps))");
}

TEST(StallBoundTest, TheCompileStepDoesNotWidenTheBound) {
  // Step 0 took 600 s (XLA compile): the bound still follows the 2 s steps.
  StallInput in = stepping(0, 30, 2.0, 2000, 600);
  in.now = 2021;
  auto v = check_stall(in, settings());
  ASSERT_TRUE(v.has_value());
  EXPECT_DOUBLE_EQ(v->bound.seconds, 20);
}

TEST(StallBoundTest, SilenceCountsFromTheLatestStepNotTheStart) {
  StallInput in = stepping(0, 19, 2.0, 5000);
  in.now = 5010;  // 4010 s after the attempt started, 10 s after its latest step
  EXPECT_FALSE(check_stall(in, settings()).has_value());
}

TEST(StallBoundTest, TheFloorHoldsFastSteps) {
  StallInput in = stepping(0, 40, 0.1, 2000);
  auto b = stall_bound(in, settings());
  ASSERT_TRUE(b.has_value());
  EXPECT_DOUBLE_EQ(b->seconds, 5);
  EXPECT_EQ(b->basis, "floor");
  EXPECT_EQ(b->derivation, "stall_seconds 5.0 s (above 10 x steady step 0.1 s)");
  in.now = 2004;
  EXPECT_FALSE(check_stall(in, settings()).has_value());
  in.now = 2005.1;
  EXPECT_TRUE(check_stall(in, settings()).has_value());
}

TEST(StallBoundTest, TheRunsStallSecondsOverridesTheServersFloor) {
  StallInput in = stepping(0, 40, 2.0, 2000);
  in.run_stall_seconds = 90;
  auto b = stall_bound(in, settings());
  ASSERT_TRUE(b.has_value());
  EXPECT_DOUBLE_EQ(b->seconds, 90);
  EXPECT_DOUBLE_EQ(b->floor_seconds, 90);
  EXPECT_EQ(b->basis, "floor");
  // Nonsense values are ignored.
  in.run_stall_seconds = -3;
  EXPECT_DOUBLE_EQ(stall_bound(in, settings())->seconds, 20);
  in.run_stall_seconds = 0;
  EXPECT_DOUBLE_EQ(stall_bound(in, settings())->seconds, 20);
}

TEST(StallBoundTest, TooFewStepsForASteadyTimeUseTheFloor) {
  StallInput in = stepping(0, 2, 2.0, 2000);  // compile + 2 warm-up steps
  auto b = stall_bound(in, settings());
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(b->steady_step_seconds.has_value());
  EXPECT_DOUBLE_EQ(b->seconds, 5);
  EXPECT_EQ(b->derivation, "stall_seconds 5.0 s (no steady step time yet)");
}

TEST(StallBoundTest, FirstStepWithoutHistoryUsesTheServerDefault) {
  StallInput in;
  in.running_since = 1000;
  in.now = 2800;
  EXPECT_FALSE(check_stall(in, settings()).has_value());
  in.now = 2801;
  auto v = check_stall(in, settings());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->bound.phase, StallPhase::first_step);
  EXPECT_EQ(v->bound.basis, "server_default");
  EXPECT_DOUBLE_EQ(v->bound.seconds, 1800);
  EXPECT_DOUBLE_EQ(v->silence_seconds, 1801);
  EXPECT_FALSE(v->last_step.has_value());
  EXPECT_THAT(describe(*v), HasSubstr("no first step 1801 s after start"));
}

TEST(StallBoundTest, FirstStepLearnsFromTheRunsEarlierAttemptsFirst) {
  StallInput in;
  in.running_since = 1000;
  in.run_first_step_seconds = {40, 60};
  in.model_first_step_seconds = {500};  // not used: the run's own history wins
  auto b = stall_bound(in, settings());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->basis, "run_history");
  EXPECT_DOUBLE_EQ(b->seconds, 180);
  EXPECT_EQ(b->history_seconds, 60.0);
  EXPECT_EQ(b->history_attempts, 2u);
  EXPECT_EQ(b->derivation,
            "compile allowance 3 x 60 s, the longest time to the first step of 2 attempt(s) of "
            "this run's earlier attempts");
  in.now = 1181;
  EXPECT_TRUE(check_stall(in, settings()).has_value());
}

TEST(StallBoundTest, FirstStepLearnsFromTheSameModelWhenTheRunHasNoHistory) {
  StallInput in;
  in.running_since = 1000;
  in.run_first_step_seconds = {-1, 0};  // nothing valid
  in.model_first_step_seconds = {100, 80};
  auto b = stall_bound(in, settings());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->basis, "model_history");
  EXPECT_DOUBLE_EQ(b->seconds, 300);
}

TEST(StallBoundTest, TheFloorHoldsAShortCompileHistory) {
  StallInput in;
  in.running_since = 1000;
  in.run_first_step_seconds = {1};
  in.run_stall_seconds = 60;
  auto b = stall_bound(in, settings());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->basis, "floor");
  EXPECT_DOUBLE_EQ(b->seconds, 60);
}

TEST(StallBoundTest, ACommandThatNeverLoggedStepsIsNotJudgedBeforeItsFirstStep) {
  StallInput in;
  in.logs_steps = false;
  in.running_since = 0;
  in.now = 1e6;
  EXPECT_FALSE(stall_bound(in, settings()).has_value());
  EXPECT_FALSE(check_stall(in, settings()).has_value());
  // With a history of steps (same model), it is.
  in.model_first_step_seconds = {10};
  EXPECT_TRUE(check_stall(in, settings()).has_value());
  // Once it logs steps, always.
  StallInput stepped = stepping(0, 10, 1, 100);
  stepped.logs_steps = false;
  stepped.now = 1000;
  EXPECT_TRUE(check_stall(stepped, settings()).has_value());
}

TEST(StallBoundTest, Json) {
  StallInput in = stepping(0, 19, 2.0, 2000);
  in.now = 2042.04;
  auto v = check_stall(in, settings());
  ASSERT_TRUE(v.has_value());
  auto j = to_json(*v);
  EXPECT_EQ(j["phase"], "steps");
  EXPECT_EQ(j["last_step"], 19);
  EXPECT_DOUBLE_EQ(j["silence_seconds"].get<double>(), 42.0);
  EXPECT_DOUBLE_EQ(j["bound_seconds"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(j["floor_seconds"].get<double>(), 5.0);
  EXPECT_EQ(j["basis"], "steady_step_time");
  EXPECT_DOUBLE_EQ(j["steady_step_seconds"].get<double>(), 2.0);
  EXPECT_EQ(j["steady_steps"], 17);
  EXPECT_TRUE(j["history_seconds"].is_null());
  EXPECT_EQ(j["derivation"], "10 x steady step 2.0 s (17 steps)");
}

}  // namespace
}  // namespace podium::sched
