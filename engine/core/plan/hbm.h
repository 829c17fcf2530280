#pragma once
// HBM per device for a MaxText training step, with a breakdown (docs/planner.md §HBM).
// The estimate mirrors what XLA keeps live at the peak of a train step: training state
// (params, gradients, optimizer moments) sharded like MaxText shards weights, activations saved
// by the remat policy, logits, MoE routing buffers, the FSDP-gathered working copy of a layer,
// and a margin for compiler temporaries. Pure arithmetic.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/model/flops.h"
#include "engine/core/model/model_catalog.h"

namespace podium::core {

// Share of the computed total added for compiler temporaries (fusion buffers, collectives'
// scratch, padding to tile sizes). Calibrated on MaxText's documented deepseek2-16b v5p run.
inline constexpr double kHbmCompilerMargin = 0.05;
// Calibrated on XLA's compiled memory for TPU (bench/fidelity's compile grid and MaxText's
// documented deepseek2-16b run, docs/planner.md §10):
// - one float32 copy of the logits at the peak: MaxText's deepseek2-16b v5p-8 run (temp 55.9 GB
//   of which gradients 15.7 and one 19 GiB logits copy) leaves no room for a second one;
// - one layer's intermediates live during its backward pass besides the saved ones (v5e-8
//   dense-1b b2 s2048: temp 2.61 GiB = gradients 0.53 + saved 0.25 + logits + weights + one
//   copy of the layer's 0.36 GiB of intermediates);
// - an MoE layer's routing buffers at expert capacity once: the dispatch and combine masks,
//   dispatched tokens, expert hidden and router of the layer whose backward runs (v6e-8 moe-tiny
//   b16 s8192 remat full: 14.43 GiB = 10.0 GiB of masks + 1.3 of tokens and hidden + 3 of
//   logits; counting the one-hot slots and a second copy estimated 49.2 GiB);
// - dropless routing buffers twice (forward recomputed and their gradients): not in the compile
//   grid, kept from before it and bounded by a wide band (hbm_calibration.h).
inline constexpr double kHbmLogitsCopies = 1.0;
inline constexpr double kHbmLayerWorkingCopies = 1.0;
inline constexpr double kHbmMoeCapacityCopies = 1.0;
inline constexpr double kHbmMoeDroplessCopies = 2.0;
// The remat floor (what XLA's rematerialization can bring a step down to when its natural peak is
// over the limit) keeps, at the loss, the float32 logits and one copy in the compute dtype: the
// compile grid's five out-of-memory dense-tiny cases (v5e, v6e, v5p, tpu7x; 16 to 128 x 8192)
// each stop at float32 + bfloat16 logits (23.48 GiB = 15.63 + 7.81 on v5e), 0.49-0.50 of the
// float32 logits over the float32 logits and the saved layer inputs.
inline constexpr double kHbmFloorLogitsComputeCopies = 1.0;

// A remat policy: which named activations of a decoder layer are kept in HBM for the backward
// pass (MaxText decoders.get_remat_policy). Names are MaxText's checkpoint_name tags.
struct RematPolicyInfo {
  std::string name;
  std::vector<std::string> saved;  // on device; everything else is recomputed or offloaded
  std::string note;
};
const std::vector<RematPolicyInfo>& remat_policies();
const RematPolicyInfo* find_remat_policy(std::string_view name);

// Optimizer moments kept per parameter: adamw/adam_pax 2, muon 1 (Adam's 2 for the embedding
// tables muon leaves to Adam), sgd 0. nullopt for an unknown opt_type.
std::optional<int> optimizer_moments(std::string_view opt_type);

// Bytes per element of a MaxText dtype name ("float32", "bfloat16", "fp8", ...); nullopt if
// unknown.
std::optional<double> dtype_bytes(std::string_view dtype);

// A prior run of the same model, accelerator and sharding: its peak HBM per device, or what it
// needed when it ran out of memory.
struct HbmObservation {
  double gib_per_device = 0;     // the run's peak (or requirement, for an OOM) per device
  double tokens_per_device = 0;  // per_device_batch_size x max_target_length of that run
  // Where the figure comes from: oom_required, compiler_total, memstats_after_step, memstats.
  std::string source = "memstats";
  bool oom = false;  // the run failed out of memory and gib_per_device is what it needed
  std::string run;   // run id, quoted in messages
  // The run's shape when known (0: derived from tokens_per_device at the planned sequence).
  double per_device_batch_size = 0;
  double max_target_length = 0;
};

struct HbmInput {
  const ModelSpec* model = nullptr;
  TrainingShape shape;
  // Size of each MaxText mesh axis over ICI x DCN, e.g. {"fsdp":16,"tensor":4}; missing = 1.
  std::map<std::string, int> axes;
  std::string remat_policy = "full";
  std::string opt_type = "adamw";
  std::string weight_dtype = "float32";
  std::string dtype = "bfloat16";
  std::string grad_dtype = "float32";
  int num_vocab_tiling = 1;
  bool shard_optimizer_over_data = false;  // ZeRO-1 over the data axis
  // MaxText capacity_factor (base.yml -1: dropless routing). > 0: the dense_matmul path with
  // expert capacity and dispatch/combine masks.
  double capacity_factor = -1;
  // Attention outside a flash kernel: queries per block whose scores against the whole sequence
  // are materialized (MaxText attention=dot_product: max_target_length). 0: flash/splash
  // attention (MaxText's default on TPU), whose scores never reach HBM.
  int attention_query_block = 0;
  // remat_policy=custom: MaxText per-tensor keys (query_proj, mlpwo, ...) -> remat|device|offload.
  std::map<std::string, std::string> custom_remat;
  double capacity_gib = 0;  // usable HBM per device
  // Prior runs of the same model and sharding (newest first); empty: the pure estimate.
  std::vector<HbmObservation> history;
};

// GiB per device.
struct HbmBreakdown {
  double params = 0;
  double gradients = 0;
  double optimizer_state = 0;
  double gradient_accumulation = 0;
  double activations = 0;
  // Added: the intermediates of the one layer whose backward pass runs (recomputed under remat),
  // beside the saved activations.
  double layer_working = 0;
  double logits = 0;
  double moe_routing = 0;
  double weight_gather = 0;
  double compiler_margin = 0;
  double sum() const {
    return params + gradients + optimizer_state + gradient_accumulation + activations +
           layer_working + logits + moe_routing + weight_gather + compiler_margin;
  }
};

// How the arrays are divided across devices.
struct HbmSharding {
  int state = 1;  // params, gradients, optimizer state
  int batch = 1;  // batch dimension of activations
  int sequence = 1;
  int hidden = 1;                // embed / heads / mlp dimension of activations
  int layers = 1;                // pipeline stages
  double tokens_per_device = 0;  // tokens whose activations one device holds
};

struct HbmSuggestion {
  std::string change;  // "remat_policy=full", "per_device_batch_size=2", ...
  double per_device_gib = 0;
  bool fits = false;
};

struct HbmEstimate {
  double per_device_gib = 0;
  double low_gib = 0;  // the honest band around per_device_gib (hbm_calibration.h)
  double high_gib = 0;
  double capacity_gib = 0;
  bool fits = true;              // verdict == "fits"
  std::string verdict = "fits";  // fits, does_not_fit, uncertain
  // The remat floor (pure estimate of a compile-grid-validated model; 0 otherwise): the least
  // XLA's rematerialization can bring the step to when its natural peak is over the limit, and
  // its band. `remat_pressure`: the verdict is fits only because of it (the natural band reaches
  // over capacity; XLA will recompute more than the remat policy asks, and the step is slower).
  double remat_floor_gib = 0;
  double remat_floor_low_gib = 0;
  double remat_floor_high_gib = 0;
  bool remat_pressure = false;
  std::string basis = "estimate";  // "estimate" or "history"
  double calibration_factor = 1;   // calibrated / pure estimate at this shape
  double fixed_scale = 1;          // history: fitted scale of the fixed part
  double token_scale = 1;          // history: fitted scale of the token-dependent part
  int observations = 0;            // history: runs the calibration rests on
  // The observation the figure or verdict rests on (history), for messages and the plan.
  std::optional<HbmObservation> quoted;
  HbmBreakdown breakdown;
  HbmSharding sharding;
  std::vector<HbmSuggestion> suggestions;  // only when it does not fit
  std::string hint;                        // only when it does not fit
};

HbmEstimate estimate_hbm(const HbmInput& input);

// {"per_device_gib","capacity_gib","fits","verdict","remat_floor":{"gib","low_gib","high_gib"}
//  or null,"remat_pressure","basis","calibration_factor","breakdown":{...},"sharding":{...},
//  "suggestions":[...]}
nlohmann::json to_json(const HbmEstimate& e);

}  // namespace podium::core
