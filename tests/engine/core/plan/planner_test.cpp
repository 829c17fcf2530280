#include "engine/core/plan/planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

RunSpec spec_from(const json& body) {
  const Parsed<RunSpec> r = parse_run_spec(body);
  EXPECT_THAT(r.errors, IsEmpty()) << (r.errors.empty() ? "" : r.errors.front().field);
  return r.value.value_or(RunSpec{});
}

// Domain brief §6: ALModel 8B on tpu7x with per_device_batch_size=1, max_target_length=4096,
// ici_fsdp=16, ici_tensor=4, remat_policy=full, opt_type=muon.
PlanInput almodel_on_tpu7x_64() {
  PlanInput in;
  in.spec = spec_from(json::parse(R"({
    "name": "almodel", "cluster": "v7", "model": "almodel-8b", "steps": 100,
    "config_file": "configs/almodel-8b.yml",
    "per_device_batch_size": 1, "max_target_length": 4096,
    "parallelism": {"ici_fsdp": 16, "ici_tensor": 4},
    "config": {"remat_policy": "full", "opt_type": "muon", "muon_weight_decay": 0.1}
  })"));
  in.accelerator_name = "tpu7x-64";
  return in;
}

std::vector<std::string> codes(const std::vector<PlanIssue>& issues) {
  std::vector<std::string> out;
  for (const PlanIssue& i : issues) out.push_back(i.code);
  return out;
}

TEST(Planner, AModelMaxTextDoesNotKnowNeedsItsConfigFile) {
  PlanInput in = almodel_on_tpu7x_64();
  in.spec.config_file.reset();
  const Plan plan = make_plan(in);
  EXPECT_FALSE(plan.ok);
  ASSERT_THAT(codes(plan.errors), ::testing::Contains("model_needs_config"));
  for (const PlanIssue& e : plan.errors)
    if (e.code == "model_needs_config") {
      EXPECT_EQ(e.field, "config_file");
      EXPECT_NE(e.message.find("almodel-8b"), std::string::npos) << e.message;
    }
  // llama2-7b is one of MaxText's own model_names: no config file needed.
  PlanInput llama = almodel_on_tpu7x_64();
  llama.spec.model = "llama2-7b";
  llama.spec.config_file.reset();
  EXPECT_THAT(codes(make_plan(llama).errors),
              ::testing::Not(::testing::Contains("model_needs_config")));
}

TEST(Planner, AlmodelOnTpu7x64IsOk) {
  const Plan plan = make_plan(almodel_on_tpu7x_64());
  EXPECT_TRUE(plan.ok);
  EXPECT_THAT(plan.errors, IsEmpty());
  ASSERT_TRUE(plan.topology.has_value());
  EXPECT_EQ(plan.topology->chips_per_slice, 32);
  EXPECT_EQ(plan.topology->devices_per_slice, 64);
  EXPECT_EQ(plan.topology->hosts_per_slice, 8);

  ASSERT_TRUE(plan.mesh.has_value());
  EXPECT_TRUE(plan.mesh->ok);

  ASSERT_TRUE(plan.memory.has_value());
  EXPECT_TRUE(plan.memory->fits);
  EXPECT_EQ(plan.memory->capacity_gib, 94.75);
  EXPECT_EQ(plan.memory->sharding.state, 64);
  EXPECT_EQ(plan.memory->sharding.hidden, 4);
  EXPECT_GT(plan.memory->per_device_gib, 1.0);
  EXPECT_LT(plan.memory->per_device_gib, 20.0);

  ASSERT_TRUE(plan.data.has_value());
  EXPECT_EQ(plan.data->tokens_per_step, 64.0 * 4096);
  EXPECT_EQ(plan.data->tokens_available_basis, "synthetic");

  // MFU against the per-device peak: 1153.5 TFLOP/s (half a chip), MoE default 0.30.
  ASSERT_TRUE(plan.estimate.has_value());
  const FlopsEstimate flops = training_tflops_per_device(*find_model("almodel-8b"), {1, 4096, 1});
  EXPECT_DOUBLE_EQ(plan.estimate->tflops_per_device_per_step, flops.total_tflops);
  EXPECT_EQ(plan.estimate->efficiency_basis, "default");
  EXPECT_EQ(plan.estimate->efficiency, kDefaultMfuTpuMoe);
  EXPECT_NEAR(plan.estimate->step_seconds, flops.total_tflops / (1153.5 * 0.30), 1e-12);
  EXPECT_NEAR(plan.estimate->mfu, 0.30, 1e-12);
  EXPECT_NEAR(plan.estimate->tokens_per_second_per_device, 4096 / plan.estimate->step_seconds,
              1e-6);
}

