#include "engine/core/topology/accelerator.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

AcceleratorType parse_ok(std::string_view text) {
  auto parsed = parse_accelerator(text);
  EXPECT_TRUE(parsed.value.has_value()) << text << ": " << parsed.summary();
  EXPECT_TRUE(parsed.errors.empty());
  EXPECT_TRUE(parsed.valid_choices.empty());
  return parsed.value.value_or(AcceleratorType{});
}

// A refused name: its one error (about the whole name) and the choices offered instead.
struct Refusal {
  std::string field;
  std::string message;
  std::vector<std::string> valid_choices;
};

Refusal parse_error(std::string_view text) {
  auto parsed = parse_accelerator(text);
  EXPECT_FALSE(parsed.value.has_value()) << text;
  EXPECT_EQ(parsed.errors.size(), 1u) << text;
  if (parsed.errors.empty()) return {};
  return {parsed.errors.front().field, parsed.errors.front().message, parsed.valid_choices};
}

TEST(AcceleratorTest, Tpu7x64IsThirtyTwoChipsSixtyFourDevicesEightHosts) {
  const AcceleratorType t = parse_ok("tpu7x-64");
  EXPECT_EQ(t.family, "tpu7x");
  EXPECT_EQ(t.type, "tpu7x-64");
  EXPECT_EQ(t.topology, "2x4x4");
  EXPECT_EQ(t.kind, AcceleratorKind::tpu);
  EXPECT_EQ(t.chips_per_slice, 32);
  EXPECT_EQ(t.devices_per_slice, 64);
  EXPECT_EQ(t.hosts_per_slice, 8);
  EXPECT_EQ(t.devices_per_chip, 2);
  EXPECT_THAT(t.physical_mesh, ElementsAre(2, 4, 4, 2));
  // Per device (half a chip): 2307 / 2 TFLOP/s and 192 / 2 GiB.
  EXPECT_DOUBLE_EQ(t.peak_tflops_per_device, 1153.5);
  EXPECT_DOUBLE_EQ(t.hbm_gib_per_device, 96.0);
  // Usable: 94.75 GiB per device (MaxText's Memstats "GB" is bytes / 2**30).
  EXPECT_DOUBLE_EQ(t.usable_hbm_gib_per_device, 94.75);
  EXPECT_EQ(t.cloud_type, "tpu7x-64");
}

TEST(AcceleratorTest, Tpu7xTopologyFormNamesTheCanonicalType) {
  const AcceleratorType t = parse_ok("tpu7x-2x4x4");
  EXPECT_EQ(t.type, "tpu7x-64");
  EXPECT_EQ(t.chips_per_slice, 32);
  EXPECT_EQ(t.devices_per_slice, 64);
  EXPECT_EQ(t.hosts_per_slice, 8);

  const AcceleratorType small = parse_ok("tpu7x-2x2x4");
  EXPECT_EQ(small.type, "tpu7x-32");
  EXPECT_EQ(small.topology, "2x2x4");
  EXPECT_EQ(small.chips_per_slice, 16);
  EXPECT_EQ(small.devices_per_slice, 32);
  EXPECT_EQ(small.hosts_per_slice, 4);
  EXPECT_THAT(small.physical_mesh, ElementsAre(2, 2, 4, 2));
}

TEST(AcceleratorTest, Tpu7x32IsSixteenChips) {
  const AcceleratorType t = parse_ok("tpu7x-32");
  EXPECT_EQ(t.topology, "2x2x4");
  EXPECT_EQ(t.chips_per_slice, 16);
  EXPECT_EQ(t.devices_per_slice, 32);
  EXPECT_EQ(t.hosts_per_slice, 4);
}

