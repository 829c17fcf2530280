#include "engine/core/plan/data_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

namespace podium::core {
namespace {

using ::testing::HasSubstr;

// Domain brief §3: 500 JSONL records, 64 devices x 1 x 4096 = 262,144 tokens per step; the run
// stopped at step 7 of 10 with StopIteration. Steps 0..6 completed, so the records held at
// least 7 and fewer than 8 steps' worth: 7 x 262,144 <= 500 x t < 8 x 262,144, i.e.
// 3,670.016 <= tokens_per_record < 4,194.304. A JSONL document of ~4,000 tokens is typical.
DataPlanInput domain_example(double tokens_per_record) {
  DataPlanInput in;
  in.steps = 10;
  in.devices = 64;
  in.per_device_batch_size = 1;
  in.max_target_length = 4096;
  in.dataset = DatasetFacts{"jsonl", 500, std::nullopt, std::nullopt, tokens_per_record};
  return in;
}

TEST(DataPlan, DomainExampleStopsAtStepSevenOfTen) {
  const DataPlan p = plan_data(domain_example(4000));
  EXPECT_EQ(p.tokens_per_step, 262'144);
  EXPECT_EQ(p.tokens_needed, 2'621'440);
  ASSERT_TRUE(p.tokens_available.has_value());
  EXPECT_EQ(*p.tokens_available, 2'000'000);
  EXPECT_EQ(p.tokens_available_basis, "records");
  ASSERT_TRUE(p.exhausted_at_step.has_value());
  EXPECT_EQ(*p.exhausted_at_step, 7);
  EXPECT_TRUE(p.exhausted);
  ASSERT_TRUE(p.records_needed.has_value());
  EXPECT_EQ(*p.records_needed, 656);  // ceil(2,621,440 / 4,000)
  EXPECT_THAT(p.message, HasSubstr("step 7 of 10"));
  EXPECT_THAT(p.hint, HasSubstr("656 records"));
  EXPECT_THAT(p.hint, HasSubstr("has 500"));
  EXPECT_THAT(p.hint, HasSubstr("steps <= 7"));
}

TEST(DataPlan, DomainExampleBoundsOfTokensPerRecord) {
  EXPECT_EQ(plan_data(domain_example(3670.016)).exhausted_at_step, 7);  // exactly 7 steps
  EXPECT_EQ(plan_data(domain_example(3670)).exhausted_at_step, 6);
  EXPECT_EQ(plan_data(domain_example(4194)).exhausted_at_step, 7);
  EXPECT_EQ(plan_data(domain_example(4194.304)).exhausted_at_step, 8);  // exactly 8 steps
  // Enough for all 10 steps: 10 x 262,144 / 500 = 5,242.88 tokens per record.
  const DataPlan enough = plan_data(domain_example(5242.88));
  EXPECT_FALSE(enough.exhausted_at_step.has_value());
  EXPECT_FALSE(enough.exhausted);
  EXPECT_TRUE(enough.message.empty());
}

TEST(DataPlan, TokensGivenDirectly) {
  DataPlanInput in = domain_example(0);
  in.dataset = DatasetFacts{"arrayrecord", std::nullopt, std::nullopt, 1e6, std::nullopt};
  const DataPlan p = plan_data(in);
  EXPECT_EQ(p.tokens_available_basis, "tokens");
  EXPECT_EQ(p.exhausted_at_step, 3);  // floor(1e6 / 262,144)
  EXPECT_FALSE(p.records_needed.has_value());
}

TEST(DataPlan, TokensPerRecordDerivedFromTokensAndRecords) {
  DataPlanInput in = domain_example(0);
  in.dataset = DatasetFacts{"jsonl", 500, std::nullopt, 2e6, std::nullopt};
  const DataPlan p = plan_data(in);
  EXPECT_EQ(p.exhausted_at_step, 7);
  EXPECT_EQ(p.records_needed, 656);
}

TEST(DataPlan, BytesWithTheDefaultTextRatio) {
  DataPlanInput in = domain_example(0);
  // 8 MB of text at 4 bytes per token = 2,000,000 tokens.
  in.dataset = DatasetFacts{"text", std::nullopt, 8e6, std::nullopt, std::nullopt};
  const DataPlan p = plan_data(in);
  EXPECT_EQ(p.tokens_available_basis, "bytes");
  EXPECT_EQ(p.bytes_per_token, kDefaultBytesPerTokenText);
  EXPECT_EQ(p.tokens_available, 2e6);
  EXPECT_EQ(p.exhausted_at_step, 7);
  in.bytes_per_token = 2;
  EXPECT_EQ(plan_data(in).exhausted_at_step, std::nullopt);  // 4e6 tokens: 15 steps' worth

  // With records known, bytes also give tokens per record.
  in.bytes_per_token = std::nullopt;
  in.dataset->records = 500;
  EXPECT_EQ(plan_data(in).records_needed, 656);
}

TEST(DataPlan, ReferenceWorkloadReadsOneExtraBytePerSequence) {
  // engine/workloads/reference: one process, B=2, S=64, each sequence reads S+1 = 65 bytes.
  // Its own test writes 7 x 2 x 65 + 100 bytes and sees StopIteration at step 7.
  DataPlanInput in;
  in.steps = 20;
  in.devices = 1;
  in.per_device_batch_size = 2;
  in.max_target_length = 64;
  in.byte_level_tokenizer = true;
  in.extra_tokens_per_sequence = 1;
  in.dataset = DatasetFacts{"text", std::nullopt, 7 * 2 * 65 + 100, std::nullopt, std::nullopt};
  DataPlan p = plan_data(in);
  EXPECT_EQ(p.bytes_per_token, kDefaultBytesPerTokenByteLevel);
  EXPECT_EQ(p.tokens_per_step, 128);
  EXPECT_EQ(p.tokens_consumed_per_step, 130);
  EXPECT_EQ(p.exhausted_at_step, 7);
  // The message names what a step reads, and how that differs from what it trains on.
  EXPECT_NE(p.message.find("130 tokens read per step (128 trained + 2 next-token targets)"),
            std::string::npos)
      << p.message;
  // 1,024 bytes would be 8 steps at 128 per step, but only 7 at 130.
  in.dataset->bytes = 1024;
  EXPECT_EQ(plan_data(in).exhausted_at_step, 7);
}

TEST(DataPlan, GradientAccumulationMultipliesTokensPerStep) {
  DataPlanInput in = domain_example(4000);
  in.gradient_accumulation_steps = 2;
  const DataPlan p = plan_data(in);
  EXPECT_EQ(p.tokens_per_step, 524'288);
  EXPECT_EQ(p.exhausted_at_step, 3);
}

TEST(DataPlan, SyntheticAndUnknownNeverExhaust) {
  DataPlanInput in = domain_example(4000);
  in.dataset = std::nullopt;
  DataPlan p = plan_data(in);
  EXPECT_EQ(p.tokens_available_basis, "synthetic");
  EXPECT_FALSE(p.exhausted_at_step.has_value());

  in.dataset = DatasetFacts{"synthetic", 1, 1, 1, 1};
  EXPECT_EQ(plan_data(in).tokens_available_basis, "synthetic");

  in.dataset = DatasetFacts{"jsonl", 500, std::nullopt, std::nullopt, std::nullopt};
  p = plan_data(in);
  EXPECT_EQ(p.tokens_available_basis, "unknown");
  EXPECT_FALSE(p.tokens_available.has_value());
  EXPECT_FALSE(p.exhausted);
}

TEST(DataPlan, NonsenseFactsCountAsUnknown) {
  DataPlanInput in = domain_example(4000);
  in.dataset->records = -5;
  EXPECT_EQ(plan_data(in).tokens_available_basis, "unknown");
  in.dataset->records = 500;
  in.dataset->tokens = std::numeric_limits<double>::infinity();
  EXPECT_EQ(plan_data(in).tokens_available_basis, "records");
}

TEST(DataPlan, Json) {
  const nlohmann::json j = to_json(plan_data(domain_example(4000)));
  EXPECT_EQ(j["tokens_per_step"], 262144.0);
  EXPECT_EQ(j["tokens_available"], 2e6);
  EXPECT_EQ(j["exhausted_at_step"], 7);
  EXPECT_EQ(j["records_needed"], 656.0);
  EXPECT_TRUE(j["bytes_per_token"].is_null());
  DataPlanInput in;
  in.steps = 10;
  in.devices = 8;
  in.max_target_length = 128;
  const nlohmann::json synthetic = to_json(plan_data(in));
  EXPECT_TRUE(synthetic["exhausted_at_step"].is_null());
  EXPECT_TRUE(synthetic["tokens_available"].is_null());
}

}  // namespace
}  // namespace podium::core
