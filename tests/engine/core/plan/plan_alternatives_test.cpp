// Every alternative the plan proposes is a patch that, applied to the submitted spec, clears the
// error it was proposed for: what the dashboard's one-click "apply" relies on.
#include "engine/core/plan/plan_alternatives.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/plan/planner.h"

namespace podium::core {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::Not;

// The dashboard's rule: "parallelism" replaces the spec's whole parallelism (an alternative
// lists every axis it wants != 1), everything else merges key by key.
json apply_patch(json spec, const json& set) {
  json rest = set;
  if (rest.contains("parallelism")) {
    spec["parallelism"] = rest["parallelism"];
    rest.erase("parallelism");
  }
  spec.merge_patch(rest);
  return spec;
}

std::vector<std::string> codes(const Plan& plan) {
  std::vector<std::string> out;
  for (const PlanIssue& i : plan.errors) out.push_back(i.code);
  return out;
}

Plan plan_of(const json& body, const std::string& accelerator,
             std::optional<DatasetFacts> dataset = std::nullopt) {
  const Parsed<RunSpec> r = parse_run_spec(body);
  EXPECT_TRUE(r.errors.empty());
  PlanInput in;
  in.spec = r.value.value_or(RunSpec{});
  in.accelerator_name = accelerator;
  in.dataset = std::move(dataset);
  return make_plan(in);
}

TEST(PlanAlternatives, MeshAlternativesClearTheMeshError) {
  const json body = json::parse(R"({
    "name": "a", "cluster": "v7", "model": "llama3-8b", "steps": 10,
    "per_device_batch_size": 1, "max_target_length": 4096,
    "parallelism": {"ici_fsdp": 8, "ici_tensor": 4}, "config": {"remat_policy": "full"}})");
  const Plan before = plan_of(body, "tpu7x-64");
  ASSERT_THAT(codes(before), Contains("mesh_product_mismatch"));
  const json alternatives = to_json(before)["alternatives"];
  ASSERT_FALSE(alternatives.empty());
  for (const json& a : alternatives) {
    if (a["kind"] != "mesh") continue;
    ASSERT_TRUE(a.contains("set")) << a.dump();
    const Plan after = plan_of(apply_patch(body, a["set"]), "tpu7x-64");
    EXPECT_THAT(codes(after), Not(Contains("mesh_product_mismatch"))) << a["description"];
    EXPECT_THAT(codes(after), Not(Contains("mesh_unmappable"))) << a["description"];
  }
  EXPECT_EQ(alternatives[0]["set"]["parallelism"]["ici_fsdp"], 16);
  EXPECT_EQ(alternatives[0]["set"]["parallelism"]["ici_tensor"], 4);
}

TEST(PlanAlternatives, FittingMemoryAlternativesClearHbmExceeded) {
  const json body = json::parse(R"({
    "name": "m", "cluster": "v5p", "model": "llama3-8b", "steps": 10,
    "per_device_batch_size": 8, "max_target_length": 8192, "config": {"remat_policy": "minimal"}})");
  const Plan before = plan_of(body, "v5p-8");
  ASSERT_THAT(codes(before), Contains("hbm_exceeded"));
  int applied = 0;
  const json plan_json = to_json(before);
  for (const json& a : plan_json["alternatives"]) {
    if (a["kind"] != "memory" || !a.contains("set")) continue;
    ++applied;
    const Plan after = plan_of(apply_patch(body, a["set"]), "v5p-8");
    EXPECT_THAT(codes(after), Not(Contains("hbm_exceeded"))) << a["description"];
  }
  EXPECT_GT(applied, 0);
}

TEST(PlanAlternatives, DataAlternativeIsTheLargestStepCountTheDataFeeds) {
  const json body = json::parse(R"({
    "name": "d", "cluster": "v7", "model": "llama3-8b", "steps": 10,
    "per_device_batch_size": 1, "max_target_length": 4096,
    "parallelism": {"ici_fsdp": 16, "ici_tensor": 4}, "config": {"remat_policy": "full"}})");
  const DatasetFacts data{"jsonl", 500, std::nullopt, std::nullopt, 4000};
  const Plan before = plan_of(body, "tpu7x-64", data);
  ASSERT_THAT(codes(before), Contains("data_exhausted"));
  json data_alternative;
  const json plan_json = to_json(before);
  for (const json& a : plan_json["alternatives"]) {
    if (a["kind"] == "data") data_alternative = a;
  }
  ASSERT_FALSE(data_alternative.is_null());
  EXPECT_EQ(data_alternative["set"]["steps"], 7);
  const Plan after = plan_of(apply_patch(body, data_alternative["set"]), "tpu7x-64", data);
  EXPECT_THAT(codes(after), Not(Contains("data_exhausted")));
}

TEST(PlanAlternatives, MemoryChangePatchPlacesKeysWhereTheSpecHasThem) {
  EXPECT_EQ(*memory_change_patch("per_device_batch_size=2"),
            json::parse(R"({"per_device_batch_size": 2})"));
  EXPECT_EQ(*memory_change_patch("remat_policy=full"),
            json::parse(R"({"config": {"remat_policy": "full"}})"));
  EXPECT_EQ(*memory_change_patch("per_device_batch_size=0.5"),
            json::parse(R"({"per_device_batch_size": 0.5})"));
  EXPECT_EQ(*memory_change_patch("shard_optimizer_over_data=true"),
            json::parse(R"({"config": {"shard_optimizer_over_data": true}})"));
  EXPECT_EQ(*memory_change_patch("weight_dtype=bfloat16 (halves params; lower precision)"),
            json::parse(R"({"config": {"weight_dtype": "bfloat16"}})"));
  EXPECT_FALSE(memory_change_patch("move data parallelism into fsdp (fsdp=8, data=1)"));
  EXPECT_FALSE(memory_change_patch("=3"));
}

}  // namespace
}  // namespace podium::core
