// Elastic shapes in the plan (issue 30 point 5): POST /api/v1/plan and POST /api/v1/runs plan
// every slice count from min_slices up to the run's slices, and a min_slices shape that cannot
// run refuses the submission with the reason (422), unless the spec skips the check.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class ElasticPlan : public PodiumTest {};

json elastic_spec(const std::string& cluster, const json& parallelism, int min_slices) {
  return {{"name", unique_name("elastic")}, {"cluster", cluster}, {"workload", "reference"},
          {"model", "reference-tiny"},      {"steps", 20},        {"per_device_batch_size", 4},
          {"max_target_length", 128},       {"num_slices", 4},    {"min_slices", min_slices},
          {"parallelism", parallelism}};
}

TEST_F(ElasticPlan, PlanListsEveryShapeFromMinSlicesUp) {
  auto member = podium().create_user("member");
  podium().create_cluster("c", "cpu-2", {{"num_slices", 4}});
  auto plan = member.api.post("/api/v1/plan", elastic_spec("c", {{"dcn_fsdp", 2}}, 2));
  ASSERT_EQ(plan.status, 200) << plan;
  EXPECT_EQ(plan.json["ok"], true) << plan;
  const json& shapes = plan.json["elastic"];
  ASSERT_TRUE(shapes.is_array()) << plan;
  ASSERT_EQ(shapes.size(), 3u) << plan;
  EXPECT_EQ(shapes[0]["slices"], 2);
  EXPECT_EQ(shapes[0]["verdict"], "ok") << shapes[0];
  EXPECT_EQ(shapes[0]["parallelism"], (json{{"dcn_data", 1}, {"dcn_fsdp", 2}})) << shapes[0];
  EXPECT_EQ(shapes[0]["changes"], json::array({"dcn_data 2 -> 1"})) << shapes[0];
  EXPECT_EQ(shapes[1]["slices"], 3);
  EXPECT_EQ(shapes[1]["parallelism"], (json{{"dcn_data", 3}, {"dcn_fsdp", 1}})) << shapes[1];
  EXPECT_EQ(shapes[2]["slices"], 4);
  EXPECT_EQ(shapes[2]["changes"], json::array()) << shapes[2];

  // Not elastic: an empty list.
  auto fixed = member.api.post("/api/v1/plan", Podium::run_spec("c", "fixed"));
  ASSERT_EQ(fixed.status, 200) << fixed;
  EXPECT_EQ(fixed.json["elastic"], json::array()) << fixed;
}

TEST_F(ElasticPlan, ImpossibleMinSlicesShapeIsRefusedWithTheReason) {
  auto member = podium().create_user("member");
  podium().create_cluster("c", "cpu-2", {{"num_slices", 4}});
  // Pipeline stages over DCN cannot change: 1 slice and 3 slices have no layout.
  const json spec = elastic_spec("c", {{"dcn_pipeline", 2}}, 1);
  auto plan = member.api.post("/api/v1/plan", spec);
  ASSERT_EQ(plan.status, 200) << plan;
  EXPECT_EQ(plan.json["ok"], false) << plan;
  ASSERT_EQ(plan.json["elastic"].size(), 4u) << plan;
  EXPECT_EQ(plan.json["elastic"][0]["verdict"], "no_layout") << plan;
  EXPECT_EQ(plan.json["elastic"][1]["verdict"], "ok") << plan;
  bool named = false;
  for (const auto& e : plan.json["errors"])
    if (e["code"] == "elastic_min_slices") {
      named = true;
      EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("dcn_pipeline=2 cannot change"));
    }
  EXPECT_TRUE(named) << plan;

  auto refused = member.api.post("/api/v1/runs", spec);
  EXPECT_EQ(refused.status, 422) << refused;
  EXPECT_THAT(refused.body, HasSubstr("elastic_min_slices")) << refused;
  EXPECT_TRUE(member.api.get("/api/v1/runs").json["items"].empty());

  // min_slices 2 works: accepted.
  auto accepted = member.api.post("/api/v1/runs", elastic_spec("c", {{"dcn_pipeline", 2}}, 2));
  EXPECT_EQ(accepted.status, 201) << accepted;

  // Skipping the mesh check accepts the impossible one too (the shape stays unusable for
  // placement unless skipped, which it now is).
  json skipped = spec;
  skipped["name"] = unique_name("skipped");
  skipped["skip_checks"] = {"mesh"};
  auto waived = member.api.post("/api/v1/runs", skipped);
  EXPECT_EQ(waived.status, 201) << waived;
}

}  // namespace
}  // namespace podium::it
