#include "engine/core/plan/elastic_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ElasticLayout lay(std::map<std::string, int> parallelism, int from, int to) {
  ElasticLayoutInput in;
  in.parallelism = std::move(parallelism);
  in.from_slices = from;
  in.to_slices = to;
  return lay_out_slices(in);
}

TEST(ElasticLayout, FsdpTwoShrinksFromFourToTwoByGivingUpDataFirst) {
  // dcn_data fills to 2 on 4 slices; on 2 the data axis gives up its factor, fsdp keeps 2.
  auto l = lay({{"ici_fsdp", 4}, {"dcn_fsdp", 2}}, 4, 2);
  ASSERT_TRUE(l.ok) << l.reason;
  EXPECT_EQ(l.parallelism,
            (std::map<std::string, int>{{"ici_fsdp", 4}, {"dcn_data", 1}, {"dcn_fsdp", 2}}));
  EXPECT_THAT(l.changes, ElementsAre("dcn_data 2 -> 1"));
}

TEST(ElasticLayout, FsdpTwoShrinksFromTwoToOneSlice) {
  auto l = lay({{"dcn_fsdp", 2}}, 2, 1);
  ASSERT_TRUE(l.ok) << l.reason;
  EXPECT_EQ(l.dcn, (std::map<std::string, int>{{"dcn_data", 1}, {"dcn_fsdp", 1}}));
  EXPECT_THAT(l.changes, ElementsAre("dcn_fsdp 2 -> 1"));
}

TEST(ElasticLayout, GrowsOverTheDataAxisKeepingFsdp) {
  // Written for 4 slices with dcn_fsdp=2: on 6 slices fsdp never grows past 2, data takes 3.
  auto l = lay({{"dcn_fsdp", 2}, {"dcn_data", 2}}, 4, 6);
  ASSERT_TRUE(l.ok) << l.reason;
  EXPECT_EQ(l.dcn, (std::map<std::string, int>{{"dcn_data", 3}, {"dcn_fsdp", 2}}));
}

TEST(ElasticLayout, BackToTheWrittenCountIsTheWrittenLayout) {
  auto l = lay({{"dcn_fsdp", 2}, {"dcn_data", -1}}, 4, 4);
  ASSERT_TRUE(l.ok) << l.reason;
  EXPECT_EQ(l.dcn, (std::map<std::string, int>{{"dcn_data", 2}, {"dcn_fsdp", 2}}));
  EXPECT_THAT(l.changes, IsEmpty());
}

TEST(ElasticLayout, DataOnlyRunIsTheOldBehaviour) {
  auto l = lay({{"ici_fsdp", -1}}, 4, 3);
  ASSERT_TRUE(l.ok) << l.reason;
  EXPECT_EQ(l.parallelism, (std::map<std::string, int>{{"ici_fsdp", -1}, {"dcn_data", 3}}));
}

TEST(ElasticLayout, OddCountShrinksFsdpToADivisorRatherThanGrowingIt) {
  // 3 slices: fsdp 2 -> 3 would split parameter dimensions that were split in two; fsdp 1 and
  // data 3 keeps every shard whole.
  auto l = lay({{"dcn_fsdp", 2}}, 4, 3);
  ASSERT_TRUE(l.ok) << l.reason;
  EXPECT_EQ(l.dcn, (std::map<std::string, int>{{"dcn_data", 3}, {"dcn_fsdp", 1}}));
}

TEST(ElasticLayout, TensorIsChangedAfterFsdp) {
  // 8 slices written as data 2, fsdp 2, tensor 2; on 2 slices one of fsdp or tensor must give up
  // its factor besides data: fsdp goes first, tensor keeps 2.
  auto l = lay({{"dcn_fsdp", 2}, {"dcn_tensor", 2}}, 8, 2);
  ASSERT_TRUE(l.ok) << l.reason;
  EXPECT_EQ(l.dcn,
            (std::map<std::string, int>{{"dcn_data", 1}, {"dcn_fsdp", 1}, {"dcn_tensor", 2}}));
}

TEST(ElasticLayout, PipelineStagesStay) {
  auto l = lay({{"dcn_pipeline", 2}}, 4, 2);
  ASSERT_TRUE(l.ok) << l.reason;
  EXPECT_EQ(l.dcn, (std::map<std::string, int>{{"dcn_data", 1}, {"dcn_pipeline", 2}}));
}

