// Expected values were worked out by walking JAX's _create_device_mesh_for_nd_torus by hand
// (logical axes last to first, subsets of the remaining physical axes from the largest size down,
// itertools.combinations order) and cross-checked against jax 0.10.2's own mesh_utils
// (bench/fidelity holds the whole planner against it on a corpus of over 1,000 cases).
#include "engine/core/topology/mesh.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/core/topology/accelerator.h"

namespace podium::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

using Assignment = std::vector<std::vector<int>>;

MeshRequest request(std::string_view accelerator, std::map<std::string, int> ici,
                    int num_slices = 1, std::map<std::string, int> dcn = {}) {
  auto parsed = parse_accelerator(accelerator);
  EXPECT_TRUE(parsed.value.has_value()) << accelerator;
  MeshRequest req = mesh_request_for(parsed.value.value_or(AcceleratorType{}), num_slices);
  req.ici = std::move(ici);
  req.dcn = std::move(dcn);
  return req;
}

// Full 12-entry vectors of the current mesh_axes:
// diloco data stage fsdp fsdp_transpose context context_usp_ulysses context_autoregressive
// tensor tensor_sequence expert autoregressive
std::vector<int> current_vector(std::map<size_t, int> values) {
  std::vector<int> v(12, 1);
  for (auto [i, x] : values) v[i] = x;
  return v;
}

Assignment assignment_with(std::map<size_t, std::vector<int>> taken) {
  Assignment a(12);
  for (auto& [i, axes] : taken) a[i] = axes;
  return a;
}

constexpr size_t kData = 1, kStage = 2, kFsdp = 3, kContext = 5, kTensor = 8, kExpert = 10,
                 kAutoregressive = 11;

const char* const kJaxTail =
    ". The size of each axis in your logical mesh must be equal to the product of some subset of "
    "the physical mesh axis sizes. E.g. logical mesh (4, 16) is compatible with physical mesh "
    "4x4x4 since 4=4 and 16=4x4. If you want to split physical axes, set  "
    "allow_split_physical_axes to True.";

// ---- mesh_axes data ----------------------------------------------------------------------------

TEST(MeshAxesTest, CurrentListFirstAndOlderReleasesAvailable) {
  const auto& versions = maxtext_mesh_axes_versions();
  ASSERT_FALSE(versions.empty());
  EXPECT_EQ(versions.front().version, "current");
  EXPECT_THAT(versions.front().axes,
              ElementsAre("diloco", "data", "stage", "fsdp", "fsdp_transpose", "context",
                          "context_usp_ulysses", "context_autoregressive", "tensor",
                          "tensor_sequence", "expert", "autoregressive"));
  const MeshAxesVersion* v2025 = find_mesh_axes("2025");
  ASSERT_NE(v2025, nullptr);
  EXPECT_EQ(v2025->axes.size(), 13u);
  const MeshAxesVersion* early = find_mesh_axes("2024-early");
  ASSERT_NE(early, nullptr);
  EXPECT_THAT(early->axes, ElementsAre("data", "fsdp", "fsdp_transpose", "sequence", "tensor",
                                       "autoregressive"));
  EXPECT_EQ(find_mesh_axes("nope"), nullptr);
  EXPECT_EQ(maxtext_parallelism_key("stage", true), "ici_pipeline_parallelism");
  EXPECT_EQ(maxtext_parallelism_key("fsdp", false), "dcn_fsdp_parallelism");
}

// ---- 4-D tpu7x [x, y, z, 2] ---------------------------------------------------------------------

