#include "engine/core/metrics/downsample.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

std::vector<SeriesPoint> noisy_series(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.05);
  std::vector<SeriesPoint> v;
  for (std::int64_t s = 0; s < n; ++s) {
    v.push_back({s, 10.0 / (1.0 + static_cast<double>(s) / 100.0) + noise(rng)});
  }
  return v;
}

bool has_step(const std::vector<SeriesPoint>& v, std::int64_t step) {
  return std::any_of(v.begin(), v.end(), [&](const SeriesPoint& p) { return p.step == step; });
}

TEST(DownsampleTest, ShortSeriesComesBackSortedAndDeduplicated) {
  auto out = downsample({{3, 1.0}, {1, 2.0}, {2, 3.0}, {1, 4.0}}, 10);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].step, 1);
  EXPECT_DOUBLE_EQ(out[0].value, 4.0);  // later value of step 1
  EXPECT_EQ(out[2].step, 3);
}

TEST(DownsampleTest, KeepsFirstLastAndEveryBucketsExtremes) {
  auto v = noisy_series(10000, 7);
  v[5000].value = 99.0;   // a spike
  v[7000].value = -99.0;  // a dip
  auto out = downsample(v, 200);
  EXPECT_LE(out.size(), 200u);
  EXPECT_GT(out.size(), 150u);
  EXPECT_EQ(out.front().step, 0);
  EXPECT_EQ(out.back().step, 9999);
  EXPECT_TRUE(has_step(out, 5000));
  EXPECT_TRUE(has_step(out, 7000));
  EXPECT_TRUE(
      std::is_sorted(out.begin(), out.end(),
                     [](const SeriesPoint& a, const SeriesPoint& b) { return a.step < b.step; }));
  // The global min and max always survive.
  auto [mn, mx] = std::minmax_element(
      v.begin(), v.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
  EXPECT_TRUE(has_step(out, mn->step));
  EXPECT_TRUE(has_step(out, mx->step));
  // Deterministic.
  auto again = downsample(v, 200);
  ASSERT_EQ(again.size(), out.size());
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(again[i].step, out[i].step);
}

TEST(DownsampleTest, StepsAtTheEndsOfTheInt64RangeAreBucketedToo) {
  // A hand-made upload may carry any int64 step: a span wider than 64 bits of offset x bucket
  // count is bucketed (the slow path), every bucket's extremes kept, first and last too.
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  const std::int64_t hi = std::numeric_limits<std::int64_t>::max();
  std::vector<SeriesPoint> v;
  const std::uint64_t stride = std::numeric_limits<std::uint64_t>::max() / 101;
  for (std::uint64_t i = 0; i < 100; ++i)  // lo + i * stride, in modular arithmetic (C++20)
    v.push_back({static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + i * stride),
                 static_cast<double>(i % 7)});
  v.push_back({hi, 1.0});
  auto out = downsample(v, 20);
  EXPECT_LE(out.size(), 20u);
  EXPECT_GT(out.size(), 10u);
  EXPECT_EQ(out.front().step, lo);
  EXPECT_EQ(out.back().step, hi);
  // Evenly spread steps, one extreme pair per bucket: the kept steps cover the whole range.
  EXPECT_TRUE(
      std::is_sorted(out.begin(), out.end(),
                     [](const SeriesPoint& a, const SeriesPoint& b) { return a.step < b.step; }));
  EXPECT_GT(out[out.size() / 2].step, lo / 2);
  EXPECT_LT(out[out.size() / 2].step, hi / 2);
}

TEST(DownsampleTest, SmallBudgets) {
  auto v = noisy_series(100, 1);
  EXPECT_TRUE(downsample(v, 0).empty());
  ASSERT_EQ(downsample(v, 1).size(), 1u);
  EXPECT_EQ(downsample(v, 1)[0].step, 0);
  auto two = downsample(v, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].step, 99);
  EXPECT_LE(downsample(v, 3).size(), 3u);
  EXPECT_LE(downsample(v, 4).size(), 4u);
}

TEST(DownsampleTest, NanStaysVisible) {
  auto v = noisy_series(1000, 3);
  v[500].value = std::numeric_limits<double>::quiet_NaN();
  auto out = downsample(v, 50);
  EXPECT_TRUE(has_step(out, 500));
}