TEST(AcceleratorTest, V6e256IsSixtyFourHostsOnASixteenBySixteenTorus) {
  const AcceleratorType t = parse_ok("v6e-256");
  EXPECT_EQ(t.type, "v6e-256");
  EXPECT_EQ(t.topology, "16x16");
  EXPECT_EQ(t.chips_per_slice, 256);
  EXPECT_EQ(t.devices_per_slice, 256);
  EXPECT_EQ(t.hosts_per_slice, 64);
  EXPECT_THAT(t.physical_mesh, ElementsAre(16, 16, 1));
  EXPECT_DOUBLE_EQ(t.peak_tflops_per_device, 918.0);
  EXPECT_DOUBLE_EQ(t.hbm_gib_per_device, 32.0);
}

TEST(AcceleratorTest, SingleHostV5eAndV6eSlices) {
  for (std::string_view text : {"v6e-8", "v5e-8", "v5litepod-8", "v6e-2x4", "v5litepod-2x4"}) {
    const AcceleratorType t = parse_ok(text);
    EXPECT_EQ(t.topology, "2x4") << text;
    EXPECT_EQ(t.chips_per_slice, 8) << text;
    EXPECT_EQ(t.hosts_per_slice, 1) << text;
    EXPECT_THAT(t.physical_mesh, ElementsAre(2, 4, 1)) << text;
  }
  const AcceleratorType one = parse_ok("v6e-1");
  EXPECT_EQ(one.topology, "1x1");
  EXPECT_EQ(one.chips_per_slice, 1);
  EXPECT_EQ(one.devices_per_slice, 1);
  EXPECT_EQ(one.hosts_per_slice, 1);
  EXPECT_EQ(parse_ok("v6e-4").hosts_per_slice, 1);
  EXPECT_EQ(parse_ok("v6e-16").hosts_per_slice, 4);
}

TEST(AcceleratorTest, V5eAliasAndCloudName) {
  const AcceleratorType t = parse_ok("v5litepod-16");
  EXPECT_EQ(t.family, "v5e");
  EXPECT_EQ(t.type, "v5e-16");
  EXPECT_EQ(t.cloud_type, "v5litepod-16");
  EXPECT_EQ(t.topology, "4x4");
  EXPECT_EQ(t.hosts_per_slice, 4);
  EXPECT_EQ(parse_ok("V5E-16").type, "v5e-16");  // case-insensitive
  EXPECT_EQ(find_family("v5litepod"), find_family("v5e"));
}

TEST(AcceleratorTest, V5p128IsSixtyFourChipsFourByFourByFour) {
  const AcceleratorType t = parse_ok("v5p-128");
  EXPECT_EQ(t.topology, "4x4x4");
  EXPECT_EQ(t.chips_per_slice, 64);
  EXPECT_EQ(t.devices_per_slice, 64);  // megacore: one JAX device per chip
  EXPECT_EQ(t.hosts_per_slice, 16);
  EXPECT_THAT(t.physical_mesh, ElementsAre(4, 4, 4));
  EXPECT_DOUBLE_EQ(t.peak_tflops_per_device, 459.0);
}

TEST(AcceleratorTest, StandardShapeIsTheMostCubeLikeForTheChipCount) {
  // Cloud TPU v5p table, plus xpk's 4x4x12 for 192 chips.
  EXPECT_EQ(parse_ok("v5p-8").topology, "2x2x1");
  EXPECT_EQ(parse_ok("v5p-16").topology, "2x2x2");
  EXPECT_EQ(parse_ok("v5p-32").topology, "2x2x4");
  EXPECT_EQ(parse_ok("v5p-64").topology, "2x4x4");
  EXPECT_EQ(parse_ok("v5p-256").topology, "4x4x8");
  EXPECT_EQ(parse_ok("v5p-384").topology, "4x4x12");
  EXPECT_EQ(parse_ok("v5p-512").topology, "4x8x8");
  EXPECT_EQ(parse_ok("v5p-1024").topology, "8x8x8");
  EXPECT_EQ(parse_ok("v5p-2048").topology, "8x8x16");
  EXPECT_EQ(parse_ok("v5p-4096").topology, "8x16x16");
  EXPECT_EQ(parse_ok("v5p-12288").topology, "16x16x24");
  EXPECT_EQ(parse_ok("v4-8").hosts_per_slice, 1);
}

