// A run's peak HBM from real-format log lines, and which source each figure comes from.
#include "engine/core/plan/hbm_peak.h"

#include <gtest/gtest.h>

namespace podium::core {
namespace {

TEST(HbmPeak, SizesInXlaUnits) {
  EXPECT_DOUBLE_EQ(*parse_hbm_size("214.45G"), 214.45);
  EXPECT_DOUBLE_EQ(*parse_hbm_size("94.75 GiB"), 94.75);
  EXPECT_DOUBLE_EQ(*parse_hbm_size("512.00M"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_hbm_size("1.5T"), 1536);
  EXPECT_FALSE(parse_hbm_size("G"));
  EXPECT_FALSE(parse_hbm_size("12"));
  EXPECT_FALSE(parse_hbm_size("12Q"));
}

TEST(HbmPeak, OutOfMemoryRequirementVariants) {
  // XLA:TPU at compile time (the domain brief's ALModel b4/s8192 and b1/s8192 runs).
  auto f = parse_oom_requirement(
      "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space "
      "hbm. Used 214.45G of 94.75G hbm. Exceeded hbm capacity by 119.70G.");
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->gib, 214.45);
  EXPECT_DOUBLE_EQ(*f->limit_gib, 94.75);
  EXPECT_EQ(f->source, "oom_required");
  // Upper-case memory space and MiB units.
  f = parse_oom_requirement(
      "Ran out of memory in memory space HBM. Used 16896.00M of 15.75G hbm. Exceeded hbm "
      "capacity by 0.75G.");
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->gib, 16.5);
  // The breakdown XLA prints after it.
  f = parse_oom_requirement("Total hbm usage >= 114.90G:");
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->gib, 114.90);
  EXPECT_FALSE(f->limit_gib);
  // libtpu 0.0.42's compile-time wording (a v5e compile from a CPU host, jax 0.10.2).
  f = parse_oom_requirement(
      "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory "
      "required for HLO temporaries (20.66G) exceeds available HBM (15.75G).");
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->gib, 20.66);
  EXPECT_DOUBLE_EQ(*f->limit_gib, 15.75);
  EXPECT_EQ(f->source, "oom_required");
  // A runtime allocation failure names no requirement for the whole program.
  EXPECT_FALSE(
      parse_oom_requirement("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.23GiB."));
  EXPECT_FALSE(parse_oom_requirement("Ran out of memory in memory space hbm. Used lots"));
}

TEST(HbmPeak, MemstatsHeadersSayWhatAFigureIs) {
  EXPECT_EQ(memstats_source("After params initialized"), "params_only");
  EXPECT_EQ(memstats_source("After first optimizer step"), "memstats_after_step");
  EXPECT_EQ(memstats_source("After training"), "memstats_after_step");
  EXPECT_EQ(memstats_source(""), "memstats");
}

TEST(HbmPeak, ParamsInitializedIsTheFootprintNotThePeak) {
  HbmPeakTracker t;
  t.feed_text(
      "Memstats: After params initialized:\n"
      "\tUsing (GB) 6.21 / 94.75 (6.554090%) on TPU_0(process=0,(0,0,0,0))\n"
      "\tUsing (GB) 6.19 / 94.75 (6.533000%) on TPU_1(process=0,(1,0,0,0))\n");
  EXPECT_FALSE(t.peak());
  ASSERT_TRUE(t.params());
  EXPECT_DOUBLE_EQ(t.params()->gib, 6.21);
  EXPECT_EQ(t.params()->source, "params_only");
}

TEST(HbmPeak, TrustOrdersTheSources) {
  HbmPeakTracker t;
  t.feed_text(
      "I1121 16:40:00.000000 140 max_utils.py:800] Memstats: After params initialized:\n"
      "\tUsing (GB) 6.21 / 94.75 (6.55%) on TPU_0(process=0,(0,0,0,0))\n"
      "Memstats: After first optimizer step:\n"
      "\tUsing (GB) 63.90 / 94.75 (67.44%) on TPU_0(process=0,(0,0,0,0))\n");
  ASSERT_TRUE(t.peak());
  EXPECT_DOUBLE_EQ(t.peak()->gib, 63.90);
  EXPECT_EQ(t.peak()->source, "memstats_after_step");
  EXPECT_EQ(t.peak()->label, "After first optimizer step");
  // The compiler's total outranks Memstats, whatever their sizes.
  t.feed_text(
      "I1121 16:41:05.000000 140 max_utils.py:741] Total memory size: 60.1 GB, Output size: "
      "30.0 GB, Temp size: 20.1 GB, Argument size: 30.0 GB, Host temp size: 0.0 GB.\n");
  EXPECT_DOUBLE_EQ(t.peak()->gib, 60.1);
  EXPECT_EQ(t.peak()->source, "compiler_total");
  // And an out-of-memory requirement outranks everything (kubectl --prefix form).
  t.feed_text(
      "[pod/almodel-0/jax] E1121 16:42:00.000000 140 train.py:99] RESOURCE_EXHAUSTED: Ran out "
      "of memory in memory space hbm. Used 112.90G of 94.75G hbm. Exceeded hbm capacity by "
      "18.15G.\n");
  EXPECT_DOUBLE_EQ(t.peak()->gib, 112.90);
  EXPECT_EQ(t.peak()->source, "oom_required");
  // A lesser source never replaces it.
  t.feed_text("Memstats: After step 5:\n\tUsing (GB) 90.00 / 94.75 (95%) on TPU_0(x)\n");
  EXPECT_EQ(t.peak()->source, "oom_required");
  const auto j = to_json(*t.peak());
  EXPECT_EQ(j["source"], "oom_required");
  EXPECT_EQ(j["used_gib"], 112.90);
  EXPECT_EQ(j["limit_gib"], 94.75);
}

TEST(HbmPeak, ArbitraryBytesNeverThrow) {
  HbmPeakTracker t;
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk.push_back(static_cast<char>((i * 131) % 256));
  junk += "Ran out of memory in memory space hbm. Used ";
  EXPECT_NO_THROW(t.feed_text(junk));
}

}  // namespace
}  // namespace podium::core