TEST(DownsampleTest, BucketsFollowStepsSoGapsStayGaps) {
  // Steps 0..99 dense, then 10000..10099 dense: buckets are on step values.
  std::vector<SeriesPoint> v;
  for (int s = 0; s < 100; ++s) v.push_back({s, static_cast<double>(s % 7)});
  for (int s = 10000; s < 10100; ++s) v.push_back({s, static_cast<double>(s % 5)});
  auto out = downsample(v, 20);
  EXPECT_LE(out.size(), 20u);
  EXPECT_EQ(out.front().step, 0);
  EXPECT_EQ(out.back().step, 10099);
}

TEST(DownsampleTest, AlignedSeriesShareStepsAndUseNullForGaps) {
  std::map<std::string, std::vector<SeriesPoint>> series;
  series["loss"] = noisy_series(5000, 11);
  series["step_seconds"] = {};
  for (int s = 0; s < 5000; s += 2) series["step_seconds"].push_back({s, s == 2400 ? 30.0 : 0.7});
  series["loss"][3333].value = 50.0;
  auto out = downsample_aligned(series, 300);
  EXPECT_LE(out.steps.size(), 300u);
  EXPECT_GT(out.steps.size(), 100u);
  EXPECT_EQ(out.steps.front(), 0);
  EXPECT_EQ(out.steps.back(), 4999);
  ASSERT_EQ(out.series.at("loss").size(), out.steps.size());
  ASSERT_EQ(out.series.at("step_seconds").size(), out.steps.size());
  auto idx = [&](std::int64_t step) {
    auto it = std::find(out.steps.begin(), out.steps.end(), step);
    EXPECT_NE(it, out.steps.end()) << step;
    return static_cast<std::size_t>(it - out.steps.begin());
  };
  EXPECT_DOUBLE_EQ(*out.series.at("loss")[idx(3333)], 50.0);
  EXPECT_DOUBLE_EQ(*out.series.at("step_seconds")[idx(2400)], 30.0);
  // Step 4999 is odd: step_seconds has no value there.
  EXPECT_FALSE(out.series.at("step_seconds").back().has_value());
  EXPECT_TRUE(std::is_sorted(out.steps.begin(), out.steps.end()));

  auto j = to_json(out);
  EXPECT_EQ(j["steps"].size(), out.steps.size());
  EXPECT_TRUE(j["series"]["step_seconds"].back().is_null());
}

TEST(DownsampleTest, AlignedSmallInputsAndTooManySeries) {
  std::map<std::string, std::vector<SeriesPoint>> small = {{"a", {{1, 1.0}, {2, 2.0}}},
                                                           {"b", {{2, 5.0}, {3, 6.0}}}};
  auto out = downsample_aligned(small, 1000);
  EXPECT_EQ(out.steps, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_FALSE(out.series.at("a")[2].has_value());
  EXPECT_FALSE(out.series.at("b")[0].has_value());

  // 20 series with a budget of 10: not even one bucket per series fits, fall back to even spacing.
  std::map<std::string, std::vector<SeriesPoint>> many;
  for (int k = 0; k < 20; ++k) many["s" + std::to_string(k)] = noisy_series(1000, k + 100);
  auto spaced = downsample_aligned(many, 10);
  EXPECT_EQ(spaced.steps.size(), 10u);
  EXPECT_EQ(spaced.steps.front(), 0);
  EXPECT_EQ(spaced.steps.back(), 999);

  EXPECT_TRUE(downsample_aligned(many, 0).steps.empty());
  EXPECT_TRUE(downsample_aligned({}, 10).steps.empty());
}

TEST(DownsampleTest, NonFiniteValuesSerialiseAsNull) {
  AlignedSeries a;
  a.steps = {1, 2};
  a.series["loss"] = {std::numeric_limits<double>::quiet_NaN(), 1.0};
  auto j = to_json(a);
  EXPECT_TRUE(j["series"]["loss"][0].is_null());
  EXPECT_EQ(j["series"]["loss"][1], 1.0);
  EXPECT_NO_THROW((void)j.dump());
}

}  // namespace
}  // namespace podium::core