TEST(ElasticLayout, ImpossibleWhenTheSliceCountIsNotAMultipleOfThePipelineStages) {
  auto l = lay({{"dcn_pipeline", 2}}, 4, 3);
  EXPECT_FALSE(l.ok);
  EXPECT_THAT(l.reason, HasSubstr("dcn_pipeline=2 cannot change"));
  EXPECT_THAT(l.reason, HasSubstr("3 slices"));
}

TEST(ElasticLayout, ImpossibleWhenTheLayersDoNotDivideOverTheStages) {
  ElasticLayoutInput in;
  in.parallelism = {{"dcn_pipeline", 2}, {"ici_pipeline", 2}};
  in.from_slices = 2;
  in.to_slices = 2;
  in.num_layers = 30;
  auto l = lay_out_slices(in);
  EXPECT_FALSE(l.ok);
  EXPECT_THAT(l.reason, HasSubstr("30 layers do not divide over 4 pipeline stages"));
  in.num_layers = 32;
  EXPECT_TRUE(lay_out_slices(in).ok);
}

TEST(ElasticLayout, ImpossibleWhenTheGlobalBatchIsNotWhole) {
  ElasticLayoutInput in;
  in.parallelism = {{"dcn_fsdp", 2}};
  in.from_slices = 2;
  in.to_slices = 1;
  in.devices_per_slice = 1;
  in.per_device_batch_size = 0.5;
  auto l = lay_out_slices(in);
  EXPECT_FALSE(l.ok);
  EXPECT_THAT(l.reason, HasSubstr("not a whole number"));
  in.to_slices = 2;  // 1 sequence over data 1 x fsdp 2 does not divide
  l = lay_out_slices(in);
  EXPECT_FALSE(l.ok);
  EXPECT_THAT(l.reason, HasSubstr("does not divide over the DCN batch axes"));
  in.per_device_batch_size = 1;
  EXPECT_TRUE(lay_out_slices(in).ok);
}

TEST(ElasticLayout, ImpossibleWhenTheWrittenValuesDoNotFillTheRunsSlices) {
  EXPECT_THAT(lay({{"dcn_fsdp", 3}}, 4, 2).reason, HasSubstr("do not divide its 4 slices"));
  EXPECT_THAT(lay({{"dcn_fsdp", 2}, {"dcn_data", 3}}, 4, 2).reason,
              HasSubstr("multiply to 6, not its 4 slices"));
  EXPECT_THAT(lay({{"dcn_fsdp", -1}, {"dcn_data", -1}}, 4, 2).reason,
              HasSubstr("more than one DCN axis is -1"));
}

TEST(ElasticLayout, ImpossibleInputsAreRefusedWithAReason) {
  EXPECT_THAT(lay({}, 2, 0).reason, HasSubstr("at least 1"));
  EXPECT_THAT(lay({{"dcn_bogus", 2}}, 2, 1).reason, HasSubstr("not a mesh axis"));
  EXPECT_THAT(lay({{"dcn_fsdp", 0}}, 2, 1).reason, HasSubstr("not a parallelism value"));
}

TEST(ElasticLayout, OneSliceValuesAreIgnoredAsMaxTextIgnoresThem) {
  // Written for one slice (MaxText never reads DCN there): growing lays out over data only.
  auto l = lay({{"dcn_fsdp", 4}}, 1, 2);
  ASSERT_TRUE(l.ok) << l.reason;
  EXPECT_EQ(l.dcn, (std::map<std::string, int>{{"dcn_data", 2}, {"dcn_fsdp", 1}}));
}

TEST(ElasticLayout, ForkAxesAreHonoured) {
  ElasticLayoutInput in;
  in.parallelism = {{"dcn_replica", 2}};
  in.from_slices = 2;
  in.to_slices = 1;
  in.axes = {"data", "replica", "fsdp"};
  auto l = lay_out_slices(in);
  ASSERT_TRUE(l.ok) << l.reason;
  EXPECT_EQ(l.dcn, (std::map<std::string, int>{{"dcn_data", 1}, {"dcn_replica", 1}}));
}

TEST(ElasticLayout, JsonSaysWhatChanged) {
  auto j = to_json(lay({{"dcn_fsdp", 2}}, 2, 1));
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["parallelism"]["dcn_fsdp"], 1);
  EXPECT_TRUE(j["reason"].is_null());
  j = to_json(lay({{"dcn_pipeline", 2}}, 2, 1));
  EXPECT_EQ(j["ok"], false);
  EXPECT_TRUE(j["parallelism"].is_null());
}

}  // namespace
}  // namespace podium::core
