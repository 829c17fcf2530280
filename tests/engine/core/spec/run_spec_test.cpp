#include "engine/core/spec/run_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace podium::core {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// The run spec of the API contract.
json contract_example() {
  return json::parse(R"({
    "name": "almodel-v7", "cluster": "v7-train", "dataset": "web-en", "model": "almodel-8b",
    "workload": "maxtext", "command": null, "steps": 1000, "per_device_batch_size": 1,
    "max_target_length": 4096,
    "parallelism": {"ici_fsdp": 16, "ici_tensor": 4, "dcn_data": 1},
    "config": {"remat_policy": "full", "opt_type": "muon"},
    "checkpoint_period": 100, "max_restarts": 3, "restart_on_exit_codes": [42],
    "min_slices": null, "priority": "medium", "tags": ["ablation", "v7"]
  })");
}

std::vector<std::string> fields(const Parsed<RunSpec>& r) {
  std::vector<std::string> out;
  for (const FieldError& e : r.errors) out.push_back(e.field);
  return out;
}

TEST(RunSpec, ParsesTheContractExample) {
  const Parsed<RunSpec> r = parse_run_spec(contract_example());
  ASSERT_THAT(r.errors, IsEmpty());
  ASSERT_TRUE(r.value.has_value());
  const RunSpec& s = *r.value;
  EXPECT_EQ(s.name, "almodel-v7");
  EXPECT_EQ(s.cluster, "v7-train");
  EXPECT_EQ(s.dataset, "web-en");
  EXPECT_EQ(s.model, "almodel-8b");
  EXPECT_EQ(s.workload, Workload::maxtext);
  EXPECT_EQ(s.steps, 1000);
  EXPECT_EQ(s.per_device_batch_size, 1.0);
  EXPECT_EQ(s.max_target_length, 4096);
  EXPECT_THAT(s.ici(), UnorderedElementsAre(Pair("fsdp", 16), Pair("tensor", 4)));
  EXPECT_THAT(s.dcn(), UnorderedElementsAre(Pair("data", 1)));
  EXPECT_EQ(s.config["opt_type"], "muon");
  EXPECT_EQ(s.checkpoint_period, 100);
  EXPECT_EQ(s.max_restarts, 3);
  EXPECT_THAT(s.restart_on_exit_codes, ElementsAre(42));
  EXPECT_FALSE(s.min_slices.has_value());
  EXPECT_EQ(s.priority, "medium");
  EXPECT_THAT(s.tags, ElementsAre("ablation", "v7"));
  EXPECT_FALSE(s.force);
  EXPECT_EQ(s.gradient_accumulation_steps(), 1);
}

TEST(RunSpec, DefaultsForOptionalFields) {
  const Parsed<RunSpec> r =
      parse_run_spec(json{{"name", "r"}, {"cluster", "c"}, {"model", "llama2-7b"}, {"steps", 5}});
  ASSERT_TRUE(r.value.has_value());
  EXPECT_EQ(r.value->per_device_batch_size, kDefaultPerDeviceBatchSize);
  EXPECT_EQ(r.value->max_target_length, kDefaultMaxTargetLength);
  EXPECT_EQ(r.value->max_restarts, kDefaultMaxRestarts);
  EXPECT_EQ(r.value->priority, "medium");
  EXPECT_FALSE(r.value->dataset.has_value());
  EXPECT_TRUE(r.value->config.is_object());
}

TEST(RunSpec, RequiredFields) {
  EXPECT_THAT(fields(parse_run_spec(json::object())),
              UnorderedElementsAre("name", "cluster", "model", "steps"));
  // command workloads need a command, not a model or steps.
  EXPECT_THAT(
      fields(parse_run_spec(json{{"name", "r"}, {"cluster", "c"}, {"workload", "command"}})),
      ElementsAre("command"));
  const Parsed<RunSpec> cmd = parse_run_spec(json{
      {"name", "r"}, {"cluster", "c"}, {"workload", "command"}, {"command", {"python3", "x.py"}}});
  ASSERT_TRUE(cmd.value.has_value());
  EXPECT_THAT(cmd.value->command_argv, ElementsAre("python3", "x.py"));
}

