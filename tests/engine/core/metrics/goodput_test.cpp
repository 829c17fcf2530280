#include "engine/core/metrics/goodput.h"

#include <gtest/gtest.h>

namespace podium::core {
namespace {

// Two attempts: preempted after step 9 with the latest checkpoint at step 5, resumed at step 6.
std::vector<AttemptTimeline> preempted_and_resumed() {
  AttemptTimeline first;
  first.start = 100;
  first.waiting_for_hosts_seconds = 10;
  first.steps = {{0, 60}, {1, 3}, {2, 2}};
  for (int s = 3; s <= 9; ++s) first.steps.push_back({s, 1.0});
  first.end = 100 + 10 + 72 + 8;  // 8 s of start-up outside steps

  AttemptTimeline second;
  second.start = 250;  // 60 s after the first ended: waiting for replacement hosts
  second.waiting_for_hosts_seconds = 5;
  second.steps = {{6, 50}, {7, 2}, {8, 1.5}};
  for (int s = 9; s <= 14; ++s) second.steps.push_back({s, 1.0});
  second.checkpoint_save_seconds = 4;
  second.end = 250 + 5 + 59.5 + 5.5;
  return {first, second};
}

TEST(GoodputTest, BreaksAPreemptedRunIntoItsBuckets) {
  auto r = compute_goodput(0, 325, preempted_and_resumed());
  EXPECT_DOUBLE_EQ(r.wall_seconds, 325);
  EXPECT_DOUBLE_EQ(*r.ideal_step_seconds, 1.0);
  EXPECT_DOUBLE_EQ(r.productive_seconds, 15);
  EXPECT_EQ(r.productive_steps, 15);
  EXPECT_EQ(r.redone_step_executions, 4);
  EXPECT_DOUBLE_EQ(r.badput.compile, 59 + 49);
  EXPECT_DOUBLE_EQ(r.badput.warm_up, 2 + 1 + 1 + 0.5);
  EXPECT_DOUBLE_EQ(r.badput.lost_progress, 4);
  EXPECT_DOUBLE_EQ(r.badput.infrastructure_recovery, 10 + 60 + 5);
  EXPECT_DOUBLE_EQ(r.badput.queueing, 100);
  EXPECT_DOUBLE_EQ(r.badput.checkpoint, 4);
  EXPECT_DOUBLE_EQ(r.badput.data_loading, 0);
  EXPECT_DOUBLE_EQ(r.badput.other, 8 + 1.5 + 5);
  EXPECT_DOUBLE_EQ(r.overlap_seconds, 0);
  EXPECT_NEAR(r.productive_seconds + r.badput.total(), r.wall_seconds, 1e-9);
  EXPECT_NEAR(*r.goodput, 15.0 / 325.0, 1e-12);
}

TEST(GoodputTest, ReportedCheckpointAndDataTimeComeOutOfSlowStepsFirst) {
  AttemptTimeline a;
  a.start = 0;
  a.steps = {{0, 10}, {1, 1}, {2, 1}, {3, 1}, {4, 3.5}, {5, 1}};
  a.checkpoint_save_seconds = 2;  // the save inflated step 4 (sync save)
  a.data_loading_seconds = 0.25;  // rest of step 4's excess
  a.end = 17.5 + 1.0;             // 1 s outside the steps
  GoodputOptions opt;
  opt.ideal_step_seconds = 1.0;
  auto r = compute_goodput(0, a.end, {a}, opt);
  EXPECT_DOUBLE_EQ(r.badput.checkpoint, 2);
  EXPECT_DOUBLE_EQ(r.badput.data_loading, 0.25);
  EXPECT_DOUBLE_EQ(r.badput.other, 0.25 + 1.0);
  EXPECT_DOUBLE_EQ(r.badput.compile, 9);
  EXPECT_DOUBLE_EQ(r.productive_seconds, 6);
  EXPECT_NEAR(r.productive_seconds + r.badput.total(), r.wall_seconds, 1e-9);
}

TEST(GoodputTest, AsynchronousCheckpointTimeThatOverlappedStepsCostsNothing) {
  AttemptTimeline a;
  a.start = 0;
  a.steps = {{0, 5}, {1, 1}, {2, 1}, {3, 1}, {4, 1}};
  a.checkpoint_save_seconds = 30;  // async: ran beside the steps
  a.end = 9;
  auto r = compute_goodput(0, 9, {a});
  EXPECT_DOUBLE_EQ(r.badput.checkpoint, 0);
  EXPECT_DOUBLE_EQ(r.productive_seconds, 5);
  EXPECT_NEAR(*r.goodput, 5.0 / 9.0, 1e-12);
}

TEST(GoodputTest, NeverStartedRunIsAllQueueing) {
  auto r = compute_goodput(1000, 1600, {});
  EXPECT_DOUBLE_EQ(r.badput.queueing, 600);
  EXPECT_DOUBLE_EQ(*r.goodput, 0);
  EXPECT_FALSE(r.ideal_step_seconds.has_value());
  auto zero = compute_goodput(5, 5, {});
  EXPECT_FALSE(zero.goodput.has_value());
}

TEST(GoodputTest, OnlyCompileStepsWithoutIdealAreAllOverhead) {
  AttemptTimeline a;
  a.start = 0;
  a.steps = {{0, 100}};
  a.end = 110;
  auto r = compute_goodput(0, 110, {a});
  EXPECT_FALSE(r.ideal_step_seconds.has_value());
  EXPECT_DOUBLE_EQ(r.badput.compile, 100);
  EXPECT_DOUBLE_EQ(r.productive_seconds, 0);
  EXPECT_DOUBLE_EQ(r.badput.other, 10);
}

TEST(GoodputTest, InconsistentInputsShowAsOverlap) {
  AttemptTimeline a;
  a.start = 0;
  a.end = 5;
  a.steps = {{0, 20}, {1, 1}, {2, 1}, {3, 1}};  // 23 s of steps in a 5 s attempt
  auto r = compute_goodput(0, 5, {a});
  EXPECT_GT(r.overlap_seconds, 0);
  EXPECT_NEAR(r.productive_seconds + r.badput.total() - r.overlap_seconds, r.wall_seconds, 1e-9);
}

TEST(GoodputTest, JsonShape) {
  auto j = to_json(compute_goodput(0, 325, preempted_and_resumed()));
  EXPECT_EQ(j["wall_seconds"], 325.0);
  EXPECT_EQ(j["productive_steps"], 15);
  for (const char* key : {"compile", "warm_up", "data_loading", "checkpoint", "lost_progress",
                          "infrastructure_recovery", "queueing", "other"}) {
    EXPECT_TRUE(j["badput"][key].is_number()) << key;
  }
  EXPECT_TRUE(j["goodput"].is_number());
}

}  // namespace
}  // namespace podium::core