TEST(Planner, PlanJsonHasTheContractShape) {
  const json j = to_json(make_plan(almodel_on_tpu7x_64()));
  EXPECT_TRUE(j["ok"].get<bool>());
  EXPECT_TRUE(j["errors"].is_array());
  EXPECT_TRUE(j["warnings"].is_array());
  for (const char* key : {"type", "topology", "chips", "devices", "hosts", "slices",
                          "physical_mesh", "peak_tflops_per_device"}) {
    EXPECT_TRUE(j["topology"].contains(key)) << key;
  }
  EXPECT_EQ(j["topology"]["type"], "tpu7x-64");
  EXPECT_EQ(j["topology"]["topology"], "2x4x4");
  EXPECT_EQ(j["topology"]["physical_mesh"], json({2, 4, 4, 2}));
  EXPECT_EQ(j["topology"]["peak_tflops_per_device"], 1153.5);
  for (const char* key : {"ici", "dcn", "axes", "assignment"}) {
    EXPECT_TRUE(j["mesh"].contains(key)) << key;
  }
  EXPECT_EQ(j["mesh"]["parallelism"]["ici_fsdp_parallelism"], 16);
  EXPECT_EQ(j["mesh"]["parallelism"]["ici_tensor_parallelism"], 4);
  for (const char* key : {"per_device_gib", "capacity_gib", "fits", "breakdown", "basis"}) {
    EXPECT_TRUE(j["memory"].contains(key)) << key;
  }
  EXPECT_EQ(j["memory"]["basis"], "estimate");
  for (const char* key :
       {"tokens_per_step", "tokens_available", "exhausted_at_step", "records_needed"}) {
    EXPECT_TRUE(j["data"].contains(key)) << key;
  }
  EXPECT_TRUE(j["data"]["exhausted_at_step"].is_null());
  for (const char* key :
       {"tflops_per_device_per_step", "step_seconds", "tokens_per_second_per_device", "mfu",
        "efficiency", "efficiency_basis"}) {
    EXPECT_TRUE(j["estimate"].contains(key)) << key;
  }
  EXPECT_TRUE(j["alternatives"].is_array());
  EXPECT_EQ(j["model"]["name"], "almodel-8b");
}

TEST(Planner, NamingTrapWarning) {
  PlanInput in = almodel_on_tpu7x_64();
  in.accelerator_name = "tpu7x-32";  // 16 chips; a 32-chip slice is tpu7x-64
  in.spec.parallelism = {{"ici_fsdp", 8}, {"ici_tensor", 4}};
  const Plan plan = make_plan(in);
  EXPECT_THAT(codes(plan.warnings), Contains("accelerator_name_counts_cores"));
  EXPECT_EQ(plan.topology->chips_per_slice, 16);
}