TEST(RunSpec, WrongTypesAreReportedPerField) {
  json body = contract_example();
  body["steps"] = "many";
  body["per_device_batch_size"] = "1";
  body["parallelism"] = json::array();
  body["config"] = "remat_policy=full";
  body["tags"] = "a,b";
  body["force"] = "yes";
  body["name"] = 7;
  const Parsed<RunSpec> r = parse_run_spec(body);
  EXPECT_FALSE(r.value.has_value());
  EXPECT_THAT(fields(r), UnorderedElementsAre("steps", "per_device_batch_size", "parallelism",
                                              "config", "tags", "force", "name"));
  for (const FieldError& e : r.errors) EXPECT_FALSE(e.message.empty()) << e.field;
}

TEST(RunSpec, OutOfRangeValues) {
  json body = contract_example();
  body["steps"] = 0;
  body["per_device_batch_size"] = -1;
  body["max_target_length"] = 0;
  body["max_restarts"] = -2;
  body["restart_on_exit_codes"] = {42, 300};
  body["checkpoint_period"] = 1.5;
  body["num_slices"] = 2;
  body["min_slices"] = 3;
  body["priority"] = "urgent";
  body["workload"] = "jax";
  const Parsed<RunSpec> r = parse_run_spec(body);
  EXPECT_THAT(fields(r),
              UnorderedElementsAre("steps", "per_device_batch_size", "max_target_length",
                                   "max_restarts", "restart_on_exit_codes[1]", "checkpoint_period",
                                   "min_slices", "priority", "workload"));
}

TEST(RunSpec, UnknownTopLevelFields) {
  json body = contract_example();
  body["stepz"] = 10;
  body["owner"] = "me";
  EXPECT_THAT(fields(parse_run_spec(body)), UnorderedElementsAre("stepz", "owner"));
  EXPECT_THAT(fields(parse_run_spec(json::array())), ElementsAre(""));
}

TEST(RunSpec, ParallelismKeys) {
  json body = contract_example();
  body["parallelism"] = {
      {"ici_fsdp_parallelism", -1}, {"ici_pipeline", 2}, {"dcn_data", 2}, {"ici_expert", 4}};
  Parsed<RunSpec> r = parse_run_spec(body);
  ASSERT_TRUE(r.value.has_value()) << r.errors.front().field;
  EXPECT_THAT(r.value->ici(),
              UnorderedElementsAre(Pair("fsdp", -1), Pair("stage", 2), Pair("expert", 4)));

  body["parallelism"] = {{"ici_fsdp", 0}, {"ici_warp", 2}, {"fsdp", 4}, {"ici_tensor", "4"}};
  EXPECT_THAT(fields(parse_run_spec(body)),
              UnorderedElementsAre("parallelism.ici_fsdp", "parallelism.ici_warp",
                                   "parallelism.fsdp", "parallelism.ici_tensor"));

  body["parallelism"] = {{"ici_fsdp", -1}, {"ici_data", -1}};
  EXPECT_THAT(fields(parse_run_spec(body)), ElementsAre("parallelism"));

  body["parallelism"] = {{"ici_fsdp", 4}, {"ici_fsdp_parallelism", 4}};
  EXPECT_EQ(parse_run_spec(body).errors.size(), 1u);
}

