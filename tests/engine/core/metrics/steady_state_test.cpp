#include "engine/core/metrics/steady_state.h"

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

std::map<std::int64_t, ExclusionReason> reasons(const SteadyState& s) {
  std::map<std::int64_t, ExclusionReason> out;
  for (const ExcludedStep& e : s.excluded) out[e.step] = e.reason;
  return out;
}

// A v5p-like run: 764.67 TFLOPs per step, about 5.667 s per step (domain brief §6).
std::vector<StepSample> v5p_run() {
  std::vector<StepSample> v;
  v.push_back({0, 301.2, 2.54, std::nullopt});  // compile
  v.push_back({1, 11.3, 67.7, std::nullopt});   // warm-up
  v.push_back({2, 6.4, 119.5, std::nullopt});   // warm-up
  const double noise[] = {0.003, -0.002, 0.001, 0.0, -0.004, 0.002, 0.001, -0.001, 0.0, 0.004};
  for (int step = 3; step < 23; ++step) {
    const double secs = 5.667 + noise[step % 10];
    v.push_back({step, secs, 764.67 / secs, 2048.0 * 24 / secs});
  }
  return v;
}

TEST(SteadyStateTest, DropsCompileAndWarmUpAndAnOutlier) {
  auto samples = v5p_run();
  samples[12].seconds = 9.5;  // step 12: a synchronous checkpoint save
  auto s = compute_steady_state(samples);
  EXPECT_EQ(s.samples, 23u);
  EXPECT_EQ(s.kept_count, 19u);
  auto r = reasons(s);
  EXPECT_EQ(r.at(0), ExclusionReason::compile);
  EXPECT_EQ(r.at(1), ExclusionReason::warm_up);
  EXPECT_EQ(r.at(2), ExclusionReason::warm_up);
  EXPECT_EQ(r.at(12), ExclusionReason::outlier);
  EXPECT_EQ(r.size(), 4u);
  ASSERT_EQ(s.kept_ranges.size(), 2u);
  EXPECT_EQ(s.kept_ranges[0].first, 3);
  EXPECT_EQ(s.kept_ranges[0].last, 11);
  EXPECT_EQ(s.kept_ranges[1].first, 13);
  EXPECT_EQ(s.kept_ranges[1].last, 22);
  EXPECT_NEAR(*s.median_seconds, 5.667, 0.002);
  EXPECT_NEAR(*s.mean_seconds, 5.667, 0.002);
  EXPECT_LE(*s.max_seconds, 5.672);
}

TEST(SteadyStateTest, ExcludesAsyncDispatchArtefactPair) {
  std::vector<StepSample> v;
  v.push_back({0, 74.0, std::nullopt, std::nullopt});
  for (int step = 1; step <= 30; ++step) v.push_back({step, 0.693 + 0.001 * (step % 3), {}, {}});
  v[15].seconds = 0.05;   // host returned early
  v[16].seconds = 1.391;  // next step paid for both
  auto s = compute_steady_state(v);
  auto r = reasons(s);
  EXPECT_EQ(r.at(15), ExclusionReason::dispatch_artifact);
  EXPECT_EQ(r.at(16), ExclusionReason::dispatch_artifact);
  EXPECT_EQ(s.kept_count, 30u - 2u - 2u);  // minus warm-up 1-2 and the pair
  EXPECT_NEAR(*s.median_seconds, 0.694, 0.001);
  // A lone fast step without the slow partner is just an outlier.
  v[16].seconds = 0.694;
  auto lone = compute_steady_state(v);
  EXPECT_EQ(reasons(lone).at(15), ExclusionReason::outlier);
  EXPECT_EQ(reasons(lone).count(16), 0u);
}

TEST(SteadyStateTest, DropsTheSlowFinalStepOfADataExhaustedRun) {
  auto samples = v5p_run();
  samples.push_back({23, 14.2, 53.8, std::nullopt});
  SteadyStateOptions opt;
  opt.last_step_data_exhausted = true;
  auto s = compute_steady_state(samples, opt);
  EXPECT_EQ(reasons(s).at(23), ExclusionReason::data_exhausted);
  EXPECT_EQ(s.kept_count, 20u);
  // Even a final step that looks normal is not trusted when the data ran out.
  samples.back().seconds = 5.667;
  EXPECT_EQ(reasons(compute_steady_state(samples, opt)).at(23), ExclusionReason::data_exhausted);
  // Without the flag, a slow last step is only an outlier.
  samples.back().seconds = 14.2;
  EXPECT_EQ(reasons(compute_steady_state(samples)).at(23), ExclusionReason::outlier);
}

TEST(SteadyStateTest, MadOfZeroUsesARelativeFloor) {
  std::vector<StepSample> v = {{0, 60.0, {}, {}}, {1, 2.0, {}, {}}, {2, 1.0, {}, {}}};
  for (int step = 3; step < 13; ++step) v.push_back({step, 0.693, {}, {}});
  v.push_back({13, 0.694, {}, {}});  // 0.14% off: kept
  v.push_back({14, 0.800, {}, {}});  // 15% off: outlier
  auto s = compute_steady_state(v);
  EXPECT_DOUBLE_EQ(*s.scaled_mad_seconds, 0.0);
  EXPECT_EQ(reasons(s).count(13), 0u);
  EXPECT_EQ(reasons(s).at(14), ExclusionReason::outlier);
  EXPECT_EQ(s.kept_count, 11u);
  EXPECT_DOUBLE_EQ(*s.median_seconds, 0.693);
}