TEST(Planner, MeshFailureIsPropagatedWithAlternatives) {
  PlanInput in = almodel_on_tpu7x_64();
  in.accelerator_name = "v5p-128";  // 64 chips, physical mesh [4, 4, 4]
  in.spec.parallelism = {{"ici_fsdp", 32}, {"ici_tensor", 2}};
  const Plan plan = make_plan(in);
  EXPECT_FALSE(plan.ok);
  ASSERT_THAT(codes(plan.errors), Contains("mesh_unmappable"));
  const PlanIssue& e = plan.errors.front();
  EXPECT_THAT(e.message, HasSubstr("Failed to find assignment for logical_axis_index"));
  EXPECT_THAT(e.hint, HasSubstr("Mapping alternative"));
  EXPECT_EQ(e.field, "parallelism");
  ASSERT_FALSE(plan.alternatives.empty());
  // Every alternative maps.
  for (const MeshAlternative& a : plan.alternatives) {
    MeshRequest req = mesh_request_for(*plan.topology, 1);
    req.ici = a.ici;
    EXPECT_TRUE(check_mesh(req).ok) << a.description;
  }
  const json j = to_json(plan);
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_EQ(j["errors"][0]["code"], "mesh_unmappable");
  EXPECT_EQ(j["alternatives"][0]["kind"], "mesh");
  EXPECT_TRUE(j["alternatives"][0].contains("ici"));
  // Memory is still estimated on the requested values.
  EXPECT_TRUE(plan.memory.has_value());
}

TEST(Planner, MeshProductMismatch) {
  PlanInput in = almodel_on_tpu7x_64();
  in.spec.parallelism = {{"ici_fsdp", 16}, {"ici_tensor", 2}};
  const Plan plan = make_plan(in);
  EXPECT_THAT(codes(plan.errors), Contains("mesh_product_mismatch"));
  EXPECT_FALSE(plan.alternatives.empty());
}

TEST(Planner, HbmExceeded) {
  PlanInput in;
  in.spec = spec_from(json::parse(R"({
    "name": "big", "cluster": "v5p", "model": "llama3-70b", "steps": 10,
    "per_device_batch_size": 2, "max_target_length": 8192,
    "config": {"remat_policy": "minimal"}
  })"));
  in.accelerator_name = "v5p-8";  // 4 devices
  const Plan plan = make_plan(in);
  EXPECT_FALSE(plan.ok);
  ASSERT_THAT(codes(plan.errors), Contains("hbm_exceeded"));
  const PlanIssue& e = plan.errors.front();
  EXPECT_THAT(e.message, HasSubstr("95.74 GiB usable on v5p"));
  EXPECT_THAT(e.hint, HasSubstr("remat_policy=full"));
  ASSERT_TRUE(plan.memory.has_value());
  EXPECT_FALSE(plan.memory->fits);
  EXPECT_FALSE(to_json(plan)["memory"]["fits"].get<bool>());
}

TEST(Planner, HbmExceededListsFittingChangesAsAlternatives) {
  PlanInput in;
  in.spec = spec_from(json::parse(R"({
    "name": "mid", "cluster": "v5p", "model": "llama3-8b", "steps": 10,
    "per_device_batch_size": 8, "max_target_length": 8192,
    "config": {"remat_policy": "minimal"}
  })"));
  in.accelerator_name = "v5p-8";
  const Plan plan = make_plan(in);
  ASSERT_THAT(codes(plan.errors), Contains("hbm_exceeded"));
  const json j = to_json(plan);
  bool memory_alternative = false;
  for (const json& a : j["alternatives"]) memory_alternative |= a["kind"] == "memory";
  EXPECT_TRUE(memory_alternative);
}

TEST(Planner, DataExhausted) {
  // Domain brief §3: 500 JSONL records on 64 devices x 1 x 4096 -> stops at step 7 of 10.
  PlanInput in = almodel_on_tpu7x_64();
  in.spec.steps = 10;
  in.dataset = DatasetFacts{"jsonl", 500, std::nullopt, std::nullopt, 4000};
  const Plan plan = make_plan(in);
  EXPECT_FALSE(plan.ok);
  ASSERT_THAT(codes(plan.errors), Contains("data_exhausted"));
  EXPECT_THAT(plan.errors.front().hint, HasSubstr("656 records"));
  EXPECT_EQ(to_json(plan)["data"]["exhausted_at_step"], 7);
}

