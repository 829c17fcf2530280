#include "engine/core/spec/maxtext_releases.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/plan/planner.h"
#include "engine/core/spec/config_keys.h"
#include "engine/core/topology/mesh.h"

namespace podium::core {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::vector<std::string> codes(const std::vector<PlanIssue>& issues) {
  std::vector<std::string> out;
  for (const PlanIssue& i : issues) out.push_back(i.code);
  return out;
}

TEST(MaxTextReleases, VendoredWithTagCommitDateAndKeys) {
  const auto& all = maxtext_releases();
  ASSERT_GE(all.size(), 6u);
  // Oldest first: the 2025 package release, then the 2026 ones up to the newest tag.
  EXPECT_EQ(all.front().version, "0.1.0");
  EXPECT_EQ(all.front().date, "2025-09-23");
  EXPECT_EQ(all.back().version, "0.2.4");
  const MaxTextRelease* r020 = find_maxtext_release("0.2.0");
  ASSERT_NE(r020, nullptr);
  EXPECT_EQ(r020->tag, "maxtext-v0.2.0");
  EXPECT_EQ(r020->date, "2026-03-05");
  EXPECT_EQ(r020->commit, "77edafe104eb829bf17142d33647a3b3791cf2a9");
  for (const MaxTextRelease& r : all) {
    EXPECT_EQ(r.commit.size(), 40u) << r.version;
    EXPECT_FALSE(r.mesh_axes.empty()) << r.version;
    // Every release's key list is embedded and holds its own mesh keys.
    EXPECT_GT(known_config_keys(r.version).size(), 300u) << r.version;
    EXPECT_TRUE(is_known_config_key("mesh_axes", r.version)) << r.version;
    EXPECT_TRUE(is_known_config_key("ici_fsdp_parallelism", r.version)) << r.version;
  }
  // The releases differ where MaxText changed: 0.1.0 still has the sequence axis and
  // collect_stack_trace; 0.2.4 has context_usp_ulysses and abort_on_nan_loss.
  EXPECT_THAT(all.front().mesh_axes, Contains("sequence"));
  EXPECT_THAT(all.back().mesh_axes, Not(Contains("sequence")));
  EXPECT_THAT(all.back().mesh_axes, Contains("context_usp_ulysses"));
  EXPECT_TRUE(is_known_config_key("collect_stack_trace", "0.1.0"));
  EXPECT_FALSE(is_known_config_key("collect_stack_trace", "0.2.4"));
  EXPECT_TRUE(is_known_config_key("abort_on_nan_loss", "0.2.4"));
  EXPECT_FALSE(is_known_config_key("abort_on_nan_loss", "0.1.0"));
}

TEST(MaxTextReleases, FoundByEveryFormOfItsName) {
  for (const char* name : {"0.2.4", "v0.2.4", "maxtext-v0.2.4", "MAXTEXT-V0.2.4", "538fe7a3f",
                           "538fe7a3f3376d94cf3f04e77741aa6d7e8efa45"}) {
    const MaxTextRelease* r = find_maxtext_release(name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_EQ(r->version, "0.2.4") << name;
  }
  for (const char* name : {"0.2.5", "0.2", "fork", "", "538fe7", "deadbeefdead", "legacy"})
    EXPECT_EQ(find_maxtext_release(name), nullptr) << name;
  // The mesh check knows each release's mesh_axes under its version.
  ASSERT_NE(find_mesh_axes("0.1.0"), nullptr);
  EXPECT_THAT(find_mesh_axes("0.1.0")->axes, Contains("sequence"));
}

TEST(MaxTextReleases, DeclarationsComeBeforeWhatAgentsReport) {
  const std::vector<std::string> agents = {"0.1.0", "0.1.0"};
  MaxTextBasis b = resolve_maxtext_basis("auto", "auto", agents, std::nullopt);
  EXPECT_EQ(b.source, "agents");
  EXPECT_EQ(b.key_set, "0.1.0");
  EXPECT_TRUE(b.exact);
  EXPECT_EQ(b.mesh_axes_from, "0.1.0");
  EXPECT_THAT(b.notes, IsEmpty());
  b = resolve_maxtext_basis("auto", "0.2.0", agents, std::nullopt);
  EXPECT_EQ(b.source, "cluster");
  EXPECT_EQ(b.key_set, "0.2.0");
  b = resolve_maxtext_basis("maxtext-v0.2.4", "0.2.0", agents, std::nullopt);
  EXPECT_EQ(b.source, "run");
  EXPECT_EQ(b.key_set, "0.2.4");
  EXPECT_EQ(b.reported, std::vector<std::string>{"0.1.0"});
  // Nothing declared or reported: the default list, checked exactly.
  b = resolve_maxtext_basis("auto", "auto", {}, std::nullopt);
  EXPECT_EQ(b.source, "default");
  EXPECT_EQ(b.key_set, "current");
  EXPECT_TRUE(b.exact);
  // Agents that disagree: the most common wins and the plan says so.
  b = resolve_maxtext_basis("auto", "auto", {"0.2.4", "0.1.0", "0.2.4"}, std::nullopt);
  EXPECT_EQ(b.key_set, "0.2.4");
  ASSERT_EQ(b.notes.size(), 1u);
  EXPECT_THAT(b.notes[0], HasSubstr("0.1.0 (1), 0.2.4 (2)"));
}

TEST(MaxTextReleases, UnknownVersionsAndForksAreCheckedAgainstTheNearestRelease) {
  // A newer release than any vendored: the newest; between two: the one before it.
  MaxTextBasis b = resolve_maxtext_basis("0.3.1", "auto", {}, std::nullopt);
  EXPECT_FALSE(b.exact);
  EXPECT_EQ(b.key_set, "0.2.4");
  EXPECT_THAT(b.notes, Contains(HasSubstr("unknown key is a warning")));
  EXPECT_EQ(resolve_maxtext_basis("0.1.7", "auto", {}, std::nullopt).key_set, "0.1.0");
  EXPECT_EQ(resolve_maxtext_basis("0.0.9", "auto", {}, std::nullopt).key_set, "0.1.0");
  EXPECT_EQ(resolve_maxtext_basis("0.2.0.post1", "auto", {}, std::nullopt).key_set, "0.2.0");
  // A checkout without package metadata (the agent reports "checkout"): the oldest release.
  EXPECT_EQ(resolve_maxtext_basis("auto", "auto", {"checkout"}, std::nullopt).key_set, "0.1.0");
  // A fork or an unknown commit: the newest.
  b = resolve_maxtext_basis("fork", "auto", {"0.1.0"}, std::nullopt);
  EXPECT_FALSE(b.exact);
  EXPECT_EQ(b.key_set, "0.2.4");
  EXPECT_THAT(b.notes, Contains(HasSubstr("a MaxText fork")));
  EXPECT_FALSE(resolve_maxtext_basis("auto", "deadbeef12", {}, std::nullopt).exact);
  // A fork that brings its keys is checked exactly against them; its mesh_axes likewise.
  b = resolve_maxtext_basis("fork", "auto", {}, MaxTextFork{{"a_key"}, {"data", "fsdp"}});
  EXPECT_TRUE(b.exact);
  EXPECT_EQ(b.key_set, "run");
  EXPECT_EQ(b.mesh_axes_from, "run");
  EXPECT_THAT(b.notes, IsEmpty());
  const json j = to_json(b);
  EXPECT_EQ(j["version"], "fork");
  EXPECT_EQ(j["keys"], "run");
  EXPECT_EQ(j["release"]["tag"], "maxtext-v0.2.4");
}

RunSpec maxtext_spec(const json& extra) {
  json body = {{"name", "r"},
               {"cluster", "c"},
               {"model", "llama2-7b"},
               {"steps", 10},
               {"per_device_batch_size", 1},
               {"max_target_length", 1024}};
  body.update(extra);
  const Parsed<RunSpec> r = parse_run_spec(body);
  EXPECT_THAT(r.errors, IsEmpty())
      << (r.errors.empty() ? "" : r.errors.front().field + ": " + r.errors.front().message);
  return r.value.value_or(RunSpec{});
}

Plan plan_on(const RunSpec& spec, const MaxTextBasis& basis) {
  PlanInput in;
  in.spec = spec;
  in.accelerator_name = "v5p-16";
  in.maxtext = basis;
  return make_plan(in);
}

TEST(MaxTextReleases, PlannerChecksTheReleaseTheAgentsRun) {
  const MaxTextBasis old_release = resolve_maxtext_basis("auto", "auto", {"0.1.0"}, std::nullopt);
  const MaxTextBasis new_release = resolve_maxtext_basis("auto", "auto", {"0.2.4"}, std::nullopt);
  // A key only 0.1.0 has, and its sequence mesh axis.
  const RunSpec old_keys = maxtext_spec(
      {{"config", {{"collect_stack_trace", true}}}, {"parallelism", {{"ici_sequence", 2}}}});
  Plan p = plan_on(old_keys, old_release);
  EXPECT_THAT(codes(p.errors), IsEmpty());
  ASSERT_TRUE(p.mesh);
  EXPECT_THAT(p.mesh->axes, Contains("sequence"));
  p = plan_on(old_keys, new_release);
  EXPECT_THAT(codes(p.errors), Contains("unknown_config_key"));
  EXPECT_THAT(codes(p.errors), Contains("unknown_mesh_axis"));
  EXPECT_EQ(to_json(p)["maxtext"]["release"]["version"], "0.2.4");
  // A key only 0.2.4 has, and its context_usp_ulysses axis.
  const RunSpec new_keys = maxtext_spec({{"config", {{"abort_on_nan_loss", true}}},
                                         {"parallelism", {{"ici_context_usp_ulysses", 2}}}});
  EXPECT_THAT(codes(plan_on(new_keys, new_release).errors), IsEmpty());
  p = plan_on(new_keys, old_release);
  EXPECT_THAT(codes(p.errors), Contains("unknown_config_key"));
  EXPECT_THAT(codes(p.errors), Contains("unknown_mesh_axis"));
}

TEST(MaxTextReleases, OnAForkAnUnknownKeyIsAWarningWithTheNearestKey) {
  const MaxTextBasis fork = resolve_maxtext_basis("fork", "auto", {}, std::nullopt);
  const RunSpec spec = maxtext_spec({{"config", {{"remat_polcy", "full"}, {"my_fork_key", 1}}}});
  const Plan p = plan_on(spec, fork);
  EXPECT_TRUE(p.ok);
  EXPECT_THAT(codes(p.errors), IsEmpty());
  EXPECT_THAT(codes(p.warnings), Contains("maxtext_version"));
  bool suggested = false;
  for (const PlanIssue& w : p.warnings)
    if (w.code == "unknown_config_key" && w.field == "config.remat_polcy") {
      suggested = true;
      EXPECT_THAT(w.hint, HasSubstr("remat_policy"));
    }
  EXPECT_TRUE(suggested);
  // The same keys on a known release are errors.
  EXPECT_FALSE(plan_on(spec, resolve_maxtext_basis("0.2.4", "auto", {}, std::nullopt)).ok);
}

TEST(MaxTextReleases, AForkBringsItsOwnKeysAndMeshAxes) {
  const RunSpec spec = maxtext_spec({{"maxtext_version", "fork"},
                                     {"maxtext_fork",
                                      {{"keys", {"run_name", "remat_policy", "my_fork_key"}},
                                       {"mesh_axes", {"data", "fsdp", "tensor", "my_axis"}}}},
                                     {"config", {{"my_fork_key", 1}, {"remat_policy", "full"}}},
                                     {"parallelism", {{"ici_fsdp", -1}, {"ici_my_axis", 2}}}});
  ASSERT_TRUE(spec.maxtext_fork);
  const MaxTextBasis basis =
      resolve_maxtext_basis(spec.maxtext_version, "auto", {}, spec.maxtext_fork);
  Plan p = plan_on(spec, basis);
  EXPECT_THAT(codes(p.errors), IsEmpty());
  ASSERT_TRUE(p.mesh);
  EXPECT_EQ(p.mesh->axes, (std::vector<std::string>{"data", "fsdp", "tensor", "my_axis"}));
  // Its own list is exact: a key outside it is an error.
  RunSpec other = spec;
  other.config["learning_rate"] = 0.1;
  p = plan_on(other, basis);
  EXPECT_THAT(codes(p.errors), Contains("unknown_config_key"));
  // The field round-trips and is validated.
  EXPECT_EQ(to_json(spec)["maxtext_fork"]["mesh_axes"][3], "my_axis");
  EXPECT_FALSE(to_json(maxtext_spec(json::object())).contains("maxtext_fork"));
  for (const json& bad : {json(1), json::object(), json{{"keys", {"a b"}}},
                          json{{"mesh_axes", {"x", "x"}}}, json{{"other", {"x"}}}}) {
    json body = {{"name", "r"},
                 {"cluster", "c"},
                 {"model", "llama2-7b"},
                 {"steps", 1},
                 {"maxtext_fork", bad}};
    EXPECT_FALSE(parse_run_spec(body).value) << bad.dump();
  }
}

TEST(MaxTextReleases, OnlyTheFirstUnknownKeysGetASuggestion) {
  // Each suggestion is an edit distance against every known key: a body of many unknown keys
  // against a long list stays cheap.
  json config = json::object();
  for (char c = 'a'; c <= 'z'; ++c) config[std::string("remat_polic") + c + "x"] = 1;
  const auto issues = validate_config_with_keys(config, known_config_keys("0.2.4"), "MaxText");
  ASSERT_EQ(issues.size(), 26u);
  size_t suggested = 0;
  for (const ConfigIssue& i : issues) suggested += i.suggestion ? 1 : 0;
  EXPECT_EQ(suggested, 20u);
}

}  // namespace
}  // namespace podium::core