TEST(AcceleratorTest, AnyThreeDShapeOfMultiplesOfFourIsAccepted) {
  const AcceleratorType t = parse_ok("tpu7x-16x16x24");
  EXPECT_EQ(t.type, "tpu7x-12288");
  EXPECT_EQ(t.chips_per_slice, 6144);
  EXPECT_EQ(t.hosts_per_slice, 1536);
  EXPECT_THAT(t.physical_mesh, ElementsAre(16, 16, 24, 2));
  // A non-standard shape keeps its topology; the type names the chip count.
  const AcceleratorType odd = parse_ok("v5p-4x4x16");
  EXPECT_EQ(odd.type, "v5p-512");
  EXPECT_EQ(odd.topology, "4x4x16");
}

TEST(AcceleratorTest, GpuNodesOfEight) {
  const AcceleratorType t = parse_ok("h100-16");
  EXPECT_EQ(t.kind, AcceleratorKind::gpu);
  EXPECT_EQ(t.chips_per_slice, 16);
  EXPECT_EQ(t.devices_per_slice, 16);
  EXPECT_EQ(t.hosts_per_slice, 2);
  EXPECT_EQ(t.topology, "");
  EXPECT_THAT(t.physical_mesh, ElementsAre(16));
  EXPECT_DOUBLE_EQ(t.peak_tflops_per_device, 989.0);
  EXPECT_EQ(parse_ok("h200-8").hosts_per_slice, 1);
  EXPECT_DOUBLE_EQ(parse_ok("b200-8").peak_tflops_per_device, 2250.0);
  EXPECT_EQ(parse_ok("h100-mega-80gb-8").family, "h100");  // xpk's device type
  const Refusal e = parse_error("h100-12");
  EXPECT_THAT(e.message, HasSubstr("multiple of 8"));
  EXPECT_THAT(e.valid_choices, Contains("h100-16"));
}

TEST(AcceleratorTest, CpuHosts) {
  const AcceleratorType t = parse_ok("cpu-4");
  EXPECT_EQ(t.kind, AcceleratorKind::cpu);
  EXPECT_EQ(t.chips_per_slice, 4);
  EXPECT_EQ(t.devices_per_slice, 4);
  EXPECT_EQ(t.hosts_per_slice, 4);
  EXPECT_THAT(t.physical_mesh, ElementsAre(4));
  EXPECT_EQ(parse_ok("cpu-1").hosts_per_slice, 1);
}

// cpu-HxD: H hosts of D devices each, so the reference workload has devices to shard a mesh over.
TEST(AcceleratorTest, CpuHostsWithSeveralDevicesEach) {
  const AcceleratorType t = parse_ok("cpu-2x4");
  EXPECT_EQ(t.type, "cpu-2x4");
  EXPECT_EQ(t.kind, AcceleratorKind::cpu);
  EXPECT_EQ(t.hosts_per_slice, 2);
  EXPECT_EQ(t.devices_per_chip, 4);
  EXPECT_EQ(t.devices_per_slice, 8);
  EXPECT_THAT(t.physical_mesh, ElementsAre(8));
  EXPECT_EQ(parse_ok("CPU-2x4").type, "cpu-2x4");
  EXPECT_EQ(parse_ok("cpu-3x1").type, "cpu-3");  // one device each is plain cpu-N
  EXPECT_THAT(parse_error("cpu-2x4x2").message, HasSubstr("cpu-HxD"));
  EXPECT_THAT(parse_error("cpu-2x65").message, HasSubstr("D <= 64"));
  EXPECT_THAT(parse_error("cpu-0x2").message, HasSubstr("not a cpu size"));
}

