#include "engine/core/topology/naming_warnings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(NamingWarningsTest, Tpu7x32MeansSixteenChips) {
  const auto warnings = accelerator_naming_warnings("tpu7x-32");
  ASSERT_THAT(warnings, SizeIs(1));
  const NamingWarning& w = warnings.front();
  EXPECT_EQ(w.code, "accelerator_name_counts_cores");
  EXPECT_EQ(w.message,
            "tpu7x-32: 16 chips, 32 devices, 4 hosts, topology 2x2x4. The number in a tpu7x name "
            "counts TensorCores, 2 per chip, so tpu7x-32 is 16 chips, not 32. A slice of 32 chips "
            "is tpu7x-64: 32 chips, 64 devices, 8 hosts, topology 2x4x4.");
  EXPECT_EQ(w.hint,
            "If you meant 32 chips, use tpu7x-64 (or tpu7x-2x4x4). To keep 16 chips without this "
            "warning, write tpu7x-2x2x4.");
}

TEST(NamingWarningsTest, V5pNamesCountCoresToo) {
  const auto warnings = accelerator_naming_warnings("v5p-128");
  ASSERT_THAT(warnings, SizeIs(1));
  // Chips, devices and hosts of both slices appear side by side.
  EXPECT_THAT(warnings[0].message, HasSubstr("v5p-128: 64 chips, 64 devices, 16 hosts"));
  EXPECT_THAT(warnings[0].message, HasSubstr("v5p-256: 128 chips, 128 devices, 32 hosts"));
  EXPECT_THAT(accelerator_naming_warnings("V4-8"), SizeIs(1));  // 4 chips; v4-16 has 8
}

TEST(NamingWarningsTest, NoWarningWhenNoOtherSliceHasThatManyChips) {
  // tpu7x-128 is 64 chips; 128 chips would be tpu7x-256, which exists, so that warns, but
  // tpu7x-12288 (6144 chips) names a chip count no slice has.
  EXPECT_THAT(accelerator_naming_warnings("tpu7x-128"), SizeIs(1));
  EXPECT_THAT(accelerator_naming_warnings("tpu7x-12288"), IsEmpty());
  EXPECT_THAT(accelerator_naming_warnings("tpu7x-96"), IsEmpty());  // 48 chips: invalid anyway
}

TEST(NamingWarningsTest, NoWarningForTopologiesChipCountsOrBadText) {
  EXPECT_THAT(accelerator_naming_warnings("tpu7x-2x2x4"), IsEmpty());
  EXPECT_THAT(accelerator_naming_warnings("v6e-32"), IsEmpty());  // v6e counts chips
  EXPECT_THAT(accelerator_naming_warnings("v5litepod-16"), IsEmpty());
  EXPECT_THAT(accelerator_naming_warnings("h100-16"), IsEmpty());
  EXPECT_THAT(accelerator_naming_warnings("cpu-4"), IsEmpty());
  EXPECT_THAT(accelerator_naming_warnings("tpu9-32"), IsEmpty());
  EXPECT_THAT(accelerator_naming_warnings(""), IsEmpty());
}

TEST(NamingWarningsTest, ToJson) {
  const auto warnings = accelerator_naming_warnings("tpu7x-32");
  ASSERT_THAT(warnings, SizeIs(1));
  const nlohmann::json j = to_json(warnings[0]);
  EXPECT_EQ(j.at("code"), "accelerator_name_counts_cores");
  EXPECT_THAT(j.at("message").get<std::string>(), HasSubstr("16 chips, 32 devices, 4 hosts"));
  EXPECT_THAT(j.at("hint").get<std::string>(), HasSubstr("tpu7x-64"));
}

}  // namespace
}  // namespace podium::core