TEST(RunSpec, ConfigMustNotDuplicateTopLevelFields) {
  json body = contract_example();
  body["config"] = {{"ici_fsdp_parallelism", 8}, {"steps", 3}, {"gradient_accumulation_steps", 4}};
  EXPECT_THAT(fields(parse_run_spec(body)),
              UnorderedElementsAre("config.ici_fsdp_parallelism", "config.steps"));
  body["config"] = {{"gradient_accumulation_steps", 4}};
  const Parsed<RunSpec> r = parse_run_spec(body);
  ASSERT_TRUE(r.value.has_value());
  EXPECT_EQ(r.value->gradient_accumulation_steps(), 4);
  body["config"] = {{"gradient_accumulation_steps", 0}};
  EXPECT_THAT(fields(parse_run_spec(body)), ElementsAre("config.gradient_accumulation_steps"));
}

TEST(RunSpec, NamesTagsAndPriorities) {
  json body = contract_example();
  body["name"] = "bad name/with spaces";
  EXPECT_THAT(fields(parse_run_spec(body)), ElementsAre("name"));
  body["name"] = std::string(129, 'a');
  EXPECT_THAT(fields(parse_run_spec(body)), ElementsAre("name"));
  body = contract_example();
  body["tags"] = {"a", "", 3};
  EXPECT_THAT(fields(parse_run_spec(body)), UnorderedElementsAre("tags[1]", "tags[2]"));
  body["tags"] = {"a", "a", "b"};
  EXPECT_THAT(parse_run_spec(body).value->tags, ElementsAre("a", "b"));
  EXPECT_THAT(run_priorities(), ElementsAre("very-low", "low", "medium", "high", "very-high"));
  body["priority"] = "very-high";
  EXPECT_EQ(parse_run_spec(body).value->priority, "very-high");
  body["per_device_batch_size"] = 0.25;  // MaxText accepts fractions
  EXPECT_EQ(parse_run_spec(body).value->per_device_batch_size, 0.25);
  body["command"] = "echo";
  EXPECT_THAT(fields(parse_run_spec(body)), ElementsAre("command"));
}

TEST(RunSpec, RoundTripsThroughJson) {
  const Parsed<RunSpec> r = parse_run_spec(contract_example());
  ASSERT_TRUE(r.value.has_value());
  const json j = to_json(*r.value);
  EXPECT_EQ(j["parallelism"]["ici_fsdp"], 16);
  EXPECT_EQ(j["workload"], "maxtext");
  EXPECT_TRUE(j["min_slices"].is_null());
  const Parsed<RunSpec> again = parse_run_spec(j);
  ASSERT_TRUE(again.value.has_value());
  EXPECT_EQ(to_json(*again.value), j);
  EXPECT_EQ(to_json(FieldError{"steps", "is required"}),
            (json{{"field", "steps"}, {"message", "is required"}}));
}

}  // namespace
}  // namespace podium::core

namespace podium::core {
namespace {

TEST(RunSpecLaunch, EntrypointConfigWorkdirAndEnvAreValidated) {
  nlohmann::json body = {
      {"name", "r"},
      {"cluster", "c"},
      {"model", "llama3-8b"},
      {"workload", "maxtext"},
      {"steps", 10},
      {"entrypoint", "MaxText.train"},
      {"config_file", "MaxText/configs/base.yml"},
      {"workdir", "/srv/maxtext"},
      {"env", {{"XLA_FLAGS", "--xla_dump_to=/tmp/x"}, {"NCCL_DEBUG", "INFO"}, {"N", 3}}}};
  auto ok = parse_run_spec(body);
  ASSERT_TRUE(ok.errors.empty()) << ok.errors.front().field;
  EXPECT_EQ(*ok.value->entrypoint_module, "MaxText.train");
  EXPECT_EQ(ok.value->env.at("N"), "3");
  const auto round = to_json(*ok.value);
  EXPECT_EQ(round["env"]["XLA_FLAGS"], "--xla_dump_to=/tmp/x");
  EXPECT_EQ(round["workdir"], "/srv/maxtext");

  body["workdir"] = "relative/dir";
  body["env"] = {{"1BAD", "x"}, {"GOOD", nlohmann::json::array()}};
  body["entrypoint"] = nlohmann::json::array();
  auto bad = parse_run_spec(body);
  std::set<std::string> fields;
  for (const auto& e : bad.errors) fields.insert(e.field);
  EXPECT_TRUE(fields.contains("workdir"));
  EXPECT_TRUE(fields.contains("env.1BAD"));
  EXPECT_TRUE(fields.contains("env.GOOD"));
  EXPECT_TRUE(fields.contains("entrypoint"));
}

}  // namespace
}  // namespace podium::core