TEST(SteadyStateTest, EveryRestartCompilesAgain) {
  std::vector<StepSample> v;
  for (int step = 0; step < 10; ++step) v.push_back({step, step == 0 ? 120.0 : 1.0, {}, {}});
  for (int step = 8; step < 20; ++step) {
    v.push_back({step, step == 8 ? 130.0 : (step < 11 ? 1.4 : 1.0), {}, {}});
  }
  SteadyStateOptions opt;
  opt.attempt_start_steps = {8};
  auto s = compute_steady_state(v, opt);
  auto r = reasons(s);
  EXPECT_EQ(r.at(0), ExclusionReason::compile);
  EXPECT_EQ(r.at(8), ExclusionReason::compile);  // the later sample of step 8 won
  EXPECT_EQ(r.at(9), ExclusionReason::warm_up);
  EXPECT_EQ(r.at(10), ExclusionReason::warm_up);
  EXPECT_EQ(s.kept_count, 5u + 9u);  // steps 3-7 and 11-19
  EXPECT_DOUBLE_EQ(*s.median_seconds, 1.0);
}

TEST(SteadyStateTest, ThroughputAndMfuPerDevice) {
  SteadyStateOptions opt;
  opt.peak_tflops_per_device = 459.0;  // v5p
  auto s = compute_steady_state(v5p_run(), opt);
  EXPECT_NEAR(*s.tflops_per_device, 134.9, 0.1);
  EXPECT_NEAR(*s.mfu, 0.294, 0.001);
  EXPECT_NEAR(*s.tokens_per_second_per_device, 2048.0 * 24 / 5.667, 2.0);

  // Without logged TFLOP/s the figure comes from TFLOPs per step / median step time.
  auto bare = v5p_run();
  for (auto& x : bare) x.tflops_per_device.reset();
  SteadyStateOptions derived;
  derived.tflops_per_step_per_device = 764.67;
  derived.tokens_per_step_per_device = 4096.0;
  derived.peak_tflops_per_device = 1153.5;  // tpu7x per device: half the chip's 2307
  auto d = compute_steady_state(bare, derived);
  EXPECT_NEAR(*d.tflops_per_device, 764.67 / *d.median_seconds, 1e-9);
  EXPECT_NEAR(*d.mfu, *d.tflops_per_device / 1153.5, 1e-12);
  // Logged tokens/s win over the derived figure.
  EXPECT_NEAR(*d.tokens_per_second_per_device, 2048.0 * 24 / 5.667, 2.0);

  auto no_peak = compute_steady_state(v5p_run());
  EXPECT_FALSE(no_peak.mfu.has_value());
}

TEST(SteadyStateTest, DegenerateInputs) {
  auto empty = compute_steady_state({});
  EXPECT_EQ(empty.samples, 0u);
  EXPECT_EQ(empty.kept_count, 0u);
  EXPECT_FALSE(empty.median_seconds.has_value());

  auto only_compile = compute_steady_state({{0, 300.0, {}, {}}, {1, 2.0, {}, {}}});
  EXPECT_EQ(only_compile.kept_count, 0u);
  EXPECT_FALSE(only_compile.median_seconds.has_value());
  EXPECT_EQ(only_compile.excluded.size(), 2u);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<StepSample> v = {{0, 300.0, {}, {}}, {1, 2.0, {}, {}}, {2, 1.5, {}, {}},
                               {3, nan, {}, {}},   {4, 0.0, {}, {}}, {5, -1.0, {}, {}},
                               {6, 1.0, {}, {}},   {7, 1.0, {}, {}}};
  auto s = compute_steady_state(v);
  auto r = reasons(s);
  EXPECT_EQ(r.at(3), ExclusionReason::invalid);
  EXPECT_EQ(r.at(4), ExclusionReason::invalid);
  EXPECT_EQ(r.at(5), ExclusionReason::invalid);
  EXPECT_EQ(s.kept_count, 2u);
  // JSON never carries NaN.
  EXPECT_NO_THROW((void)to_json(s).dump());
  EXPECT_TRUE(to_json(s)["excluded"][3]["seconds"].is_null());
}

TEST(SteadyStateTest, LaterSampleOfAStepWinsAndOrderDoesNotMatter) {
  auto samples = v5p_run();
  std::vector<StepSample> shuffled(samples.rbegin(), samples.rend());
  auto a = compute_steady_state(samples);
  auto b = compute_steady_state(shuffled);
  EXPECT_EQ(a.kept_count, b.kept_count);
  EXPECT_DOUBLE_EQ(*a.median_seconds, *b.median_seconds);
  samples.push_back({10, 42.0, {}, {}});  // step 10 again, now slow
  EXPECT_EQ(reasons(compute_steady_state(samples)).at(10), ExclusionReason::outlier);
}

TEST(SteadyStateTest, JsonShape) {
  SteadyStateOptions opt;
  opt.peak_tflops_per_device = 459.0;
  auto j = to_json(compute_steady_state(v5p_run(), opt));
  EXPECT_EQ(j["samples"], 23);
  EXPECT_EQ(j["kept_count"], 20);
  EXPECT_EQ(j["kept_ranges"], nlohmann::json::parse("[[3,22]]"));
  EXPECT_EQ(j["excluded_counts"]["compile"], 1);
  EXPECT_EQ(j["excluded_counts"]["warm_up"], 2);
  EXPECT_EQ(j["excluded"][0]["reason"], "compile");
  EXPECT_TRUE(j["band"].is_array());
  EXPECT_TRUE(j["mfu"].is_number());
}

TEST(SteadyStateTest, MedianHelper) {
  EXPECT_FALSE(median_of({}).has_value());
  EXPECT_DOUBLE_EQ(*median_of({3.0}), 3.0);
  EXPECT_DOUBLE_EQ(*median_of({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(*median_of({5.0, 1.0, 3.0}), 3.0);
}

}  // namespace
}  // namespace podium::core
