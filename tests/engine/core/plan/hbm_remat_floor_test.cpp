// The remat floor (docs/planner.md "HBM against the compiler"): when a step's natural peak is
// over the memory limit, XLA's rematerialization recomputes what it can, down to a floor of
// training state, saved activations and the larger of the loss (float32 logits and one
// compute-dtype copy) and one layer's unsplittable tensors. The verdict weighs both bands.
#include "engine/core/plan/hbm.h"
#include "engine/core/plan/hbm_calibration.h"
#include "engine/core/plan/planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

// bench/fidelity/compile_grid.py's dense-small (E 1024, 8 query heads and 4 kv heads of 128,
// MLP 4096 gated, 4 layers, vocab 8192) on v5e-8: fsdp 8, 15.25 GiB usable, attention in blocks
// of 512 queries, remat full.
ModelSpec dense_small() {
  const auto m = parse_model_yaml(
      "podium:\n  name: dense-small\n  description: grid\n  source: bench/fidelity\n"
      "base_emb_dim: 1024\nbase_num_query_heads: 8\nbase_num_kv_heads: 4\nhead_dim: 128\n"
      "base_mlp_dim: 4096\nbase_num_decoder_layers: 4\nvocab_size: 8192\n"
      "mlp_activations: [\"silu\", \"linear\"]\nlogits_via_embedding: false\n");
  EXPECT_TRUE(m.ok()) << m.summary();
  return m.value.value_or(ModelSpec{});
}

HbmInput on_v5e_8(const ModelSpec& m, double batch) {
  HbmInput in;
  in.model = &m;
  in.shape = {batch, 8192, 1};
  in.axes = {{"fsdp", 8}};
  in.attention_query_block = 512;
  in.capacity_gib = 15.25;
  return in;
}

// The loss is the floor's larger moment here: float32 logits and a bfloat16 copy (6 bytes per
// vocabulary entry, 1.5x the float32 logits the natural peak counts), beside the training state
// and the saved layer inputs; the layer's working set is recomputed away.
double loss_floor(const HbmEstimate& e) {
  const HbmBreakdown& b = e.breakdown;
  return (1 + kHbmCompilerMargin) * (b.params + b.gradients + b.optimizer_state + b.weight_gather +
                                     b.activations + 1.5 * b.logits);
}

// 24 x 8192 on v5e-8: the natural peak (20.7 GiB, band 18.7-24.9) is over the 15.25 usable
// whatever the band, and the floor (11.3 GiB) is under it: XLA rematerializes to fit. The
// compile grid compiled this case out of sample, after the rule was set (compiled_cache.json).
TEST(HbmRematFloor, NaturalPeakOverCapacityFitsThroughRemat) {
  const ModelSpec m = dense_small();
  const HbmEstimate e = estimate_hbm(on_v5e_8(m, 24));
  ASSERT_GT(e.low_gib, e.capacity_gib) << e.per_device_gib;
  EXPECT_NEAR(e.remat_floor_gib, loss_floor(e), 1e-9);
  EXPECT_NEAR(e.remat_floor_low_gib, 0.85 * e.remat_floor_gib, 1e-9);
  EXPECT_NEAR(e.remat_floor_high_gib, 1.2 * e.remat_floor_gib, 1e-9);
  EXPECT_LE(e.remat_floor_high_gib, e.capacity_gib);
  EXPECT_EQ(e.verdict, "fits");
  EXPECT_TRUE(e.fits);
  EXPECT_TRUE(e.remat_pressure);
  EXPECT_TRUE(e.suggestions.empty());
  const nlohmann::json j = to_json(e);
  EXPECT_EQ(j["remat_pressure"], true);
  EXPECT_NEAR(j["remat_floor"]["gib"].get<double>(), e.remat_floor_gib, 1e-12);
}

// 8 x 8192: the natural band is within capacity; no remat pressure, the floor is still told.
TEST(HbmRematFloor, NaturalPeakWithinCapacityFitsWithoutPressure) {
  const ModelSpec m = dense_small();
  const HbmEstimate e = estimate_hbm(on_v5e_8(m, 8));
  ASSERT_LE(e.high_gib, e.capacity_gib);
  EXPECT_EQ(e.verdict, "fits");
  EXPECT_FALSE(e.remat_pressure);
  EXPECT_GT(e.remat_floor_gib, 0);
  EXPECT_LT(e.remat_floor_gib, e.per_device_gib);
  EXPECT_FALSE(to_json(e)["remat_pressure"].get<bool>());
}