TEST(Planner, DatasetOfUnknownSizeWarns) {
  PlanInput in = almodel_on_tpu7x_64();
  in.dataset = DatasetFacts{"jsonl", 500, std::nullopt, std::nullopt, std::nullopt};
  const Plan plan = make_plan(in);
  EXPECT_TRUE(plan.ok);
  EXPECT_THAT(codes(plan.warnings), Contains("dataset_size_unknown"));
}

TEST(Planner, UnknownConfigKeyWithMuonHint) {
  PlanInput in = almodel_on_tpu7x_64();
  in.spec.config["weight_decay"] = 0.1;
  const Plan plan = make_plan(in);
  EXPECT_FALSE(plan.ok);
  ASSERT_EQ(codes(plan.errors), std::vector<std::string>{"unknown_config_key"});
  EXPECT_EQ(plan.errors[0].field, "config.weight_decay");
  EXPECT_THAT(plan.errors[0].hint, HasSubstr("adam_weight_decay"));
  EXPECT_THAT(plan.errors[0].hint, HasSubstr("muon_weight_decay"));
}

TEST(Planner, UnknownAccelerator) {
  PlanInput in = almodel_on_tpu7x_64();
  in.accelerator_name = "tpu9-64";
  const Plan plan = make_plan(in);
  EXPECT_FALSE(plan.ok);
  EXPECT_EQ(codes(plan.errors), std::vector<std::string>{"unknown_accelerator"});
  EXPECT_THAT(plan.errors[0].hint, HasSubstr("tpu7x"));
  const json j = to_json(plan);
  EXPECT_TRUE(j["topology"].is_null());
  EXPECT_TRUE(j["mesh"].is_null());
  EXPECT_TRUE(j["memory"].is_null());
}

TEST(Planner, UnknownModel) {
  PlanInput in = almodel_on_tpu7x_64();
  in.spec.model = "llama2-7";
  const Plan plan = make_plan(in);
  EXPECT_EQ(codes(plan.errors), std::vector<std::string>{"unknown_model"});
  EXPECT_THAT(plan.errors[0].hint, HasSubstr("did you mean 'llama2-7b'"));
  EXPECT_TRUE(plan.mesh.has_value());  // the mesh is still checked
  EXPECT_FALSE(plan.memory.has_value());
}

TEST(Planner, HistoryCalibratesEfficiencyAndMemory) {
  PlanInput in = almodel_on_tpu7x_64();
  const Plan base = make_plan(in);
  HbmObservation seen;
  seen.gib_per_device = base.memory->per_device_gib * 1.5;
  seen.tokens_per_device = 4096;
  seen.per_device_batch_size = 1;
  seen.max_target_length = 4096;
  seen.run = "run_seen";
  in.history = HistoryFacts{0.45, 3, {seen}};
  const Plan plan = make_plan(in);
  ASSERT_TRUE(plan.estimate.has_value());
  EXPECT_EQ(plan.estimate->efficiency_basis, "history");
  EXPECT_EQ(plan.estimate->efficiency, 0.45);
  EXPECT_EQ(plan.estimate->efficiency_runs, 3);
  EXPECT_NEAR(plan.estimate->step_seconds, base.estimate->step_seconds * 0.30 / 0.45, 1e-12);
  EXPECT_EQ(plan.memory->basis, "history");
  EXPECT_NEAR(plan.memory->per_device_gib, base.memory->per_device_gib * 1.5, 1e-9);
}