// The catalog GET /api/v1/accelerators lists: every family, each entry a type that parses back to
// itself with the same facts, no duplicates, the sizes of a family growing.
TEST(AcceleratorTest, CatalogTypesCoverEveryFamilyAndParseBackToThemselves) {
  const auto types = catalog_types();
  std::vector<std::string> families, names;
  for (const auto& t : types) {
    SCOPED_TRACE(t.type);
    names.push_back(t.type);
    if (families.empty() || families.back() != t.family) families.push_back(t.family);
    const auto again = parse_accelerator(t.type);
    ASSERT_TRUE(again.value);
    EXPECT_EQ(to_json(*again.value), to_json(t));
    EXPECT_GT(t.chips_per_slice, 0);
    EXPECT_EQ(t.devices_per_slice, t.chips_per_slice * t.devices_per_chip);
  }
  std::vector<std::string> every;
  for (const auto& f : accelerator_families()) every.push_back(f.name);
  EXPECT_EQ(families, every) << "each family once, in catalog order";
  auto sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "no duplicates";
  for (size_t i = 1; i < types.size(); ++i) {
    if (types[i].family == types[i - 1].family) {
      EXPECT_GT(types[i].chips_per_slice, types[i - 1].chips_per_slice) << types[i].type;
    }
  }
  EXPECT_THAT(names, Contains("tpu7x-64"));
  EXPECT_THAT(names, Contains("v5p-128"));
  EXPECT_THAT(names, Contains("cpu-2"));
}

TEST(AcceleratorTest, UnknownFamilyListsFamilies) {
  const Refusal e = parse_error("tpu9-64");
  EXPECT_EQ(e.message, "unknown accelerator family 'tpu9'");
  EXPECT_THAT(e.valid_choices, Contains("tpu7x"));
  EXPECT_THAT(e.valid_choices, Contains("v5litepod"));
  EXPECT_THAT(e.valid_choices, Contains("cpu"));
  EXPECT_THAT(parse_error("").message, "accelerator type is empty");
  EXPECT_THAT(parse_error("tpu7x").message, HasSubstr("expected family-N"));
}

TEST(AcceleratorTest, UnknownSizeListsTheFamilySizes) {
  const Refusal odd = parse_error("tpu7x-33");
  EXPECT_THAT(odd.message, HasSubstr("counts TensorCores"));
  EXPECT_THAT(odd.valid_choices, Contains("tpu7x-64"));
  const Refusal e = parse_error("tpu7x-40");
  EXPECT_THAT(e.message, HasSubstr("(20 chips) is not a tpu7x slice size"));
  EXPECT_THAT(e.valid_choices,
              ElementsAre("tpu7x-8", "tpu7x-16", "tpu7x-32", "tpu7x-64", "tpu7x-128", "tpu7x-256",
                          "tpu7x-512", "tpu7x-1024", "tpu7x-2048", "tpu7x-4096", "tpu7x-8192",
                          "tpu7x-12288"));
  const Refusal v6 = parse_error("v6e-12");
  EXPECT_THAT(v6.valid_choices, ElementsAre("v6e-1", "v6e-4", "v6e-8", "v6e-16", "v6e-32", "v6e-64",
                                            "v6e-128", "v6e-256"));
  EXPECT_TRUE(parse_error("v5p-0").message.size() > 0);
  EXPECT_THAT(parse_error("v4-16384").message, HasSubstr("up to 4096"));  // 8192 chips
}

TEST(AcceleratorTest, UnknownTopologyListsTheFamilyTopologies) {
  const Refusal e = parse_error("tpu7x-4x6x4");
  EXPECT_THAT(e.message, HasSubstr("is not a tpu7x topology"));
  EXPECT_THAT(e.valid_choices,
              ElementsAre("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8",
                          "8x8x16", "8x16x16", "16x16x16", "16x16x24"));
  EXPECT_THAT(parse_error("tpu7x-4x8x4").message, HasSubstr("did you mean tpu7x-4x4x8?"));
  EXPECT_THAT(parse_error("v6e-4x2").message, HasSubstr("did you mean v6e-2x4?"));
  EXPECT_THAT(parse_error("v6e-3x3").valid_choices,
              ElementsAre("1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"));
  EXPECT_THAT(parse_error("h100-2x4").message, HasSubstr("takes a count, not a topology"));
}