// 48 x 8192: even the floor's band (19.0-26.8 GiB) is over capacity: does_not_fit, with what
// would fit. (40 x 8192, floor 18.7, band 15.9-22.4: XLA stopped at 20.19 GiB of temporaries.)
TEST(HbmRematFloor, FloorOverCapacityDoesNotFit) {
  const ModelSpec m = dense_small();
  const HbmEstimate e = estimate_hbm(on_v5e_8(m, 48));
  ASSERT_GT(e.remat_floor_low_gib, e.capacity_gib) << e.remat_floor_gib;
  EXPECT_EQ(e.verdict, "does_not_fit");
  EXPECT_FALSE(e.remat_pressure);
  EXPECT_FALSE(e.suggestions.empty());
}

// 32 x 8192: the natural peak (27.6) is over capacity and the floor's band (12.7-18.0) straddles
// it: uncertain, not does_not_fit (XLA compiled it: it fits).
TEST(HbmRematFloor, FloorStraddlingCapacityIsUncertain) {
  const ModelSpec m = dense_small();
  const HbmEstimate e = estimate_hbm(on_v5e_8(m, 32));
  ASSERT_GT(e.low_gib, e.capacity_gib);
  ASSERT_LT(e.remat_floor_low_gib, e.capacity_gib);
  ASSERT_GT(e.remat_floor_high_gib, e.capacity_gib);
  EXPECT_EQ(e.verdict, "uncertain");
  EXPECT_FALSE(e.remat_pressure);
}

// With a large vocabulary the loss is the whole floor: dense-tiny-like logits (vocab 32000,
// E 256) at 16 x 8192 have no room to rematerialize; the floor is the natural peak, never above.
TEST(HbmRematFloor, FloorNeverExceedsTheNaturalPeak) {
  const auto m = parse_model_yaml(
      "podium:\n  name: dense-tiny\n  description: grid\n  source: bench/fidelity\n"
      "base_emb_dim: 256\nbase_num_query_heads: 4\nbase_num_kv_heads: 2\nhead_dim: 64\n"
      "base_mlp_dim: 1024\nbase_num_decoder_layers: 2\nvocab_size: 32000\n"
      "mlp_activations: [\"silu\", \"linear\"]\nlogits_via_embedding: false\n");
  ASSERT_TRUE(m.ok()) << m.summary();
  const HbmEstimate e = estimate_hbm(on_v5e_8(*m.value, 16));
  EXPECT_NEAR(e.remat_floor_gib, e.per_device_gib, 1e-9);
  EXPECT_EQ(e.verdict, "does_not_fit");
}

// The floor rests on the compile grid: not for models the grid did not validate (dropless MoE:
// its band stays wide) nor for a figure calibrated on runs (they may have rematerialized).
TEST(HbmRematFloor, OnlyForThePureEstimateOfAValidatedModel) {
  const ModelSpec m = dense_small();
  HbmInput in = on_v5e_8(m, 24);
  in.history = {{18.0, 8 * 8192, "memstats_after_step", false, "run_a", 8, 8192}};
  const HbmEstimate h = estimate_hbm(in);
  EXPECT_EQ(h.basis, "history");
  EXPECT_EQ(h.remat_floor_gib, 0);
  EXPECT_FALSE(h.remat_pressure);
  EXPECT_TRUE(to_json(h)["remat_floor"].is_null());

  const auto moe = parse_model_yaml(
      "podium:\n  name: moe\n  description: grid\n  source: bench/fidelity\n"
      "base_emb_dim: 512\nbase_num_query_heads: 8\nbase_num_kv_heads: 4\nhead_dim: 64\n"
      "base_mlp_dim: 1024\nbase_num_decoder_layers: 4\nvocab_size: 8192\n"
      "mlp_activations: [\"silu\", \"linear\"]\nlogits_via_embedding: false\n"
      "num_experts: 8\nnum_experts_per_tok: 2\nbase_moe_mlp_dim: 1024\n");
  ASSERT_TRUE(moe.ok()) << moe.summary();
  HbmInput dropless = on_v5e_8(*moe.value, 24);
  dropless.capacity_factor = -1;
  EXPECT_EQ(estimate_hbm(dropless).remat_floor_gib, 0);
  dropless.capacity_factor = 1.25;  // the capacity path is in the grid
  EXPECT_GT(estimate_hbm(dropless).remat_floor_gib, 0);
}