// MaxText attention=dot_product materializes each layer's [S, S] scores in HBM; the default
// (splash on TPU) does not: the plan's layer working set grows by the scores of one layer.
TEST(Planner, DotProductAttentionCountsItsScores) {
  PlanInput in;
  in.spec = spec_from(json::parse(R"({
    "name": "dot", "cluster": "v5p", "model": "llama2-7b", "steps": 10,
    "per_device_batch_size": 1, "max_target_length": 4096, "parallelism": {"ici_fsdp": 4}
  })"));
  in.accelerator_name = "v5p-8";
  const Plan splash = make_plan(in);
  in.spec.config["attention"] = "dot_product";
  const Plan dot = make_plan(in);
  ASSERT_TRUE(splash.memory && dot.memory);
  // 1 sequence x 32 heads x 4096 queries x 4096 keys x (float32 + bfloat16) bytes.
  EXPECT_NEAR(dot.memory->breakdown.layer_working - splash.memory->breakdown.layer_working,
              32.0 * 4096 * 4096 * 6 / (1024.0 * 1024 * 1024), 1e-9);
}

TEST(Planner, DenseDefaultEfficiencyAndGpuPeak) {
  EXPECT_EQ(default_efficiency(AcceleratorKind::tpu, false), 0.40);
  EXPECT_EQ(default_efficiency(AcceleratorKind::tpu, true), 0.30);
  EXPECT_EQ(default_efficiency(AcceleratorKind::gpu, false), 0.35);
  PlanInput in;
  in.spec = spec_from(json::parse(R"({
    "name": "l", "cluster": "c", "model": "llama2-7b", "steps": 10, "per_device_batch_size": 1,
    "max_target_length": 4096, "parallelism": {"ici_fsdp": -1}
  })"));
  in.accelerator_name = "v6e-16";
  const Plan plan = make_plan(in);
  ASSERT_TRUE(plan.estimate.has_value());
  EXPECT_EQ(plan.estimate->efficiency, 0.40);
  EXPECT_NEAR(plan.estimate->step_seconds, 175.569673125888 / (918 * 0.40), 1e-9);
}

TEST(Planner, MultiSliceUsesDcnAndAllDevices) {
  PlanInput in = almodel_on_tpu7x_64();
  in.num_slices = 2;
  in.spec.parallelism["dcn_data"] = 2;
  const Plan plan = make_plan(in);
  EXPECT_TRUE(plan.ok) << (plan.errors.empty() ? "" : plan.errors[0].message);
  EXPECT_EQ(plan.num_slices, 2);
  EXPECT_EQ(plan.data->tokens_per_step, 128.0 * 4096);
  EXPECT_EQ(to_json(plan)["topology"]["total_devices"], 128);
  EXPECT_EQ(plan.memory->sharding.batch, 32);  // fsdp 16 x data 2
}

TEST(Planner, ReferenceWorkloadOnCpu) {
  PlanInput in;
  in.spec = spec_from(json::parse(R"({
    "name": "ref", "cluster": "cpu", "model": "reference-tiny", "workload": "reference",
    "steps": 20, "per_device_batch_size": 2, "max_target_length": 64
  })"));
  in.accelerator_name = "cpu-1";
  in.dataset = DatasetFacts{"text", std::nullopt, 7 * 2 * 65 + 100, std::nullopt, std::nullopt};
  const Plan plan = make_plan(in);
  // The reference workload's own test: StopIteration after exactly 7 steps.
  EXPECT_THAT(codes(plan.errors), Contains("data_exhausted"));
  EXPECT_EQ(plan.data->exhausted_at_step, 7);
  // The JAX reference workload builds MaxText's mesh: fsdp -1 takes the one device.
  ASSERT_TRUE(plan.mesh.has_value());
  EXPECT_TRUE(plan.mesh->ok) << plan.mesh->message;
  EXPECT_FALSE(plan.estimate.has_value());  // a CPU has no peak in the catalog
  EXPECT_FALSE(plan.memory.has_value());
}