TEST(MeshCheckTest, ALModelOnTpu7x64Fsdp16Tensor4Maps) {
  // Domain brief §6: ALModel 8B on tpu7x-64 with ici_fsdp=16, ici_tensor=4.
  const MeshResult r = check_mesh(request("tpu7x-64", {{"ici_fsdp", 16}, {"ici_tensor", 4}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.method, "nd_torus");
  EXPECT_EQ(r.ici, current_vector({{kFsdp, 16}, {kTensor, 4}}));
  EXPECT_EQ(r.dcn, current_vector({}));
  // tensor (walked first) takes x and the core axis (2 x 2 = 4); fsdp takes y, z (4 x 4 = 16).
  EXPECT_EQ(r.assignment, assignment_with({{kFsdp, {1, 2}}, {kTensor, {0, 3}}}));
  EXPECT_EQ(r.error_code, "");
}

TEST(MeshCheckTest, Tpu7x64ContextTwoCannotMapAfterTensorTakesXAndCore) {
  const MeshResult r =
      check_mesh(request("tpu7x-64", {{"fsdp", 8}, {"context", 2}, {"tensor", 4}}));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_code, "mesh_unmappable");
  EXPECT_EQ(r.message,
            std::string("Failed to find assignment for logical_axis_index 5 of size 2 with "
                        "remaining assignable mesh [0, 4, 4, 0]") +
                kJaxTail);
  EXPECT_EQ(r.logical_axis_index, 5);
  EXPECT_THAT(r.remaining_mesh, ElementsAre(0, 4, 4, 0));
  EXPECT_THAT(r.hint, HasSubstr("ici_context_parallelism=2"));
  EXPECT_EQ(r.ici, current_vector({{kFsdp, 8}, {kContext, 2}, {kTensor, 4}}));
}

TEST(MeshCheckTest, Tpu7x64DefaultFsdpTakesAllFourAxesWithCurrentJax) {
  const MeshResult r = check_mesh(request("tpu7x-64", {}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.ici, current_vector({{kFsdp, 64}}));
  EXPECT_EQ(r.assignment, assignment_with({{kFsdp, {0, 1, 2, 3}}}));
}

TEST(MeshCheckTest, Tpu7x64DefaultFsdpFailsUnderTheClassicThreeAxisRule) {
  MeshRequest req = request("tpu7x-64", {});
  req.jax_rules = "classic";
  const MeshResult r = check_mesh(req);
  EXPECT_EQ(r.error_code, "mesh_unmappable");
  EXPECT_EQ(r.message, std::string("Failed to find assignment for logical_axis_index 3 of size 64 "
                                   "with remaining assignable mesh [2, 4, 4, 2]") +
                           kJaxTail);
}

TEST(MeshCheckTest, Tpu7xCoreAxisPriorityIsOptIn) {
  // fsdp=32 can be x*y*z or y*z*core. jax 0.10.2 (requirements/workload.txt) walks the subsets
  // in itertools.combinations order and gives data the core axis (checked with its
  // _create_device_mesh_for_nd_torus on [2, 4, 4, 2]: data (3,), fsdp (0, 1, 2));
  // the core-axis priority of jax-ml/jax PR #39340 would give fsdp the core axis instead.
  const MeshResult r = check_mesh(request("tpu7x-64", {{"fsdp", 32}, {"data", 2}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.assignment, assignment_with({{kData, {3}}, {kFsdp, {0, 1, 2}}}));

  MeshRequest priority = request("tpu7x-64", {{"fsdp", 32}, {"data", 2}});
  priority.jax_rules = "core_priority";
  const MeshResult p = check_mesh(priority);
  ASSERT_TRUE(p.ok) << p.message;
  EXPECT_EQ(p.assignment, assignment_with({{kData, {0}}, {kFsdp, {1, 2, 3}}}));

  MeshRequest classic = request("tpu7x-64", {{"fsdp", 32}, {"data", 2}});
  classic.jax_rules = "classic";
  const MeshResult c = check_mesh(classic);
  ASSERT_TRUE(c.ok) << c.message;
  EXPECT_EQ(c.assignment, assignment_with({{kData, {3}}, {kFsdp, {0, 1, 2}}}));
}

TEST(MeshCheckTest, Tpu7xWithoutCorePriorityRefusesWhatThePriorityWouldMap) {
  // bench/fidelity mesh corpus case 00833: jax 0.10.2 gives autoregressive=16 the x and y axes
  // (the first 2-subset of [4, 4, 8, 2] whose product is 16), leaving [0, 0, 8, 2] where
  // tensor_sequence=4 fits nowhere. Under the core-axis priority it takes z and core and maps.
  const std::map<std::string, int> ici = {
      {"autoregressive", 16}, {"tensor_sequence", 4}, {"context", 4}, {"data", 1}};
  const MeshResult r = check_mesh(request("tpu7x-4x4x8", ici));
  EXPECT_EQ(r.error_code, "mesh_unmappable");
  EXPECT_EQ(r.logical_axis_index, 9);
  EXPECT_THAT(r.remaining_mesh, ElementsAre(0, 0, 8, 2));

  MeshRequest priority = request("tpu7x-4x4x8", ici);
  priority.jax_rules = "core_priority";
  EXPECT_TRUE(check_mesh(priority).ok);
}

TEST(MeshCheckTest, Tpu7x64TensorTwoTakesTheFirstAxisOfSizeTwo) {
  // jax 0.10.2: tensor=2 takes physical axis 0 (x, size 2), the first size-2 axis in
  // combinations order; fsdp=32 the rest.
  const MeshResult r = check_mesh(request("tpu7x-64", {{"tensor", 2}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.ici, current_vector({{kFsdp, 32}, {kTensor, 2}}));
  EXPECT_EQ(r.assignment, assignment_with({{kFsdp, {1, 2, 3}}, {kTensor, {0}}}));
}

TEST(MeshCheckTest, Tpu7x128ExpertTensorFsdp) {
  const MeshResult r =
      check_mesh(request("tpu7x-128", {{"fsdp", 8}, {"expert", 4}, {"tensor", 4}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.assignment, assignment_with({{kFsdp, {2, 3}}, {kTensor, {1}}, {kExpert, {0}}}));
}

TEST(MeshCheckTest, Tpu7x64ExpertEightFsdpEight) {
  const MeshResult r = check_mesh(request("tpu7x-64", {{"fsdp", 8}, {"expert", 8}}));
  ASSERT_TRUE(r.ok) << r.message;
  // jax 0.10.2 on [2, 4, 4, 2]: expert (0, 1), fsdp (2, 3).
  EXPECT_EQ(r.assignment, assignment_with({{kFsdp, {2, 3}}, {kExpert, {0, 1}}}));
}

TEST(MeshCheckTest, SmallTpu7xSlicesUseJaxsRingHandler) {
  // tpu7x-32 (2x2x4): JAX's _7x_create_device_mesh lays out up to 32 devices directly, so a mesh
  // the torus walk would reject still works.
  const std::map<std::string, int> ici = {{"data", 2}, {"fsdp", 2}, {"tensor", 8}};
  const MeshResult r = check_mesh(request("tpu7x-32", ici));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.method, "device_kind_handler");
  EXPECT_EQ(r.assignment, Assignment(12));

  MeshRequest classic = request("tpu7x-32", ici);
  classic.jax_rules = "classic";
  const MeshResult c = check_mesh(classic);
  EXPECT_EQ(c.error_code, "mesh_unmappable");
  EXPECT_THAT(c.message, StartsWith("Failed to find assignment for logical_axis_index 3 of size "
                                    "2 with remaining assignable mesh [0, 0, 4, 0]."));
}

// ---- 3-D v4 / v5p [x, y, z]
// ----------------------------------------------------------------------

TEST(MeshCheckTest, V5p128Fsdp16Tensor4) {
  const MeshResult r = check_mesh(request("v5p-128", {{"fsdp", 16}, {"tensor", 4}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.assignment, assignment_with({{kFsdp, {1, 2}}, {kTensor, {0}}}));
}

TEST(MeshCheckTest, V5p128Tensor8CannotMapOntoAFourCube) {
  const MeshResult r = check_mesh(request("v5p-128", {{"fsdp", 8}, {"tensor", 8}}));
  EXPECT_EQ(r.error_code, "mesh_unmappable");
  EXPECT_EQ(r.message, std::string("Failed to find assignment for logical_axis_index 8 of size 8 "
                                   "with remaining assignable mesh [4, 4, 4]") +
                           kJaxTail);
  EXPECT_THAT(r.hint, HasSubstr("ici_tensor_parallelism=8"));
  EXPECT_THAT(r.hint, HasSubstr("[4, 4, 4]"));
}

TEST(MeshCheckTest, V5p128SplitPhysicalAxesLiftsTheRestriction) {
  MeshRequest req = request("v5p-128", {{"fsdp", 8}, {"tensor", 8}});
  req.allow_split_physical_axes = true;
  const MeshResult r = check_mesh(req);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.method, "split_physical_axes");
  // jax 0.10.2's _create_device_mesh_for_nd_torus_splitting_axes on [4, 4, 4]: tensor takes
  // 4 x 2 x 1 (whole x, half of y), fsdp 1 x 2 x 4.
  EXPECT_EQ(r.assignment, assignment_with({{kFsdp, {1, 2}}, {kTensor, {0, 1}}}));
}

TEST(MeshCheckTest, SplitSearchFailsWhereJaxFindsNoSplit) {
  // bench/fidelity mesh corpus case 00700 (v5p 16x20x28, 8960 chips): context=32 takes 16 x 2 of
  // x and y; data=280 = 2^3 x 5 x 7 then needs three factors 2, and JAX's _get_prime_factors
  // lists 10 as [2, 5] and 28 as [7] only (its for-else drops the 2s), so no split exists. JAX
  // then fails with TypeError (it assigns None). Podium used to accept every split request.
  MeshRequest req = request("v5p-16x20x28", {{"context", 32}, {"data", 280}});
  req.allow_split_physical_axes = true;
  const MeshResult r = check_mesh(req);
  EXPECT_EQ(r.error_code, "mesh_unmappable");
  EXPECT_EQ(r.logical_axis_index, 1);
  EXPECT_THAT(r.remaining_mesh, ElementsAre(1, 10, 28));
  EXPECT_THAT(r.message, HasSubstr("split search"));

  // context=14 is "split" as 7 alone (14 -> [7]): the splits then do not multiply to the devices
  // and JAX's reshape fails (ValueError; checked with create_device_mesh on libtpu's devices).
  // context=28 needs no split: the torus walk gives it the whole z axis.
  MeshRequest seven = request("v5p-16x20x28", {{"context", 14}, {"data", 640}});
  seven.allow_split_physical_axes = true;
  const MeshResult s = check_mesh(seven);
  EXPECT_EQ(s.error_code, "mesh_unmappable");
  EXPECT_EQ(s.logical_axis_index, 5);
  MeshRequest whole = request("v5p-16x20x28", {{"context", 28}, {"data", 320}});
  whole.allow_split_physical_axes = true;
  EXPECT_EQ(check_mesh(whole).method, "nd_torus");
}

TEST(MeshCheckTest, V5p2x2x2HasNoDeviceKindHandler) {
  // libtpu names v5p devices "TPU v5"; JAX's v5p handler is registered for "TPU v5p" and never
  // runs, so the torus walk lays v5p-16 out.
  const MeshResult r = check_mesh(request("v5p-16", {{"tensor", 2}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.method, "nd_torus");
}

TEST(MeshCheckTest, V5p256Tensor8TakesTheLongAxis) {
  const MeshResult r = check_mesh(request("v5p-256", {{"tensor", 8}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.ici, current_vector({{kFsdp, 16}, {kTensor, 8}}));
  EXPECT_EQ(r.assignment, assignment_with({{kFsdp, {0, 1}}, {kTensor, {2}}}));
}

TEST(MeshCheckTest, V4Data2Fsdp8OnTwoByTwoByFour) {
  const MeshResult r = check_mesh(request("v4-32", {{"data", 2}, {"fsdp", 8}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.assignment, assignment_with({{kData, {1}}, {kFsdp, {0, 2}}}));
}

TEST(MeshCheckTest, PipelineKeyFillsTheStageAxis) {
  const MeshResult r =
      check_mesh(request("v5p-128", {{"ici_pipeline_parallelism", 4}, {"ici_fsdp", 16}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.ici, current_vector({{kStage, 4}, {kFsdp, 16}}));
  EXPECT_EQ(r.assignment, assignment_with({{kStage, {2}}, {kFsdp, {0, 1}}}));
}

TEST(MeshCheckTest, MinusOneOnDataIsFilledIn) {
  const MeshResult r = check_mesh(request("v5p-128", {{"data", -1}, {"fsdp", 4}, {"tensor", 4}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.ici, current_vector({{kData, 4}, {kFsdp, 4}, {kTensor, 4}}));
  EXPECT_EQ(r.assignment, assignment_with({{kData, {2}}, {kFsdp, {1}}, {kTensor, {0}}}));
}

// ---- 2-D v5e / v6e [x, y, 1]
// ---------------------------------------------------------------------

TEST(MeshCheckTest, V6e256SizeOneAxisTakesTheTrailingOne) {
  // JAX lets the last size-1 logical axis take the physical axis of size 1.
  const MeshResult r = check_mesh(request("v6e-256", {{"fsdp", 16}, {"tensor", 16}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.assignment, assignment_with({{kFsdp, {1}}, {kTensor, {0}}, {kAutoregressive, {2}}}));
}

TEST(MeshCheckTest, V6e256Tensor4CannotMap) {
  const MeshResult r = check_mesh(request("v6e-256", {{"fsdp", 64}, {"tensor", 4}}));
  EXPECT_EQ(r.error_code, "mesh_unmappable");
  EXPECT_THAT(r.message, StartsWith("Failed to find assignment for logical_axis_index 8 of size 4 "
                                    "with remaining assignable mesh [16, 16, 0]."));
}

TEST(MeshCheckTest, V5e256Tensor8CannotMap) {
  const MeshResult r = check_mesh(request("v5litepod-256", {{"tensor", 8}}));
  EXPECT_EQ(r.error_code, "mesh_unmappable");
  EXPECT_THAT(r.message, StartsWith("Failed to find assignment for logical_axis_index 8 of size 8 "
                                    "with remaining assignable mesh [16, 16, 0]."));
}

TEST(MeshCheckTest, V6e16Tensor2CannotMap) {
  const MeshResult r = check_mesh(request("v6e-16", {{"fsdp", 8}, {"tensor", 2}}));
  EXPECT_EQ(r.error_code, "mesh_unmappable");
  EXPECT_THAT(r.message, StartsWith("Failed to find assignment for logical_axis_index 8 of size 2 "
                                    "with remaining assignable mesh [4, 4, 0]."));
}

TEST(MeshCheckTest, V6e8UsesTheRingHandlerWhereTheTorusWalkWouldFail) {
  const std::map<std::string, int> ici = {{"data", 2}, {"fsdp", 2}, {"tensor", 2}};
  const MeshResult r = check_mesh(request("v6e-8", ici));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.method, "device_kind_handler");

  MeshRequest classic = request("v6e-8", ici);
  classic.jax_rules = "classic";
  const MeshResult c = check_mesh(classic);
  EXPECT_EQ(c.error_code, "mesh_unmappable");
  EXPECT_THAT(c.message, StartsWith("Failed to find assignment for logical_axis_index 3 of size "
                                    "2 with remaining assignable mesh [0, 4, 0]."));
}

TEST(MeshCheckTest, V6e16WholeSliceAxis) {
  const MeshResult r = check_mesh(request("v6e-16", {}));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.method, "device_kind_handler");  // one axis spans all 16 devices
  MeshRequest classic = request("v6e-16", {});
  classic.jax_rules = "classic";
  const MeshResult c = check_mesh(classic);
  ASSERT_TRUE(c.ok);
  EXPECT_EQ(c.assignment, assignment_with({{kFsdp, {0, 1}}, {kAutoregressive, {2}}}));
}

// ---- -1 filling and product checks (MaxText's wording) ----------------------------------------

TEST(MeshCheckTest, TwoUnspecifiedIciAxes) {
  // ici_fsdp_parallelism defaults to -1, so a second -1 is one too many.
  const MeshResult r = check_mesh(request("tpu7x-64", {{"tensor", -1}}));
  EXPECT_EQ(r.error_code, "invalid_parallelism");
  EXPECT_EQ(r.message,
            "Found unspecified values (-1) for more than one ICI      parallelism axis. At most "
            "one axis can be unspecified.");
  EXPECT_THAT(r.hint, HasSubstr("ici_fsdp_parallelism defaults to -1"));
}

TEST(MeshCheckTest, UnspecifiedValueNotAWholeNumber) {
  const MeshResult r = check_mesh(request("tpu7x-64", {{"tensor", 3}}));
  EXPECT_EQ(r.error_code, "mesh_product_mismatch");
  EXPECT_EQ(r.message,
            "Unspecified value unable to be determined with the given      ICI parallelism values");
  EXPECT_THAT(r.hint, HasSubstr("multiply to 3, which does not divide the 64 devices"));
}

TEST(MeshCheckTest, UnspecifiedValueBelowOne) {
  const MeshResult r = check_mesh(request("v5p-128", {{"tensor", 128}}));
  EXPECT_EQ(r.error_code, "mesh_product_mismatch");
  EXPECT_EQ(r.message,
            "Unspecified value unable to be determined with the given      ICI parallelism values");
}

TEST(MeshCheckTest, IciProductMismatch) {
  const MeshResult r = check_mesh(request("tpu7x-64", {{"fsdp", 16}, {"tensor", 8}}));
  EXPECT_EQ(r.error_code, "mesh_product_mismatch");
  EXPECT_EQ(r.message,
            "Number of devices per slice 64 does not match the product of the ICI parallelism 128");
  EXPECT_THAT(r.hint, HasSubstr("multiply to the 64 devices in one slice"));
}

// ---- multi-slice DCN ---------------------------------------------------------------------------

TEST(MeshCheckTest, TwoSlicesDefaultDcnDataIsFilled) {
  const MeshResult r = check_mesh(request("v5p-128", {{"fsdp", 16}, {"tensor", 4}}, 2));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.dcn, current_vector({{kData, 2}}));
  EXPECT_EQ(r.assignment, assignment_with({{kFsdp, {1, 2}}, {kTensor, {0}}}));
}

TEST(MeshCheckTest, DcnProductMismatch) {
  const MeshResult r = check_mesh(request("v6e-256", {}, 4, {{"dcn_data_parallelism", 2}}));
  EXPECT_EQ(r.error_code, "mesh_product_mismatch");
  EXPECT_EQ(r.message, "Number of slices 4 does not match the product of the DCN parallelism 2");
  EXPECT_THAT(r.hint, HasSubstr("or change num_slices"));
}

TEST(MeshCheckTest, DcnTwoUnspecifiedAxes) {
  const MeshResult r = check_mesh(request("v6e-256", {}, 2, {{"fsdp", -1}}));
  EXPECT_EQ(r.error_code, "invalid_parallelism");
  EXPECT_EQ(r.message,
            "Found unspecified values (-1) for more than one DCN      parallelism axis. At most "
            "one axis can be unspecified.");
}

TEST(MeshCheckTest, DcnUnspecifiedNotAWholeNumber) {
  const MeshResult r =
      check_mesh(request("tpu7x-64", {{"fsdp", 16}, {"tensor", 4}}, 4, {{"dcn_fsdp", 3}}));
  EXPECT_EQ(r.error_code, "mesh_product_mismatch");
  EXPECT_EQ(r.message,
            "Unspecified value unable to be determined with the given      DCN parallelism values");
}

TEST(MeshCheckTest, IciIsCheckedBeforeDcn) {
  const MeshResult r =
      check_mesh(request("tpu7x-64", {{"fsdp", 16}, {"tensor", 8}}, 4, {{"data", 3}}));
  EXPECT_EQ(r.message,
            "Number of devices per slice 64 does not match the product of the ICI parallelism 128");
}

TEST(MeshCheckTest, EachSliceMapsOnItsOwn) {
  const MeshResult r =
      check_mesh(request("tpu7x-64", {{"fsdp", 8}, {"context", 2}, {"tensor", 4}}, 2));
  EXPECT_EQ(r.error_code, "mesh_unmappable");
  EXPECT_EQ(r.logical_axis_index, 5);
  EXPECT_EQ(r.dcn, current_vector({{kData, 2}}));
}

TEST(MeshCheckTest, DcnValuesAreIgnoredOnOneSlice) {
  const MeshResult r = check_mesh(
      request("v5p-128", {{"fsdp", 16}, {"tensor", 4}}, 1, {{"dcn_fsdp_parallelism", 2}}));
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.dcn, current_vector({}));
  EXPECT_THAT(r.warnings, ElementsAre("dcn_fsdp_parallelism=2 is ignored: MaxText reads DCN "
                                      "parallelism only when num_slices > 1"));
}

// ---- GPU / CPU: no torus ----------------------------------------------------------------------

TEST(MeshCheckTest, GpuAndCpuMeshesAreReshapes) {
  const MeshResult gpu = check_mesh(request("h100-16", {{"fsdp", 8}, {"data", 2}}));
  ASSERT_TRUE(gpu.ok) << gpu.message;
  EXPECT_EQ(gpu.method, "reshape");
  EXPECT_EQ(gpu.assignment, Assignment(12));
  const MeshResult cpu = check_mesh(request("cpu-4", {}));
  ASSERT_TRUE(cpu.ok);
  EXPECT_EQ(cpu.ici, current_vector({{kFsdp, 4}}));
  const MeshResult bad = check_mesh(request("h100-16", {{"fsdp", 3}}));
  EXPECT_EQ(bad.message,
            "Number of devices per slice 16 does not match the product of the ICI parallelism 3");
}

// ---- keys, versions and invalid requests --------------------------------------------------------

TEST(MeshCheckTest, UnknownAxisNamesTheReleaseThatHasIt) {
  const MeshResult r = check_mesh(request("v5p-128", {{"ici_sequence_parallelism", 2}}));
  EXPECT_EQ(r.error_code, "unknown_mesh_axis");
  EXPECT_THAT(r.message, StartsWith("unknown mesh axis 'ici_sequence_parallelism' in the ici "
                                    "parallelism: MaxText mesh_axes (current) are diloco, data"));
  EXPECT_THAT(r.hint, HasSubstr("'sequence' is a mesh axis in MaxText release(s) 2025, 2024, "
                                "2024-early"));
  EXPECT_EQ(check_mesh(request("v5p-128", {{"ici_stage", 2}})).error_code, "unknown_mesh_axis");
  EXPECT_EQ(check_mesh(request("v5p-128", {{"dcn_data", 2}})).error_code, "unknown_mesh_axis");
}

TEST(MeshCheckTest, OlderReleaseAxesChangeTheFailingIndex) {
  MeshRequest req = request("v5p-128", {{"fsdp", 8}, {"sequence", 2}, {"tensor", 4}});
  req.version = "2024-early";
  const MeshResult r = check_mesh(req);
  EXPECT_EQ(r.axes.size(), 6u);
  EXPECT_EQ(r.error_code, "mesh_unmappable");
  EXPECT_THAT(r.message, StartsWith("Failed to find assignment for logical_axis_index 3 of size "
                                    "2 with remaining assignable mesh [0, 4, 4]."));
}

TEST(MeshCheckTest, InvalidValuesAndRequests) {
  const MeshResult zero = check_mesh(request("v5p-128", {{"tensor", 0}}));
  EXPECT_EQ(zero.error_code, "invalid_parallelism");
  EXPECT_THAT(zero.message, StartsWith("ici_tensor_parallelism=0 is not a valid parallelism"));
  const MeshResult twice = check_mesh(request("v5p-128", {{"fsdp", 16}, {"ici_fsdp", 8}}));
  EXPECT_EQ(twice.error_code, "invalid_parallelism");

  MeshRequest mismatch = request("v5p-128", {});
  mismatch.physical_mesh = {4, 4, 8};
  EXPECT_EQ(check_mesh(mismatch).error_code, "invalid_request");
  MeshRequest version = request("v5p-128", {});
  version.version = "1999";
  EXPECT_EQ(check_mesh(version).error_code, "invalid_request");
}

TEST(MeshCheckTest, ToJson) {
  const nlohmann::json ok = to_json(check_mesh(request("tpu7x-64", {{"fsdp", 16}, {"tensor", 4}})));
  EXPECT_EQ(ok.at("ok"), true);
  EXPECT_EQ(ok.at("ici").size(), 12u);
  EXPECT_EQ(ok.at("assignment")[3], nlohmann::json::array({1, 2}));
  EXPECT_EQ(ok.at("method"), "nd_torus");
  EXPECT_FALSE(ok.contains("error"));
  const nlohmann::json bad =
      to_json(check_mesh(request("tpu7x-64", {{"fsdp", 8}, {"context", 2}, {"tensor", 4}})));
  EXPECT_EQ(bad.at("ok"), false);
  EXPECT_EQ(bad.at("error").at("code"), "mesh_unmappable");
  EXPECT_EQ(bad.at("error").at("logical_axis_index"), 5);
  EXPECT_EQ(bad.at("error").at("remaining_mesh"), nlohmann::json::array({0, 4, 4, 0}));
}

// ---- alternatives -------------------------------------------------------------------------------

// Every proposal must itself pass the check it is proposed for.
void expect_all_pass(const MeshRequest& base, const std::vector<MeshAlternative>& alts) {
  for (const auto& alt : alts) {
    MeshRequest req = base;
    req.ici = alt.ici;
    req.dcn = alt.dcn;
    EXPECT_TRUE(check_mesh(req).ok) << alt.description;
  }
}

TEST(MeshAlternativesTest, UnmappableTpu7xContextKeepsUserValuesWherePossible) {
  const MeshRequest req = request("tpu7x-64", {{"fsdp", 8}, {"context", 2}, {"tensor", 4}});
  const auto alts = propose_mesh_alternatives(req);
  ASSERT_FALSE(alts.empty());
  EXPECT_LE(alts.size(), 5u);
  expect_all_pass(req, alts);
  EXPECT_EQ(alts.front().changed_axes, 2);  // the product is fixed, so two values move together
  for (size_t i = 1; i < alts.size(); ++i)
    EXPECT_LE(alts[i - 1].changed_axes, alts[i].changed_axes);
  // Two factor moves, no axis switched off, and tensor (the most network-intensive axis the
  // user chose) kept: context takes y, fsdp z, tensor x and the core axis.
  EXPECT_EQ(alts.front().ici,
            (std::map<std::string, int>{{"context", 4}, {"fsdp", 4}, {"tensor", 4}}));
  EXPECT_EQ(alts.front().dcn, (std::map<std::string, int>{{"data", 1}}));
  EXPECT_EQ(alts.front().description,
            "ici_fsdp_parallelism=4 ici_context_parallelism=4 ici_tensor_parallelism=4 "
            "(fsdp 8 -> 4, context 2 -> 4)");
}

TEST(MeshAlternativesTest, NonDividingValueWithAutoFsdpChangesOneAxis) {
  const MeshRequest req = request("tpu7x-64", {{"tensor", 3}});
  const auto alts = propose_mesh_alternatives(req, 3);
  ASSERT_EQ(alts.size(), 3u);
  expect_all_pass(req, alts);
  EXPECT_EQ(alts[0].changed_axes, 1);  // fsdp is -1 (auto) and absorbs the change
  EXPECT_EQ(alts[0].ici, (std::map<std::string, int>{{"fsdp", 32}, {"tensor", 2}}));
  EXPECT_EQ(alts[1].ici, (std::map<std::string, int>{{"fsdp", 16}, {"tensor", 4}}));
  EXPECT_EQ(alts[2].ici, (std::map<std::string, int>{{"fsdp", 8}, {"tensor", 8}}));
  EXPECT_EQ(alts[0].description,
            "ici_fsdp_parallelism=32 ici_tensor_parallelism=2 (fsdp filled in as 32, tensor 3 -> "
            "2)");
}

TEST(MeshAlternativesTest, DcnMismatchProposesSlicesOnData) {
  const MeshRequest req = request("v6e-256", {}, 4, {{"dcn_data_parallelism", 2}});
  const auto alts = propose_mesh_alternatives(req);
  ASSERT_FALSE(alts.empty());
  expect_all_pass(req, alts);
  EXPECT_EQ(alts.front().changed_axes, 1);
  EXPECT_EQ(alts.front().dcn, (std::map<std::string, int>{{"data", 4}}));
  EXPECT_THAT(alts.front().description, HasSubstr("dcn_data_parallelism=4"));
}

TEST(MeshAlternativesTest, NoneWhenTheMeshAlreadyWorksOrTheRequestIsUnreadable) {
  EXPECT_THAT(propose_mesh_alternatives(request("tpu7x-64", {{"fsdp", 16}, {"tensor", 4}})),
              IsEmpty());
  EXPECT_THAT(propose_mesh_alternatives(request("tpu7x-64", {{"bogus", 2}})), IsEmpty());
  EXPECT_THAT(propose_mesh_alternatives(request("tpu7x-64", {{"tensor", 3}}), 0), IsEmpty());
}

TEST(MeshAlternativesTest, MoreActiveAxesThanPhysicalAxesNeedsMoreThanThreeChanges) {
  // Six active logical axes cannot all sit on the 4 physical axes of a tpu7x 16x16x24 slice.
  const MeshRequest req = request("tpu7x-12288", {{"data", 3},
                                                  {"fsdp", 16},
                                                  {"context", 4},
                                                  {"tensor", 8},
                                                  {"expert", 8},
                                                  {"ici_pipeline", 2}});
  const auto alts = propose_mesh_alternatives(req);
  ASSERT_EQ(alts.size(), 5u);
  expect_all_pass(req, alts);
  EXPECT_EQ(alts.front().changed_axes, 4);
  EXPECT_EQ(alts.front().description,
            "ici_pipeline_parallelism=2 ici_fsdp_parallelism=16 ici_tensor_parallelism=24 "
            "ici_expert_parallelism=16 (data 3 -> 1, context 4 -> 1, tensor 8 -> 24, expert 8 -> "
            "16)");
}

TEST(MeshAlternativesTest, V5pTensor8) {
  const MeshRequest req = request("v5p-128", {{"fsdp", 8}, {"tensor", 8}});
  const auto alts = propose_mesh_alternatives(req);
  ASSERT_FALSE(alts.empty());
  expect_all_pass(req, alts);
  EXPECT_EQ(alts.front().ici, (std::map<std::string, int>{{"fsdp", 16}, {"tensor", 4}}));
  const nlohmann::json j = to_json(alts.front());
  EXPECT_EQ(j.at("changed_axes"), 2);
  EXPECT_EQ(j.at("ici").at("tensor"), 4);
}

}  // namespace
}  // namespace podium::core
