#include "engine/core/model/flops.h"

#include <gtest/gtest.h>

namespace podium::core {
namespace {

const ModelSpec& model(const char* name) {
  const ModelSpec* m = find_model(name);
  EXPECT_NE(m, nullptr) << name;
  static const ModelSpec empty;
  return m ? *m : empty;
}

// MaxText docs, "Understand logs and metrics": model=deepseek2-16b, per_device_batch_size=24,
// max_target_length=2048 logs "Total TFLOPs: 764.67 split as 94.54% learnable weight flops and
// 5.46% attention flops". Required within 1%; the formula reproduces it to the printed digits.
TEST(Flops, ReproducesMaxTextDocumentedDeepSeekExample) {
  const FlopsEstimate f = training_tflops_per_device(model("deepseek2-16b"), {24, 2048, 1});
  EXPECT_NEAR(f.total_tflops, 764.67, 764.67 * 0.01);
  EXPECT_NEAR(f.total_tflops, 764.67, 0.005);
  EXPECT_NEAR(100 * f.learnable_weight_fraction(), 94.54, 0.005);
  EXPECT_NEAR(100 * f.attention_fraction(), 5.46, 0.005);
  EXPECT_DOUBLE_EQ(f.total_tflops, f.learnable_weight_tflops + f.attention_tflops);
  // MaxText's v5p example: 5.667 s per step -> 134.9 TFLOP/s/device, 29.4% MFU of 459.
  EXPECT_NEAR(f.total_tflops / 5.667, 134.93, 0.01);
  EXPECT_NEAR(f.total_tflops / 5.667 / 459.0, 0.294, 0.0005);
}

// Llama2-7B at B=1, S=4096, worked out by hand (E=4096, mlp=11008, 32 heads of 128, 32 layers,
// vocab 32000):
//   ffn/layer   = 2*4096*11008*4096*2 + 2*4096*11008*4096 = 1,108,101,562,368
//   qkv/layer   = 2*4096*4096*(32+2*32)*128               =   412,316,860,416
//   proj/layer  = 2*4096*4096*32*128                      =   137,438,953,472
//   attn/layer  = 4*4096^2*32*128 / 2 (causal)             =   137,438,953,472
//   unembedding = 2*4096*4096*32000                        = 1,073,741,824,000
//   learnable   = ((ffn+qkv+proj)*32 + unembedding)*3      = 162,375,533,592,576
//   attention   = attn*32*3                                =  13,194,139,533,312
TEST(Flops, DenseLlamaWorkedOutByHand) {
  const FlopsEstimate f = training_tflops_per_device(model("llama2-7b"), {1, 4096, 1});
  EXPECT_NEAR(f.learnable_weight_tflops, 162.375533592576, 1e-9);
  EXPECT_NEAR(f.attention_tflops, 13.194139533312, 1e-9);
  EXPECT_NEAR(f.total_tflops, 175.569673125888, 1e-9);
  EXPECT_NEAR(f.embedding_tflops, 1.073741824 * 3, 1e-9);
  EXPECT_NEAR(f.ffn_tflops, 1.108101562368 * 32 * 3, 1e-9);
}

TEST(Flops, GradientAccumulationMultipliesEverything) {
  const FlopsEstimate one = training_tflops_per_device(model("llama3-8b"), {2, 8192, 1});
  const FlopsEstimate four = training_tflops_per_device(model("llama3-8b"), {2, 8192, 4});
  EXPECT_DOUBLE_EQ(four.total_tflops, 4 * one.total_tflops);
  EXPECT_DOUBLE_EQ(four.attention_tflops, 4 * one.attention_tflops);
  EXPECT_DOUBLE_EQ(tokens_per_device_per_step({2, 8192, 4}), 65536);
}

TEST(Flops, AttentionIsHalvedForTheCausalMaskAndQuadraticInSequence) {
  const FlopsEstimate s1 = training_tflops_per_device(model("llama2-7b"), {1, 2048, 1});
  const FlopsEstimate s2 = training_tflops_per_device(model("llama2-7b"), {1, 4096, 1});
  // Weights are linear in tokens, attention quadratic in S.
  EXPECT_NEAR(s2.learnable_weight_tflops / s1.learnable_weight_tflops, 2.0, 1e-12);
  EXPECT_NEAR(s2.attention_tflops / s1.attention_tflops, 4.0, 1e-12);
  // 4*B*S^2*H*D/2 per layer x 32 layers x 3.
  EXPECT_NEAR(s1.attention_tflops, 2.0 * 2048.0 * 2048 * 32 * 128 * 32 * 3 / 1e12, 1e-9);
}

TEST(Flops, MixtralCountsTopTwoExpertsAndTheRouter) {
  const ModelSpec& m = model("mixtral-8x7b");
  const FlopsEstimate f = training_tflops_per_device(m, {1, 4096, 1});
  const double bs = 4096;
  const double gate = 2 * bs * 4096 * 8;
  const double expert = 3 * 2 * bs * 14336 * 4096;  // wi_0, wi_1, wo
  EXPECT_NEAR(f.ffn_tflops, (gate + 2 * expert) * 32 * 3 / 1e12, 1e-9);
}

TEST(Flops, DeepSeekSplitsDenseAndMoeLayers) {
  const ModelSpec& m = model("deepseek2-16b");
  const FlopsEstimate f = training_tflops_per_device(m, {1, 1024, 1});
  const double bs = 1024;
  const double dense = 3 * 2 * bs * 10944 * 2048;
  const double moe = 2 * bs * 2048 * 64 + (6 + 2) * 3 * 2 * bs * 1408 * 2048;
  EXPECT_NEAR(f.ffn_tflops, (dense * 1 + moe * 26) * 3 / 1e12, 1e-9);
}

// ALModel: 7 MLA layers count causal attention (S^2); 21 linear-attention layers count MaxText's
// Gated Delta Net core (8*H*Dk*Dv per token, linear in S) as attention and their projections
// and convolution as learnable weights.
TEST(Flops, AlmodelTreatsLinearAttentionLayersAsLinearInSequence) {
  const ModelSpec& m = model("almodel-8b");
  const double b = 1;
  const double s = 4096;
  const double bs = b * s;
  const FlopsEstimate f = training_tflops_per_device(m, {b, 4096, 1});
  const double mla_attention = 2 * bs * s * 20 * (192 + 128) / 2;
  const double gdn_core = bs * 20 * 128 * 128 * 8;
  EXPECT_NEAR(f.attention_tflops, (7 * mla_attention + 21 * gdn_core) * 3 / 1e12, 1e-9);

  const double mla_qkv = 2 * bs * (2560.0 * 512 + 512.0 * 20 * 192) +
                         2 * bs * (2560.0 * (256 + 64) + 256.0 * 20 * (128 + 128));
  const double mla_out = 2 * bs * 2560 * 20 * 128;
  const double gdn_weights =
      2 * bs * 2560 * (4 * 2560 + 40) + 2 * bs * 2560 * 2560 + 2 * bs * 4 * (3 * 2560);
  EXPECT_NEAR(f.attention_projection_tflops,
              ((mla_qkv + mla_out) * 7 + gdn_weights * 21) * 3 / 1e12, 1e-9);
  // Doubling S: the linear-attention core doubles, the MLA part quadruples.
  const FlopsEstimate f2 = training_tflops_per_device(m, {b, 8192, 1});
  EXPECT_NEAR(f2.attention_tflops, (7 * mla_attention * 4 + 21 * gdn_core * 2) * 3 / 1e12, 1e-9);
}

TEST(Flops, ReferenceTinyMatchesTheWorkloadsOwnFigures) {
  // engine/workloads/reference/README.md at B=2, S=64: 94,371,840 FLOPs, of which 88,080,384
  // learnable weight and 6,291,456 attention.
  const FlopsEstimate f = training_tflops_per_device(model("reference-tiny"), {2, 64, 1});
  EXPECT_NEAR(f.total_tflops * 1e12, 94'371'840, 1e-3);
  EXPECT_NEAR(f.learnable_weight_tflops * 1e12, 88'080'384, 1e-3);
  EXPECT_NEAR(f.attention_tflops * 1e12, 6'291'456, 1e-3);
  const FlopsEstimate small = training_tflops_per_device(model("reference-small"), {2, 64, 1});
  EXPECT_NEAR(small.total_tflops * 1e12, 654'311'424, 1e-3);
}

TEST(Flops, FractionalBatchAndJson) {
  const FlopsEstimate half = training_tflops_per_device(model("llama2-7b"), {0.5, 4096, 1});
  const FlopsEstimate one = training_tflops_per_device(model("llama2-7b"), {1, 4096, 1});
  EXPECT_NEAR(half.total_tflops, one.total_tflops / 2, 1e-9);
  const nlohmann::json j = to_json(one);
  EXPECT_NEAR(j["total_tflops"].get<double>(), 175.5697, 1e-4);
  EXPECT_NEAR(j["attention_percent"].get<double>() + j["learnable_weight_percent"].get<double>(),
              100.0, 1e-9);
  EXPECT_TRUE(j["breakdown"].contains("ffn"));
}

}  // namespace
}  // namespace podium::core
