#pragma once
// The preflight planner (POST /api/v1/plan): one run spec on one cluster, checked before it
// touches a TPU. Aggregates the accelerator catalog, the MaxText/JAX mesh check, config-key
// validation, the model catalog, training FLOPs, HBM and data sufficiency into the contract's
// plan JSON (docs/planner.md). Pure: everything it needs is passed in.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/model/flops.h"
#include "engine/core/model/model_catalog.h"
#include "engine/core/plan/data_plan.h"
#include "engine/core/plan/hbm.h"
#include "engine/core/spec/maxtext_releases.h"
#include "engine/core/spec/run_spec.h"
#include "engine/core/topology/accelerator.h"
#include "engine/core/topology/mesh.h"

namespace podium::core {

// MFU assumed without history (docs/planner.md §Throughput). Well-tuned MaxText runs publish
// 55-65% (Llama2-70B 65%, Mixtral-8x7B 54.9% on v5p-128); a first run of a new configuration
// is typically well below that, and MoE below dense (all-to-all, routing, smaller matmuls).
inline constexpr double kDefaultMfuTpuDense = 0.40;
inline constexpr double kDefaultMfuTpuMoe = 0.30;
inline constexpr double kDefaultMfuGpuDense = 0.35;
inline constexpr double kDefaultMfuGpuMoe = 0.25;
double default_efficiency(AcceleratorKind kind, bool moe);

// Facts from finished runs of the same model on the same accelerator family.
struct HistoryFacts {
  std::optional<double> mfu;  // calibrated efficiency (steady-state MFU)
  int mfu_runs = 0;           // how many runs the figure rests on
  // Observed runs of the same model and sharding, newest first (hbm_calibration.h).
  std::vector<HbmObservation> hbm;
};

struct PlanInput {
  RunSpec spec;
  // The cluster's slice type. When absent, accelerator_name is parsed (unknown_accelerator on
  // failure). accelerator_name is also what naming warnings look at: pass the text the user
  // typed ("tpu7x-32") when there is one.
  std::optional<AcceleratorType> accelerator;
  std::string accelerator_name;
  int num_slices = 1;                   // the cluster's slices; spec.num_slices overrides
  std::optional<DatasetFacts> dataset;  // null: synthetic data / dataset not given
  std::optional<HistoryFacts> history;
  std::string maxtext_version = "current";  // mesh_axes list and config key list
  // The model store (the server's `models` table): when set, spec.model is looked up here (the
  // model the caller resolved, absent when there is none of that name) and unknown-model hints
  // list these names. When not set, the compiled catalog (model_catalog.h) is used.
  std::optional<std::vector<std::string>> known_models;
  std::optional<ModelSpec> model;
  // A MaxText run: the release its hosts run and how exactly to check it (resolve_maxtext_basis);
  // when set it decides the key list and mesh_axes instead of maxtext_version.
  std::optional<MaxTextBasis> maxtext;
};

struct PlanIssue {
  std::string code;
  std::string message;
  std::string hint;
  std::string field;  // run spec field it concerns ("config.weight_decay"), may be empty
  // The check an error belongs to (skippable_checks(): a run spec's skip_checks may waive it);
  // empty for errors no check waives short of "force": true (an unknown accelerator, env_conflict).
  std::string check;
  bool skipped = false;  // the spec skips this error's check (or forces)
};

struct ThroughputEstimate {
  double tflops_per_device_per_step = 0;
  double learnable_weight_tflops = 0;
  double attention_tflops = 0;
  double ffn_tflops = 0;      // dense and MoE FFN (router included)
  double moe_ffn_tflops = 0;  // the MoE layers' part of it: router, routed and shared experts
  double step_seconds = 0;
  double tokens_per_second_per_device = 0;
  double mfu = 0;                // against the per-device peak
  double efficiency = 0;         // the MFU assumed to get step_seconds
  std::string efficiency_basis;  // "default" or "history"
  int efficiency_runs = 0;
};

struct Plan {
  bool ok = false;
  std::vector<PlanIssue> errors;
  std::vector<PlanIssue> warnings;
  std::optional<AcceleratorType> topology;
  int num_slices = 1;
  std::string model_name;
  std::optional<ParamCounts> params;
  bool moe = false;
  // What the spec skipped (skip_checks; every check when it forces), shown in the plan.
  std::vector<std::string> skipped_checks;
  std::optional<MeshResult> mesh;
  std::optional<HbmEstimate> memory;
  std::optional<DataPlan> data;
  std::optional<ThroughputEstimate> estimate;  // null when the peak is unknown (CPU)
  std::vector<MeshAlternative> alternatives;   // mesh alternatives when the mesh fails
  std::optional<MaxTextBasis> maxtext;         // what a MaxText run was checked against
};

Plan make_plan(const PlanInput& input);

// Whether an error remains that the spec does not skip: such a plan refuses the submission.
bool has_blocking_errors(const Plan& plan);

// The contract's plan JSON:
// {"ok","errors":[{"code","message","hint"}],"warnings":[...],"topology":{...},
//  "mesh":{"ici","dcn","axes","assignment"},"memory":{"per_device_gib","capacity_gib","fits",
//  "breakdown","basis"},"data":{"tokens_per_step","tokens_available","exhausted_at_step",
//  "records_needed"},"estimate":{"tflops_per_device_per_step","step_seconds",
//  "tokens_per_second_per_device","mfu","efficiency","efficiency_basis"},"alternatives":[...]}
// Sections that could not be computed are null.
nlohmann::json to_json(const Plan& plan);
nlohmann::json to_json(const PlanIssue& issue);

}  // namespace podium::core