// predict_hbm's four outcomes with a floor, in numbers: natural 21 (18.9-25.2), floor 6 (5.1-7.2).
TEST(HbmRematFloor, VerdictWeighsTheNaturalAndTheFloorBands) {
  auto at = [](double capacity, std::optional<double> floor) {
    return predict_hbm(1, 20, 1000, 1.0, {}, false, capacity, floor);
  };
  const HbmVerdict fits = at(26, 5.0);
  EXPECT_EQ(fits.verdict, "fits");
  EXPECT_FALSE(fits.remat_pressure);
  const HbmVerdict pressure = at(15, 5.0);
  EXPECT_NEAR(pressure.floor_gib, 6, 1e-12);
  EXPECT_NEAR(pressure.floor_low_gib, 5.1, 1e-12);
  EXPECT_NEAR(pressure.floor_high_gib, 7.2, 1e-12);
  EXPECT_EQ(pressure.verdict, "fits");
  EXPECT_TRUE(pressure.remat_pressure);
  EXPECT_EQ(at(6, 5.0).verdict, "uncertain");
  EXPECT_EQ(at(5, 5.0).verdict, "does_not_fit");
  // Without a floor the natural band alone decides: 15 is below its low side.
  EXPECT_EQ(at(15, std::nullopt).verdict, "does_not_fit");
  // A floor given with history is ignored (only the pure estimate has one).
  const HbmVerdict history =
      predict_hbm(1, 20, 1000, 1.0, {{21, 1, 20, 1000, false, "memstats", "r"}}, false, 15, 5.0);
  EXPECT_EQ(history.floor_gib, 0);
  EXPECT_EQ(history.verdict, "does_not_fit");
}

// The plan says so: llama2-7b on tpu7x-8 (fsdp 8), 16 x 8192, remat full: natural peak 82.7 GiB
// (74.4-99.2) reaching over the 94.75 usable, floor 73.0 (62.0-87.6) within it. The verdict is
// fits with the warning hbm_remat_pressure quoting both figures (before the floor: uncertain).
TEST(HbmRematFloor, PlanWarnsOfRematPressure) {
  PlanInput in;
  const Parsed<RunSpec> spec = parse_run_spec(nlohmann::json::parse(R"({
    "name": "pressure", "cluster": "v7", "model": "llama2-7b", "workload": "maxtext",
    "steps": 10, "per_device_batch_size": 16, "max_target_length": 8192,
    "parallelism": {"ici_fsdp": 8}, "config": {"remat_policy": "full"}
  })"));
  ASSERT_TRUE(spec.value.has_value());
  in.spec = *spec.value;
  in.accelerator_name = "tpu7x-8";
  const Plan plan = make_plan(in);
  ASSERT_TRUE(plan.memory.has_value());
  EXPECT_EQ(plan.memory->verdict, "fits");
  EXPECT_TRUE(plan.memory->remat_pressure);
  std::vector<std::string> codes;
  for (const PlanIssue& w : plan.warnings) {
    codes.push_back(w.code);
    if (w.code == "hbm_remat_pressure") {
      EXPECT_THAT(w.message, ::testing::HasSubstr("rematerialize down to 73.0 GiB"));
      EXPECT_THAT(w.message, ::testing::HasSubstr("94.75 GiB usable"));
    }
  }
  EXPECT_THAT(codes, ::testing::Contains("hbm_remat_pressure"));
  EXPECT_THAT(codes, ::testing::Not(::testing::Contains("hbm_uncertain")));
  for (const PlanIssue& e : plan.errors) EXPECT_NE(e.code, "hbm_exceeded");
}

}  // namespace
}  // namespace podium::core
