// The planner with a model from the model store (PlanInput::model / known_models) and a spec's
// skip_checks (issue 27).
#include "engine/core/plan/planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

RunSpec spec_from(const json& body) {
  const Parsed<RunSpec> r = parse_run_spec(body);
  EXPECT_THAT(r.errors, IsEmpty()) << (r.errors.empty() ? "" : r.errors.front().field);
  return r.value.value_or(RunSpec{});
}

PlanInput on_tpu7x_64(const std::string& model) {
  PlanInput in;
  in.spec = spec_from({{"name", "r"},
                       {"cluster", "v7"},
                       {"model", model},
                       {"steps", 100},
                       {"config_file", "configs/team.yml"},
                       {"per_device_batch_size", 1},
                       {"max_target_length", 4096},
                       {"parallelism", {{"ici_fsdp", 16}, {"ici_tensor", 4}}},
                       {"config", {{"remat_policy", "full"}}}});
  in.accelerator_name = "tpu7x-64";
  return in;
}

ModelSpec team_model() {
  Parsed<ModelConfig> p = parse_model_config_json({{"base_emb_dim", 1024},
                                                   {"base_num_query_heads", 8},
                                                   {"base_num_kv_heads", 8},
                                                   {"base_mlp_dim", 4096},
                                                   {"base_num_decoder_layers", 8},
                                                   {"vocab_size", 32000},
                                                   {"num_experts", 8},
                                                   {"num_experts_per_tok", 2},
                                                   {"base_moe_mlp_dim", 1024}});
  EXPECT_TRUE(p.ok()) << p.summary();
  p.value->model.name = "team-moe";
  return p.value->model;
}

TEST(PlannerModelStore, PlansTheStoredModelNotTheCompiledCatalog) {
  PlanInput in = on_tpu7x_64("team-moe");
  in.known_models = std::vector<std::string>{"llama2-7b", "team-moe"};
  in.model = team_model();
  const Plan plan = make_plan(in);
  EXPECT_TRUE(plan.ok) << (plan.errors.empty() ? "" : plan.errors.front().message);
  ASSERT_TRUE(plan.params);
  EXPECT_EQ(plan.params->total, count_parameters(team_model()).total);
  EXPECT_TRUE(plan.moe);
  ASSERT_TRUE(plan.estimate);
  EXPECT_GT(plan.estimate->moe_ffn_tflops, 0);
  EXPECT_LT(plan.estimate->moe_ffn_tflops, plan.estimate->ffn_tflops + 1e-12);
  const json j = to_json(plan);
  EXPECT_EQ(j["model"]["moe"], true);
  EXPECT_EQ(j["estimate"]["moe_ffn_tflops"], plan.estimate->moe_ffn_tflops);
}

TEST(PlannerModelStore, AModelTheStoreLacksIsUnknownWithTheStoresNames) {
  PlanInput in = on_tpu7x_64("team-mo");
  in.known_models = std::vector<std::string>{"llama2-7b", "team-moe"};
  const Plan plan = make_plan(in);
  ASSERT_FALSE(plan.errors.empty());
  EXPECT_EQ(plan.errors.front().code, "unknown_model");
  EXPECT_EQ(plan.errors.front().check, "model");
  EXPECT_THAT(plan.errors.front().hint, HasSubstr("did you mean 'team-moe'"));
  EXPECT_THAT(plan.errors.front().hint, HasSubstr("POST /api/v1/models"));
  // A compiled catalog name is unknown when the store does not have it.
  PlanInput builtin = on_tpu7x_64("llama3-8b");
  builtin.known_models = std::vector<std::string>{"team-moe"};
  EXPECT_EQ(make_plan(builtin).errors.front().code, "unknown_model");
}

TEST(PlannerSkipChecks, OnlyTheNamedCheckIsSkipped) {
  PlanInput in = on_tpu7x_64("llama2-7b");
  in.spec.config["weight_decay_typo"] = 1;  // config_keys
  in.spec.parallelism = {{"ici_fsdp", 3}};  // mesh
  in.spec.skip_checks = {"config_keys"};
  Plan plan = make_plan(in);
  EXPECT_FALSE(plan.ok);
  bool saw_config = false, saw_mesh = false;
  for (const PlanIssue& e : plan.errors) {
    if (e.check == "config_keys") {
      saw_config = true;
      EXPECT_TRUE(e.skipped) << e.code;
    }
    if (e.check == "mesh") {
      saw_mesh = true;
      EXPECT_FALSE(e.skipped) << e.code;
    }
  }
  EXPECT_TRUE(saw_config && saw_mesh);
  EXPECT_TRUE(has_blocking_errors(plan));
  EXPECT_THAT(plan.skipped_checks, ElementsAre("config_keys"));

  in.spec.skip_checks = {"config_keys", "mesh"};
  plan = make_plan(in);
  EXPECT_FALSE(plan.ok);  // the errors are still shown
  EXPECT_FALSE(has_blocking_errors(plan));
  const json j = to_json(plan);
  EXPECT_EQ(j["skipped_checks"], json({"config_keys", "mesh"}));
  EXPECT_EQ(j["errors"][0]["skipped"], true);
}

TEST(PlannerSkipChecks, ForceSkipsEverythingEvenUncheckedErrors) {
  PlanInput in = on_tpu7x_64("llama2-7b");
  in.spec.env["JAX_PROCESS_ID"] = "3";  // env_conflict: no check of its own
  EXPECT_TRUE(has_blocking_errors(make_plan(in)));
  in.spec.skip_checks = skippable_checks();
  EXPECT_TRUE(has_blocking_errors(make_plan(in)));
  in.spec.force = true;
  const Plan plan = make_plan(in);
  EXPECT_FALSE(has_blocking_errors(plan));
  EXPECT_EQ(plan.skipped_checks, skippable_checks());
}

TEST(RunSpecSkipChecks, ParsedDeduplicatedAndValidated) {
  Parsed<RunSpec> ok = parse_run_spec({{"name", "r"},
                                       {"cluster", "c"},
                                       {"model", "m"},
                                       {"steps", 1},
                                       {"skip_checks", {"mesh", "hbm", "mesh"}}});
  ASSERT_TRUE(ok.value);
  EXPECT_THAT(ok.value->skip_checks, ElementsAre("mesh", "hbm"));
  EXPECT_EQ(to_json(*ok.value)["skip_checks"], json({"mesh", "hbm"}));
  Parsed<RunSpec> bad = parse_run_spec({{"name", "r"},
                                        {"cluster", "c"},
                                        {"model", "m"},
                                        {"steps", 1},
                                        {"skip_checks", {"mesh", "everything", 3}}});
  ASSERT_EQ(bad.errors.size(), 2u);
  EXPECT_EQ(bad.errors[0].field, "skip_checks[1]");
  EXPECT_EQ(bad.errors[1].field, "skip_checks[2]");
  EXPECT_FALSE(parse_run_spec({{"name", "r"}, {"cluster", "c"}, {"skip_checks", "mesh"}}).value);
}

}  // namespace
}  // namespace podium::core
