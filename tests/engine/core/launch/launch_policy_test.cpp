#include "engine/core/launch/launch_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

RunSpec spec_from(json overrides) {
  json body = {{"name", "r"},
               {"cluster", "c"},
               {"model", "reference-tiny"},
               {"workload", "reference"},
               {"steps", 10}};
  if (!overrides.is_null()) body.update(overrides);
  auto parsed = parse_run_spec(body);
  EXPECT_TRUE(parsed.errors.empty()) << to_json(parsed.errors.front()).dump();
  return parsed.value.value_or(RunSpec{});
}

LaunchPolicy policy_from(const json& j) {
  auto parsed = parse_launch_policy(j);
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors.front().field;
  return parsed.value.value_or(LaunchPolicy{});
}

std::string refused_field(const LaunchPolicy& p, const RunSpec& s, const std::string& role) {
  auto r = launch_refusal(p, s, role);
  return r ? r->field : "";
}

TEST(LaunchPolicy, DefaultsLetOnlyAdminsRunCommands) {
  const LaunchPolicy p = policy_from(nullptr);
  EXPECT_THAT(p.command_roles, ElementsAre("admin"));
  EXPECT_THAT(p.entrypoints, IsEmpty());
  EXPECT_THAT(p.code_bundle_roles, ElementsAre("admin", "member"));

  const RunSpec cmd = spec_from({{"workload", "command"}, {"command", "id -u"}});
  EXPECT_EQ(launch_refusal(p, cmd, "admin"), std::nullopt);
  auto refusal = launch_refusal(p, cmd, "member");
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->field, "workload");
  EXPECT_THAT(refusal->message, HasSubstr("only admin submit command workloads"));
  EXPECT_THAT(refusal->message, HasSubstr("launch_policy.command_roles"));
  // The workload's own entrypoint is always allowed.
  EXPECT_EQ(refused_field(p, spec_from({}), "member"), "");
  EXPECT_EQ(
      refused_field(p, spec_from({{"workload", "maxtext"}, {"model", "llama2-7b"}}), "member"), "");
}

TEST(LaunchPolicy, MembersNameOnlyListedEntrypoints) {
  const LaunchPolicy p = policy_from({{"entrypoints", {"MaxText.train", "/opt/maxtext/train.sh"}}});
  EXPECT_EQ(refused_field(p, spec_from({{"entrypoint", "MaxText.train"}}), "member"), "");
  EXPECT_EQ(refused_field(p, spec_from({{"entrypoint", "evil.module"}}), "member"), "entrypoint");
  EXPECT_EQ(
      refused_field(p, spec_from({{"entrypoint", {"/opt/maxtext/train.sh", "--x"}}}), "member"),
      "");
  EXPECT_EQ(refused_field(p, spec_from({{"entrypoint", {"/bin/sh", "-c", "id"}}}), "member"),
            "entrypoint");
  // Admins (in command_roles) may name anything.
  EXPECT_EQ(refused_field(p, spec_from({{"entrypoint", {"/bin/sh", "-c", "id"}}}), "admin"), "");
}

TEST(LaunchPolicy, EnvironmentThatChoosesCodeAndOwnImagesNeedTheCommandRole) {
  const LaunchPolicy p = policy_from(nullptr);
  EXPECT_EQ(refused_field(p, spec_from({{"env", {{"LD_PRELOAD", "/tmp/x.so"}}}}), "member"),
            "env.LD_PRELOAD");
  EXPECT_EQ(refused_field(p, spec_from({{"env", {{"PYTHONPATH", "/tmp"}}}}), "member"),
            "env.PYTHONPATH");
  EXPECT_EQ(refused_field(p, spec_from({{"env", {{"XLA_FLAGS", "--xla_dump_to=/tmp"}}}}), "member"),
            "");
  EXPECT_EQ(refused_field(p, spec_from({{"image", "evil:latest"}}), "member"), "image");
  EXPECT_TRUE(selects_code("LD_LIBRARY_PATH"));
  EXPECT_FALSE(selects_code("LIBTPU_INIT_ARGS"));
}

TEST(LaunchPolicy, TrustingMembersAndRestrictingBundles) {
  const LaunchPolicy open = policy_from({{"command_roles", {"admin", "member"}}});
  EXPECT_EQ(refused_field(open, spec_from({{"workload", "command"}, {"command", "id"}}), "member"),
            "");
  const LaunchPolicy no_bundles = policy_from({{"code_bundle_roles", {"admin"}}});
  const std::string digest = "sha256:" + std::string(64, 'a');
  EXPECT_EQ(refused_field(no_bundles, spec_from({{"code_bundle", digest}}), "member"),
            "code_bundle");
  EXPECT_EQ(refused_field(no_bundles, spec_from({{"code_bundle", digest}}), "admin"), "");
}

TEST(LaunchPolicy, BadPoliciesNameEveryField) {
  auto r = parse_launch_policy({{"command_roles", {"admin", "viewer", 3}},
                                {"entrypoints", {"../x", "a b", "ok.mod"}},
                                {"what", true}});
  EXPECT_FALSE(r.value);
  std::vector<std::string> fields;
  for (const auto& e : r.errors) fields.push_back(e.field);
  EXPECT_THAT(fields, ElementsAre("launch_policy.command_roles[1]",
                                  "launch_policy.command_roles[2]", "launch_policy.entrypoints[0]",
                                  "launch_policy.entrypoints[1]", "launch_policy.what"));
  EXPECT_FALSE(parse_launch_policy(json::array()).value);
  EXPECT_FALSE(parse_launch_policy({{"entrypoints", "MaxText.train"}}).value);
  EXPECT_FALSE(parse_launch_policy({{"entrypoints", {"/opt/../bin/sh"}}}).value);
  EXPECT_FALSE(parse_launch_policy({{"entrypoints", {"/opt/x/"}}}).value);
}

TEST(LaunchPolicy, AtMost64Entrypoints) {
  json list = json::array();
  for (int i = 0; i < 64; ++i) list.push_back("/opt/train" + std::to_string(i) + ".sh");
  ASSERT_TRUE(parse_launch_policy({{"entrypoints", list}}).value);
  list.push_back("/opt/one-more.sh");
  const auto r = parse_launch_policy({{"entrypoints", list}});
  EXPECT_FALSE(r.value);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].field, "launch_policy.entrypoints");
  EXPECT_EQ(r.errors[0].message, "at most 64 entrypoints (65 given)");
}

TEST(LaunchPolicy, RoundTripsThroughJson) {
  const LaunchPolicy p = policy_from({{"command_roles", {"admin", "member"}},
                                      {"entrypoints", {"MaxText.train"}},
                                      {"code_bundle_roles", json::array()}});
  const LaunchPolicy back = policy_from(to_json(p));
  EXPECT_EQ(back.command_roles, p.command_roles);
  EXPECT_EQ(back.entrypoints, p.entrypoints);
  EXPECT_THAT(back.code_bundle_roles, IsEmpty());
  // An empty list means nobody, and says so.
  const LaunchPolicy none = policy_from({{"command_roles", json::array()}});
  auto refusal =
      launch_refusal(none, spec_from({{"workload", "command"}, {"command", "id"}}), "admin");
  ASSERT_TRUE(refusal);
  EXPECT_THAT(refusal->message, HasSubstr("lets nobody submit"));
}

}  // namespace
}  // namespace podium::core
