#include "engine/core/spec/config_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>

namespace podium::core {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

TEST(ConfigKeys, VersionedKeyListIsEmbedded) {
  EXPECT_THAT(config_key_versions(), Contains("current"));
  const auto& keys = known_config_keys("current");
  EXPECT_GT(keys.size(), 600u);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_TRUE(known_config_keys("1999").empty());
  for (const char* key : {"remat_policy", "opt_type", "adam_weight_decay", "muon_weight_decay",
                          "ici_fsdp_parallelism", "dcn_data_parallelism", "per_device_batch_size",
                          "max_target_length", "gradient_accumulation_steps", "weight_dtype",
                          "dataset_type", "tokenizer_path", "scan_layers", "attention",
                          "checkpoint_period", "async_checkpointing", "hardware"}) {
    EXPECT_TRUE(is_known_config_key(key)) << key;
  }
  EXPECT_FALSE(is_known_config_key("weight_decay"));
  EXPECT_FALSE(is_known_config_key("# MaxText configuration keys"));
}

TEST(ConfigKeys, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("remat_polcy", "remat_policy"), 1u);
  EXPECT_EQ(edit_distance("opt_type", "opt_type"), 0u);
}

TEST(ConfigKeys, NearestKeySuggestions) {
  EXPECT_EQ(nearest_config_key("remat_polcy"), "remat_policy");
  EXPECT_EQ(nearest_config_key("per_device_batchsize"), "per_device_batch_size");
  EXPECT_EQ(nearest_config_key("learnig_rate"), "learning_rate");
  EXPECT_EQ(nearest_config_key("adam_weight_decy"), "adam_weight_decay");
  // Equally close to ici_ and dcn_fsdp_parallelism: ties go to the alphabetically first.
  EXPECT_EQ(nearest_config_key("fsdp_parallelism"), "dcn_fsdp_parallelism");
  // Too far for a typo, but a word-boundary fragment of a real key.
  EXPECT_EQ(nearest_config_key("context_usp"), "dcn_context_usp_ulysses_parallelism");
  EXPECT_EQ(nearest_config_key("my_remat_policy_setting"), "remat_policy");
  EXPECT_FALSE(nearest_config_key("completely_unrelated_setting_xyz").has_value());
}

TEST(ConfigKeys, UnknownKeyWithSuggestion) {
  const auto issues = validate_config(json{{"remat_polcy", "full"}, {"steps_x", 3}});
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].code, "unknown_config_key");
  EXPECT_EQ(issues[0].key, "remat_polcy");
  EXPECT_EQ(issues[0].suggestion, "remat_policy");
  EXPECT_THAT(issues[0].hint, HasSubstr("did you mean 'remat_policy'"));
  EXPECT_THAT(issues[0].message, HasSubstr("not in valid fields"));
  EXPECT_EQ(issues[1].key, "steps_x");
  EXPECT_EQ(issues[1].suggestion, "steps");
}

TEST(ConfigKeys, ValidConfigHasNoIssues) {
  EXPECT_THAT(validate_config(json{{"remat_policy", "minimal"},
                                   {"opt_type", "muon"},
                                   {"muon_weight_decay", 0.1},
                                   {"adam_weight_decay", 0.1},
                                   {"scan_layers", true},
                                   {"gradient_accumulation_steps", 2}}),
              IsEmpty());
  EXPECT_THAT(validate_config(json::object()), IsEmpty());
  EXPECT_THAT(validate_config(json::array()), IsEmpty());
}

// Domain brief §3: with opt_type=muon the weight decay keys are adam_weight_decay and
// muon_weight_decay; weight_decay is rejected late as "not in valid fields".
TEST(ConfigKeys, MuonWeightDecayRule) {
  const auto issues = validate_config(json{{"opt_type", "muon"}, {"weight_decay", 0.1}});
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].code, "unknown_config_key");
  EXPECT_EQ(issues[0].key, "weight_decay");
  EXPECT_THAT(issues[0].hint, HasSubstr("adam_weight_decay"));
  EXPECT_THAT(issues[0].hint, HasSubstr("muon_weight_decay"));
  EXPECT_EQ(issues[0].suggestion, "muon_weight_decay");

  const auto adamw = validate_config(json{{"weight_decay", 0.1}});
  ASSERT_EQ(adamw.size(), 1u);
  EXPECT_EQ(adamw[0].suggestion, "adam_weight_decay");
  EXPECT_THAT(adamw[0].hint, Not(HasSubstr("muon")));
}

TEST(ConfigKeys, InvalidValuesOfKeysThePlannerModels) {
  auto issues = validate_config(json{{"remat_policy", "minimall"}});
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].code, "invalid_config_value");
  EXPECT_EQ(issues[0].suggestion, "minimal");
  EXPECT_THAT(issues[0].hint, HasSubstr("save_qkv_proj"));

  issues = validate_config(json{{"opt_type", "lion"}});
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].code, "invalid_config_value");
  EXPECT_THAT(issues[0].hint, HasSubstr("muon"));

  EXPECT_EQ(validate_config(json{{"remat_policy", 3}}).size(), 1u);
}

// The reference workload has its own key list (engine/workloads/reference/base.yml) and
// rejects other keys the same way MaxText does.
TEST(ConfigKeys, ReferenceWorkloadKeys) {
  EXPECT_THAT(config_key_versions("reference"), ::testing::ElementsAre("current"));
  // Exactly the keys of the workload's own base.yml: the trainer rejects any other.
  const YAML::Node base =
      YAML::LoadFile(std::string(PODIUM_SOURCE_DIR) + "/engine/workloads/reference/base.yml");
  std::set<std::string> in_base;
  for (const auto& kv : base) in_base.insert(kv.first.as<std::string>());
  const auto known = known_config_keys("current", "reference");
  EXPECT_EQ(std::set<std::string>(known.begin(), known.end()), in_base);
  EXPECT_TRUE(is_known_config_key("ici_fsdp_parallelism", "current", "reference"));
  EXPECT_TRUE(is_known_config_key("seed", "current", "reference"));
  EXPECT_TRUE(is_known_config_key("distributed_timeout_seconds", "current", "reference"));
  EXPECT_FALSE(is_known_config_key("remat_policy", "current", "reference"));
  EXPECT_FALSE(is_known_config_key("distributed_timeout_seconds"));  // not a MaxText key

  const auto issues = validate_config(
      json{{"weight_decay", 0.1}, {"learnig_rate", 0.01}, {"seed", 1}}, "current", "reference");
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].key, "learnig_rate");
  EXPECT_EQ(issues[0].suggestion, "learning_rate");
  EXPECT_EQ(issues[1].key, "weight_decay");
  EXPECT_FALSE(issues[1].suggestion.has_value());
  EXPECT_THAT(issues[1].hint, HasSubstr("valid: "));
  EXPECT_THAT(issues[1].message, HasSubstr("reference workload"));
  // MaxText's value rules do not apply.
  EXPECT_EQ(validate_config(json{{"remat_policy", "bogus"}}, "current", "reference").size(), 1u);
}

}  // namespace
}  // namespace podium::core
