#include "engine/core/validation/parsed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace podium::core {
namespace {

using ::testing::ElementsAre;

TEST(Parsed, FromKeepsTheValueOnlyWhenNothingWasWrong) {
  const auto good = Parsed<int>::from(7, {});
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good.value, 7);
  EXPECT_TRUE(good.errors.empty());
  EXPECT_EQ(good.summary(), "");

  const auto bad = Parsed<int>::from(7, {{"steps", "is required"}, {"tags[2]", "too long"}});
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(bad.value.has_value());
  ASSERT_EQ(bad.errors.size(), 2u);
  EXPECT_EQ(bad.errors[1].field, "tags[2]");
  EXPECT_EQ(bad.summary(), "steps: is required; tags[2]: too long");
}

TEST(Parsed, FailureIsOneErrorWithTheChoicesOffered) {
  const auto refused = Parsed<std::string>::failure("", "unknown family 'tpu9'", {"tpu7x", "v6e"});
  EXPECT_FALSE(refused.ok());
  ASSERT_EQ(refused.errors.size(), 1u);
  // An error about the whole input has no field: the summary is its message alone.
  EXPECT_EQ(refused.summary(), "unknown family 'tpu9'");
  EXPECT_THAT(refused.valid_choices, ElementsAre("tpu7x", "v6e"));
  EXPECT_TRUE(Parsed<int>::failure("launch_policy", "must be an object").valid_choices.empty());
}

TEST(FieldError, JsonIsFieldAndMessage) {
  EXPECT_EQ(to_json(FieldError{"executor.partition", "must be a Slurm partition name"}),
            nlohmann::json(
                {{"field", "executor.partition"}, {"message", "must be a Slurm partition name"}}));
}

}  // namespace
}  // namespace podium::core
