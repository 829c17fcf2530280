#include "engine/cli/run_spec.h"

#include <gtest/gtest.h>

namespace podium::cli {
namespace {

Json convert(const std::string& yaml) {
  auto r = yaml_to_json(yaml);
  EXPECT_TRUE(r.value) << r.error;
  return r.value ? *r.value : Json();
}

std::string error_of(const std::string& yaml) {
  auto r = yaml_to_json(yaml);
  EXPECT_FALSE(r.value) << r.value->dump();
  return r.error;
}

TEST(RunSpecYaml, FullSpecKeepsTypesAndOrder) {
  const Json spec = convert(R"(
name: llama-7b-test
cluster: v7-train
dataset: c4
model: llama2-7b
workload: maxtext
command: null
steps: 1000
per_device_batch_size: 4
max_target_length: 2048
parallelism:
  ici_fsdp: 16
  ici_tensor: 4
  dcn_data: 1
config:
  remat_policy: full
  learning_rate: 3.0e-4
  enable_checkpointing: true
  dtype: "bfloat16"
checkpoint_period: 200
max_restarts: 3
restart_on_exit_codes: [1, 137]
min_slices: ~
priority: medium
tags: [baseline, "2025"]
)");
  EXPECT_EQ(spec["name"], "llama-7b-test");
  EXPECT_TRUE(spec["command"].is_null());
  EXPECT_TRUE(spec["steps"].is_number_integer());
  EXPECT_EQ(spec["steps"], 1000);
  EXPECT_EQ(spec["parallelism"]["ici_fsdp"], 16);
  EXPECT_TRUE(spec["parallelism"]["ici_fsdp"].is_number_integer());
  EXPECT_TRUE(spec["config"]["learning_rate"].is_number_float());
  EXPECT_DOUBLE_EQ(spec["config"]["learning_rate"].get<double>(), 3.0e-4);
  EXPECT_EQ(spec["config"]["enable_checkpointing"], true);
  EXPECT_EQ(spec["config"]["dtype"], "bfloat16");
  EXPECT_EQ(spec["restart_on_exit_codes"], Json::array({1, 137}));
  EXPECT_TRUE(spec["min_slices"].is_null());
  EXPECT_EQ(spec["tags"][1], "2025");  // quoted: stays a string
  EXPECT_TRUE(spec["tags"][1].is_string());
  // Keys stay in file order (ordered JSON): the server and --json output read like the file.
  EXPECT_EQ(spec.begin().key(), "name");
}

TEST(RunSpecYaml, CoreSchemaScalars) {
  const Json j = convert(R"(
a: 10
b: -3
c: 0x1F
d: 0o17
e: 1.5
f: .5
g: 1e3
h: true
i: False
j: null
k: NULL
l: ""
m: "10"
n: 'true'
o: yes
p: 1_000
q: 007
r: +5
s: 9223372036854775807
t: 18446744073709551615
u: -9223372036854775808
v:
w: !!str 42
x: !!float 3
y: 2025-01-01
)");
  EXPECT_EQ(j["a"], 10);
  EXPECT_EQ(j["b"], -3);
  EXPECT_EQ(j["c"], 31);
  EXPECT_EQ(j["d"], 15);
  EXPECT_EQ(j["e"], 1.5);
  EXPECT_EQ(j["f"], 0.5);
  EXPECT_TRUE(j["g"].is_number_float());
  EXPECT_EQ(j["h"], true);
  EXPECT_EQ(j["i"], false);
  EXPECT_TRUE(j["j"].is_null());
  EXPECT_TRUE(j["k"].is_null());
  EXPECT_EQ(j["l"], "");
  EXPECT_EQ(j["m"], "10");
  EXPECT_EQ(j["n"], "true");
  EXPECT_EQ(j["o"], "yes");  // YAML 1.2: yes is a string, not a boolean
  EXPECT_EQ(j["p"], "1_000");
  EXPECT_EQ(j["q"], 7);
  EXPECT_EQ(j["r"], 5);
  EXPECT_EQ(j["s"], 9223372036854775807LL);
  EXPECT_TRUE(j["t"].is_number_unsigned());
  EXPECT_EQ(j["u"].get<long long>(), INT64_MIN);
  EXPECT_TRUE(j["v"].is_null());
  EXPECT_EQ(j["w"], "42");
  EXPECT_TRUE(j["x"].is_number_float());
  EXPECT_EQ(j["y"], "2025-01-01");
}

TEST(RunSpecYaml, NestedSequencesOfMapsAndAnchors) {
  const Json j = convert(R"(
base: &b {x: 1}
list:
  - *b
  - {y: [1, 2, {z: null}]}
)");
  EXPECT_EQ(j["list"][0]["x"], 1);
  EXPECT_TRUE(j["list"][1]["y"][2]["z"].is_null());
}

TEST(RunSpecYaml, Errors) {
  EXPECT_NE(error_of("a: .inf\n").find("infinity or NaN"), std::string::npos);
  EXPECT_NE(error_of("a: .nan\n").find("infinity or NaN"), std::string::npos);
  EXPECT_NE(error_of("a: 99999999999999999999999\n").find("out of range"), std::string::npos);
  const std::string dup = error_of("a: 1\nb: 2\na: 3\n");
  EXPECT_NE(dup.find("duplicate key 'a'"), std::string::npos);
  EXPECT_NE(dup.find("line 3"), std::string::npos);
  EXPECT_NE(error_of("? [a, b]\n: 1\n").find("map keys"), std::string::npos);
  const std::string syntax = error_of("a: [1, 2\nb: 3\n");
  EXPECT_NE(syntax.find("line"), std::string::npos);
  EXPECT_NE(error_of("a: !!int abc\n").find("not an integer"), std::string::npos);
  EXPECT_NE(error_of("a: !custom x\n").find("unsupported YAML tag"), std::string::npos);
}

TEST(RunSpecYaml, RunSpecMustBeAMapping) {
  EXPECT_FALSE(load_run_spec("").value);
  EXPECT_EQ(load_run_spec("").error, "the run spec is empty");
  EXPECT_FALSE(load_run_spec("- a\n- b\n").value);
  EXPECT_NE(load_run_spec("- a\n").error.find("mapping"), std::string::npos);
  EXPECT_FALSE(load_run_spec("just text").value);
  EXPECT_TRUE(load_run_spec("name: x\n").value);
}

}  // namespace
}  // namespace podium::cli
