#pragma once
// Training FLOPs per device per step, as MaxText computes them for its TFLOP/s/device and MFU
// (maxtext_utils.calculate_tflops_training_per_device). Pure arithmetic.

#include <nlohmann/json.hpp>

#include "engine/core/model/model_catalog.h"

namespace podium::core {

struct TrainingShape {
  double per_device_batch_size = 1;  // MaxText allows fractions (e.g. 0.25)
  int max_target_length = 2048;
  int gradient_accumulation_steps = 1;
};

// All figures in TFLOPs (10^12) per device per training step, forward + backward (x3) and
// gradient accumulation included, exactly like MaxText's log line
// "Per train step: Total TFLOPs: ... split as ...% learnable weight flops and ...% attention".
struct FlopsEstimate {
  double total_tflops = 0;
  double learnable_weight_tflops = 0;  // matmuls against weights (FFN, projections, unembedding)
  double attention_tflops = 0;         // QK^T and AV (causal: halved), linear-attention core
  // Components of learnable_weight_tflops, for the breakdown shown in the plan.
  double ffn_tflops = 0;                   // dense + MoE FFN incl. router
  double moe_ffn_tflops = 0;               // of which the MoE layers (router, routed, shared)
  double attention_projection_tflops = 0;  // QKV + output projections (and linear-attn projections)
  double embedding_tflops = 0;             // unembedding (logits) matmul
  double learnable_weight_fraction() const {
    return total_tflops > 0 ? learnable_weight_tflops / total_tflops : 0;
  }
  double attention_fraction() const {
    return total_tflops > 0 ? attention_tflops / total_tflops : 0;
  }
};

FlopsEstimate training_tflops_per_device(const ModelSpec& model, const TrainingShape& shape);

// MaxText calculate_tokens_training_per_device: max_target_length x per_device_batch_size x
// gradient_accumulation_steps.
double tokens_per_device_per_step(const TrainingShape& shape);

// {"total_tflops","learnable_weight_tflops","attention_tflops","learnable_weight_percent",
//  "attention_percent","breakdown":{"ffn","attention_projections","embedding"}}
nlohmann::json to_json(const FlopsEstimate& f);

}  // namespace podium::core
