// make_plan cost (bench/README.md). Each plan is measured next to a baseline from the same run,
// serializing the run spec to JSON text, so results can be read as ratios that hold across
// machines ("a plan costs N spec serializations") as well as in absolute time.
#include <benchmark/benchmark.h>

#include <stdexcept>
#include <string>

#include "engine/core/plan/planner.h"
#include "engine/core/topology/accelerator.h"
#include "engine/core/topology/mesh.h"

namespace {

using podium::core::make_plan;
using podium::core::parse_run_spec;
using podium::core::PlanInput;
using podium::core::RunSpec;

RunSpec spec(const char* text) {
  const auto parsed = parse_run_spec(nlohmann::json::parse(text));
  if (!parsed.value) throw std::runtime_error("benchmark spec does not parse");
  return *parsed.value;
}

// Llama3-70B on a v5p 16x16x24 slice (6,144 chips, "v5p-12288"): the default mesh (fsdp fills
// all 6,144 devices) and a synthetic dataset of known size.
PlanInput v5p_plan() {
  PlanInput in;
  in.spec = spec(R"({"name": "l70", "cluster": "v5p", "model": "llama3-70b", "steps": 1000,
      "per_device_batch_size": 2, "max_target_length": 8192,
      "parallelism": {"ici_fsdp": -1},
      "config": {"remat_policy": "save_dot_except_mlp", "opt_type": "adamw",
                 "learning_rate": 3e-4, "dataset_type": "grain"}})");
  in.accelerator_name = "v5p-16x16x24";
  in.dataset = podium::core::DatasetFacts{"arrayrecord", 1e8, std::nullopt, 2e11, std::nullopt};
  return in;
}

// The same slice with ici_tensor=8, which no set of whole physical axes [16, 16, 24] forms:
// the plan fails and searches mesh alternatives (the slow path).
PlanInput v5p_unmappable_plan() {
  PlanInput in = v5p_plan();
  in.spec.parallelism = {{"ici_fsdp", 768}, {"ici_tensor", 8}};
  return in;
}

// Domain brief §6: ALModel 8B on tpu7x-64 (2x4x4), fsdp 16 x tensor 4, remat full, muon.
PlanInput tpu7x_plan() {
  PlanInput in;
  in.spec = spec(R"({"name": "almodel", "cluster": "v7", "model": "almodel-8b", "steps": 100,
      "config_file": "configs/almodel-8b.yml", "per_device_batch_size": 1, "max_target_length": 4096,
      "parallelism": {"ici_fsdp": 16, "ici_tensor": 4},
      "config": {"remat_policy": "full", "opt_type": "muon", "muon_weight_decay": 0.1}})");
  in.accelerator_name = "tpu7x-64";
  return in;
}

void BM_Baseline_SerializeSpec(benchmark::State& state) {
  const RunSpec s = v5p_plan().spec;
  for (auto _ : state) {
    std::string text = podium::core::to_json(s).dump();
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_Baseline_SerializeSpec);

void run_plan(benchmark::State& state, const PlanInput& in, bool expect_ok) {
  if (make_plan(in).ok != expect_ok) {
    state.SkipWithError("plan outcome is not the one this benchmark measures");
    return;
  }
  for (auto _ : state) {
    podium::core::Plan plan = make_plan(in);
    benchmark::DoNotOptimize(plan);
  }
}

void BM_MakePlan_V5p_16x16x24_Llama3_70b(benchmark::State& state) {
  run_plan(state, v5p_plan(), true);
}
BENCHMARK(BM_MakePlan_V5p_16x16x24_Llama3_70b);

void BM_MakePlan_V5p_16x16x24_Unmappable(benchmark::State& state) {
  run_plan(state, v5p_unmappable_plan(), false);
}
BENCHMARK(BM_MakePlan_V5p_16x16x24_Unmappable);

void BM_MakePlan_Tpu7x64_Almodel(benchmark::State& state) {
  run_plan(state, tpu7x_plan(), true);
}
BENCHMARK(BM_MakePlan_Tpu7x64_Almodel);

// The slowest request the accelerator_mesh fuzzer keeps in its corpus: 784,784 devices (many
// divisors) with odd explicit sizes on six ICI and four DCN axes over two slices, so the search
// for alternatives spends its whole kMaxTries budget (engine/core/topology/mesh.cpp). What an
// unmappable plan can cost a handler thread at most.
void BM_MeshAlternatives_WorstCase_Cpu784784(benchmark::State& state) {
  const auto parsed = podium::core::parse_accelerator("cpu-784784");
  podium::core::MeshRequest req = podium::core::mesh_request_for(*parsed.value, 1);
  req.num_slices = 2;
  req.ici = {{"data", 17},    {"fsdp", 65},  {"diloco", 6},
             {"pipeline", 3}, {"tensor", 5}, {"fsdp_transpose", 3}};
  req.dcn = {{"pipeline", 3}, {"tensor", 5578}, {"data", 6}, {"fsdp", 145}};
  if (podium::core::check_mesh(req).ok) {
    state.SkipWithError("the request maps; this benchmark measures the search");
    return;
  }
  for (auto _ : state) {
    auto alternatives = podium::core::propose_mesh_alternatives(req);  // as make_plan asks
    benchmark::DoNotOptimize(alternatives);
  }
}
BENCHMARK(BM_MeshAlternatives_WorstCase_Cpu784784)->Unit(benchmark::kMillisecond);

// Plan plus its JSON text: what POST /api/v1/plan does per request.
void BM_MakePlanAndSerialize_Tpu7x64_Almodel(benchmark::State& state) {
  const PlanInput in = tpu7x_plan();
  for (auto _ : state) {
    std::string text = podium::core::to_json(make_plan(in)).dump();
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_MakePlanAndSerialize_Tpu7x64_Almodel);

}  // namespace

BENCHMARK_MAIN();