TEST(AcceleratorTest, ValidTopologiesPerFamily) {
  EXPECT_THAT(valid_topologies("v5e"),
              ElementsAre("1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"));
  // v4 stops at one 16x16x16 pod (4096 chips).
  EXPECT_EQ(valid_topologies("v4").back(), "16x16x16");
  EXPECT_TRUE(valid_topologies("h100").empty());
  EXPECT_TRUE(valid_topologies("nope").empty());
}

TEST(AcceleratorTest, AThreeDimensionalShapeTooLargeToCountIsAClearError) {
  // Found by accelerator_mesh_fuzzer: the product of three such sizes overflows a long long
  // (undefined behaviour under UBSan; a wrapped, meaningless count in the message otherwise).
  const auto e = parse_error("tpu7x-47947877x5167478x677777777");
  EXPECT_NE(e.message.find("that many chips is more than the largest tpu7x slice"),
            std::string::npos)
      << e.message;
  // Also found by the fuzzer: multiples of 4 pass the shape's divisibility test and reached the
  // product in the shape check itself.
  const auto multiples = parse_error("v5p-999999996x999999996x999999996");
  EXPECT_NE(multiples.message.find("that many chips is more than the largest v5p slice"),
            std::string::npos)
      << multiples.message;
  const auto fits = parse_error("tpu7x-64x64x64");
  EXPECT_NE(fits.message.find("262144 chips is more than the largest tpu7x slice"),
            std::string::npos)
      << fits.message;
}

TEST(AcceleratorTest, SliceWithChips) {
  auto t = slice_with_chips("tpu7x", 32);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->type, "tpu7x-64");
  EXPECT_FALSE(slice_with_chips("tpu7x", 48).has_value());
  EXPECT_EQ(slice_with_chips("v6e", 8)->type, "v6e-8");
  EXPECT_FALSE(slice_with_chips("h100", 4).has_value());
}

TEST(AcceleratorTest, ToJsonFollowsTheContract) {
  const nlohmann::json j = to_json(parse_ok("tpu7x-2x4x4"));
  EXPECT_EQ(j.at("family"), "tpu7x");
  EXPECT_EQ(j.at("type"), "tpu7x-64");
  EXPECT_EQ(j.at("topology"), "2x4x4");
  EXPECT_EQ(j.at("kind"), "tpu");
  EXPECT_EQ(j.at("chips_per_slice"), 32);
  EXPECT_EQ(j.at("devices_per_slice"), 64);
  EXPECT_EQ(j.at("hosts_per_slice"), 8);
  EXPECT_EQ(j.at("physical_mesh"), nlohmann::json::array({2, 4, 4, 2}));
  EXPECT_DOUBLE_EQ(j.at("peak_tflops_per_device").get<double>(), 1153.5);
  EXPECT_DOUBLE_EQ(j.at("hbm_gib_per_device").get<double>(), 96.0);
  EXPECT_DOUBLE_EQ(j.at("usable_hbm_gib_per_device").get<double>(), 94.75);
}

TEST(AcceleratorTest, SummaryShowsChipsDevicesAndHosts) {
  EXPECT_EQ(summary(parse_ok("tpu7x-64")),
            "tpu7x-64: 32 chips, 64 devices, 8 hosts, topology 2x4x4");
  EXPECT_EQ(summary(parse_ok("v6e-1")), "v6e-1: 1 chip, 1 device, 1 host, topology 1x1");
  EXPECT_EQ(summary(parse_ok("h100-16")), "h100-16: 16 GPUs, 16 devices, 2 hosts");
}

}  // namespace
}  // namespace podium::core