// cpu-HxD gives the reference workload devices to shard over; a parallelism whose product is
// not the slice's device count is what JAX's create_device_mesh refuses.
TEST(Planner, ReferenceWorkloadMeshOnCpuDevices) {
  PlanInput in;
  in.spec = spec_from(json::parse(R"({
    "name": "ref", "cluster": "cpu", "model": "reference-tiny", "workload": "reference",
    "steps": 20, "parallelism": {"ici_fsdp": 2, "ici_data": 2}
  })"));
  in.accelerator_name = "cpu-2x2";
  EXPECT_TRUE(make_plan(in).ok);
  in.spec.parallelism = {{"ici_fsdp", 3}};
  const Plan plan = make_plan(in);
  EXPECT_THAT(codes(plan.errors), Contains("mesh_product_mismatch"));
  ASSERT_TRUE(plan.mesh.has_value());
  EXPECT_THAT(plan.mesh->message, HasSubstr("Number of devices per slice 4"));
}

TEST(Planner, ReferenceWorkloadKeysAreChecked) {
  PlanInput in;
  in.spec = spec_from(json::parse(R"({
    "name": "ref", "cluster": "cpu", "model": "reference-small", "workload": "reference",
    "steps": 20, "config": {"weight_decay": 0.1, "seed": 3}
  })"));
  in.accelerator_name = "cpu-2";
  const Plan plan = make_plan(in);
  EXPECT_EQ(codes(plan.errors), std::vector<std::string>{"unknown_config_key"});
  EXPECT_EQ(plan.errors[0].field, "config.weight_decay");
}

TEST(Planner, CommandWorkloadHasTopologyOnly) {
  PlanInput in;
  in.spec = spec_from(json::parse(R"({
    "name": "cmd", "cluster": "c", "workload": "command", "command": "python3 train.py",
    "config": {"anything": 1}
  })"));
  in.accelerator_name = "v6e-8";
  const Plan plan = make_plan(in);
  EXPECT_TRUE(plan.ok);
  EXPECT_THAT(codes(plan.warnings), Contains("config_not_checked"));
  const json j = to_json(plan);
  EXPECT_EQ(j["topology"]["devices"], 8);
  EXPECT_TRUE(j["mesh"].is_null());
  EXPECT_TRUE(j["estimate"].is_null());
  EXPECT_TRUE(j["model"].is_null());
}

TEST(Planner, OlderMaxTextVersionWithoutKeyListWarns) {
  PlanInput in = almodel_on_tpu7x_64();
  in.maxtext_version = "2025";  // a mesh_axes release with no key file
  in.spec.config["not_a_key"] = 1;
  const Plan plan = make_plan(in);
  EXPECT_TRUE(plan.ok) << (plan.errors.empty() ? "" : plan.errors[0].message);
  EXPECT_THAT(codes(plan.warnings), Contains("config_not_checked"));
}

TEST(Planner, WorkloadMismatchWarns) {
  PlanInput in = almodel_on_tpu7x_64();
  in.spec.model = "reference-tiny";
  const Plan plan = make_plan(in);
  EXPECT_THAT(codes(plan.warnings), Contains("model_workload_mismatch"));
}

}  // namespace
}  // namespace podium::core

namespace podium::core {
namespace {

TEST(PlannerLaunch, EnvThatSetsAGangVariableIsAPlanError) {
  auto parsed = parse_run_spec(nlohmann::json::parse(R"({
    "name": "e", "cluster": "v7", "model": "llama3-8b", "steps": 10,
    "parallelism": {"ici_fsdp": 16, "ici_tensor": 4},
    "env": {"MEGASCALE_NUM_SLICES": "4", "LIBTPU_INIT_ARGS": "--x"}})"));
  ASSERT_TRUE(parsed.errors.empty());
  PlanInput in;
  in.spec = *parsed.value;
  in.accelerator_name = "tpu7x-64";
  const Plan plan = make_plan(in);
  ASSERT_EQ(plan.errors.size(), 1u);
  EXPECT_EQ(plan.errors[0].code, "env_conflict");
  EXPECT_EQ(plan.errors[0].field, "env.MEGASCALE_NUM_SLICES");
}

}  // namespace
}  // namespace podium::core
