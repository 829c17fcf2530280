#include "engine/core/plan/elastic_shapes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

PlanInput input_for(const json& body, const std::string& accelerator, int cluster_slices) {
  PlanInput in;
  const Parsed<RunSpec> r = parse_run_spec(body);
  EXPECT_THAT(r.errors, IsEmpty()) << (r.errors.empty() ? "" : r.errors.front().message);
  in.spec = r.value.value_or(RunSpec{});
  in.accelerator_name = accelerator;
  in.num_slices = cluster_slices;
  return in;
}

json reference_run(json extra) {
  json spec = {{"name", "e"},
               {"cluster", "c"},
               {"model", "reference-tiny"},
               {"workload", "reference"},
               {"steps", 10},
               {"per_device_batch_size", 4},
               {"max_target_length", 128}};
  spec.update(extra);
  return spec;
}

TEST(ElasticShapes, EveryCountFromMinSlicesUpIsPlanned) {
  auto in = input_for(
      reference_run({{"num_slices", 4}, {"min_slices", 2}, {"parallelism", {{"dcn_fsdp", 2}}}}),
      "cpu-2", 4);
  auto shapes = plan_elastic_shapes(in);
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].slices, 2);
  EXPECT_EQ(shapes[2].slices, 4);
  for (const auto& s : shapes) {
    EXPECT_EQ(s.verdict, "ok") << s.slices << ": " << (s.problems.empty() ? "" : s.problems[0]);
    EXPECT_TRUE(s.usable);
    ASSERT_TRUE(s.plan);
    EXPECT_EQ(s.plan->num_slices, s.slices);
  }
  EXPECT_EQ(shapes[0].layout.dcn.at("dcn_fsdp"), 2);
  EXPECT_EQ(shapes[0].layout.dcn.at("dcn_data"), 1);
  // 3 slices: fsdp gives up its factor.
  EXPECT_EQ(shapes[1].layout.dcn.at("dcn_fsdp"), 1);
  // The plan of a shape checked the mesh with the laid-out values.
  ASSERT_TRUE(shapes[0].plan->mesh);
  EXPECT_TRUE(shapes[0].plan->mesh->ok);

  Plan plan;
  plan.ok = true;
  EXPECT_FALSE(add_min_slices_error(plan, shapes, in.spec));
  EXPECT_TRUE(plan.errors.empty());
  const json j = to_json(shapes);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["slices"], 2);
  EXPECT_EQ(j[0]["verdict"], "ok");
  EXPECT_EQ(j[0]["parallelism"]["dcn_fsdp"], 2);
}

TEST(ElasticShapes, NoShapesWithoutMinSlicesOrWhenItIsTheWholeRun) {
  EXPECT_TRUE(
      plan_elastic_shapes(input_for(reference_run({{"num_slices", 2}}), "cpu-2", 2)).empty());
  EXPECT_TRUE(plan_elastic_shapes(
                  input_for(reference_run({{"num_slices", 2}, {"min_slices", 2}}), "cpu-2", 2))
                  .empty());
}

TEST(ElasticShapes, AnImpossibleMinSlicesShapeRefusesTheSubmission) {
  auto in = input_for(
      reference_run({{"num_slices", 4}, {"min_slices", 1}, {"parallelism", {{"dcn_pipeline", 2}}}}),
      "cpu-2", 4);
  auto shapes = plan_elastic_shapes(in);
  ASSERT_EQ(shapes.size(), 4u);
  EXPECT_EQ(shapes[0].verdict, "no_layout");
  EXPECT_FALSE(shapes[0].usable);
  EXPECT_THAT(shapes[0].problems.at(0), HasSubstr("dcn_pipeline=2 cannot change"));
  EXPECT_EQ(shapes[1].verdict, "ok");
  EXPECT_EQ(shapes[2].verdict, "no_layout");
  Plan plan;
  plan.ok = true;
  ASSERT_TRUE(add_min_slices_error(plan, shapes, in.spec));
  EXPECT_FALSE(plan.ok);
  ASSERT_EQ(plan.errors.size(), 1u);
  EXPECT_EQ(plan.errors[0].code, "elastic_min_slices");
  EXPECT_EQ(plan.errors[0].field, "min_slices");
  EXPECT_EQ(plan.errors[0].check, "mesh");
  EXPECT_FALSE(plan.errors[0].skipped);
  EXPECT_THAT(plan.errors[0].message, HasSubstr("min_slices=1 cannot run"));
  EXPECT_TRUE(has_blocking_errors(plan));
}

TEST(ElasticShapes, SkippingTheMeshCheckWaivesTheLayoutRefusal) {
  auto in = input_for(reference_run({{"num_slices", 4},
                                     {"min_slices", 1},
                                     {"skip_checks", {"mesh"}},
                                     {"parallelism", {{"dcn_pipeline", 2}}}}),
                      "cpu-2", 4);
  auto shapes = plan_elastic_shapes(in);
  ASSERT_FALSE(shapes.empty());
  EXPECT_TRUE(shapes[0].usable);
  Plan plan;
  plan.ok = true;
  ASSERT_TRUE(add_min_slices_error(plan, shapes, in.spec));
  EXPECT_TRUE(plan.errors[0].skipped);
  EXPECT_FALSE(has_blocking_errors(plan));
}

TEST(ElasticShapes, EachShapeHasItsOwnMemoryPlan) {
  // Every shape is planned with its own layout: with fsdp over DCN, fewer slices shard the
  // parameters over fewer devices.
  auto in = input_for(json{{"name", "big"},
                           {"cluster", "c"},
                           {"model", "llama2-7b"},
                           {"steps", 10},
                           {"per_device_batch_size", 4},
                           {"max_target_length", 2048},
                           {"num_slices", 2},
                           {"min_slices", 1},
                           {"parallelism", {{"ici_fsdp", 4}, {"dcn_fsdp", 2}}}},
                      "v5p-8", 2);
  auto shapes = plan_elastic_shapes(in);
  ASSERT_EQ(shapes.size(), 2u);
  ASSERT_TRUE(shapes[0].plan && shapes[0].plan->memory);
  ASSERT_TRUE(shapes[1].plan && shapes[1].plan->memory);
  // On one slice the parameters shard over 4 devices instead of 8: more memory per device.
  EXPECT_GT(shapes[0].plan->memory->per_device_gib, shapes[1].plan->memory->per_device_gib);
}

TEST(ElasticShapes, SpecForShapeReplacesOnlyTheParallelism) {
  auto in = input_for(
      reference_run({{"num_slices", 2}, {"min_slices", 1}, {"parallelism", {{"dcn_fsdp", 2}}}}),
      "cpu-2", 2);
  auto shapes = plan_elastic_shapes(in);
  ASSERT_EQ(shapes.size(), 2u);
  const json stored =
      reference_run({{"num_slices", 2}, {"min_slices", 1}, {"parallelism", {{"dcn_fsdp", 2}}}});
  const json launched = spec_for_shape(stored, shapes[0]);
  EXPECT_EQ(launched["parallelism"], (json{{"dcn_data", 1}, {"dcn_fsdp", 1}}));
  EXPECT_EQ(launched["num_slices"], 2);  // the run's request is unchanged
  EXPECT_EQ(launched["steps"], 10);
}

}  // namespace
}  // namespace podium::core