namespace podium::core {
namespace {

TEST(RunSpec, CompilePreflight) {
  auto body = contract_example();
  body["preflight"] = "compile";
  body["compile_cluster"] = "cpu-hosts";
  auto r = parse_run_spec(body);
  ASSERT_TRUE(r.value) << ::testing::PrintToString(fields(r));
  EXPECT_TRUE(r.value->preflight_compile);
  EXPECT_EQ(r.value->compile_cluster, "cpu-hosts");
  EXPECT_EQ(to_json(*r.value)["preflight"], "compile");
  EXPECT_EQ(to_json(*r.value)["compile_cluster"], "cpu-hosts");

  auto none = contract_example();
  none["preflight"] = "none";
  EXPECT_FALSE(parse_run_spec(none).value->preflight_compile);

  auto bad = contract_example();
  bad["preflight"] = "link";
  EXPECT_THAT(fields(parse_run_spec(bad)), ElementsAre("preflight"));
  auto stray = contract_example();
  stray["compile_cluster"] = "x";
  EXPECT_THAT(fields(parse_run_spec(stray)), ElementsAre("compile_cluster"));
  auto command = json{{"name", "c"},
                      {"cluster", "k"},
                      {"workload", "command"},
                      {"command", {"true"}},
                      {"preflight", "compile"}};
  EXPECT_THAT(fields(parse_run_spec(command)), ElementsAre("preflight"));
}

}  // namespace
}  // namespace podium::core

namespace podium::core {
namespace {

TEST(RunSpecLaunch, CodeBundleIsADigestAndMakesARelativeWorkdirInsideIt) {
  const std::string digest = "sha256:" + std::string(64, 'a');
  nlohmann::json body = {{"name", "r"},           {"cluster", "c"},
                         {"workload", "command"}, {"command", "python3 train.py"},
                         {"code_bundle", digest}, {"workdir", "src/app"}};
  auto ok = parse_run_spec(body);
  ASSERT_TRUE(ok.errors.empty()) << ok.errors.front().field << ": " << ok.errors.front().message;
  EXPECT_EQ(*ok.value->code_bundle, digest);
  EXPECT_EQ(to_json(*ok.value)["code_bundle"], digest);
  EXPECT_EQ(*ok.value->workdir, "src/app");

  auto fields_of = [](const nlohmann::json& b) {
    std::set<std::string> fields;
    for (const auto& e : parse_run_spec(b).errors) fields.insert(e.field);
    return fields;
  };
  auto escaping = body;
  escaping["workdir"] = "src/../../etc";
  EXPECT_TRUE(fields_of(escaping).contains("workdir"));
  for (const auto& bad : {std::string("sha256:") + std::string(64, 'A'), std::string("sha256:abc"),
                          std::string(64, 'a'), std::string("md5:") + std::string(64, 'a')}) {
    auto b = body;
    b["code_bundle"] = bad;
    EXPECT_TRUE(fields_of(b).contains("code_bundle")) << bad;
  }
  auto no_bundle = body;
  no_bundle.erase("code_bundle");
  EXPECT_TRUE(fields_of(no_bundle).contains("workdir"));
  EXPECT_TRUE(to_json(*parse_run_spec(nlohmann::json{{"name", "r"},
                                                     {"cluster", "c"},
                                                     {"workload", "command"},
                                                     {"command", "true"}})
                           .value)["code_bundle"]
                  .is_null());
}

}  // namespace
}  // namespace podium::core
