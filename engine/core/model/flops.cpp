#include "engine/core/model/flops.h"

#include <algorithm>

namespace podium::core {

namespace {

constexpr double kTera = 1e12;

// maxtext_utils.calculate_ffn_mamtul_tflops_per_device: n_activations up-projections + one
// down-projection, 2 FLOPs per multiply-add.
double ffn_matmul_flops(const ModelSpec& m, double bs, int mlp_dim) {
  const double n_act = static_cast<double>(std::max<size_t>(1, m.mlp_activations.size()));
  const double ffn1 = 2.0 * bs * mlp_dim * m.emb_dim * n_act;
  const double ffn2 = 2.0 * bs * mlp_dim * m.emb_dim;
  return ffn1 + ffn2;
}

struct AttentionFlops {
  double qkv = 0;
  double causal_attention = 0;
  double projection = 0;
};

// One full-attention layer. MLA: maxtext_utils.calculate_mla_tflops_per_device (indexer off);
// otherwise the grouped-query formula of calculate_tflops_training_per_device. Both halve the
// score/value matmuls for the causal mask, as current MaxText does (Megatron/NeMo convention).
AttentionFlops full_attention_flops(const ModelSpec& m, double b, double s) {
  AttentionFlops f;
  const double bs = b * s;
  const double e = m.emb_dim;
  const double h = m.num_query_heads;
  if (m.attention_type == "mla") {
    const MlaDims& a = m.mla;
    const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const double q = a.q_lora_rank == 0 ? 2.0 * bs * e * h * qk
                                        : 2.0 * bs * (e * a.q_lora_rank + a.q_lora_rank * h * qk);
    const double kv =
        2.0 * bs *
        (e * (a.kv_lora_rank + a.qk_rope_head_dim) +
         static_cast<double>(a.kv_lora_rank) * h * (a.qk_nope_head_dim + a.v_head_dim));
    f.qkv = q + kv;
    f.causal_attention = 2.0 * bs * s * h * (qk + a.v_head_dim) / 2.0;
    f.projection = 2.0 * bs * e * h * a.v_head_dim;
    return f;
  }
  const double d = m.head_dim;
  f.qkv = 2.0 * bs * e * (h + 2.0 * m.num_kv_heads) * d;
  f.causal_attention = 4.0 * bs * s * h * d / 2.0;
  f.projection = 2.0 * bs * e * h * d;
  return f;
}

// One linear-attention layer: maxtext_utils.calculate_gated_delta_net_flops_per_device.
// Projections and the short convolution count as learnable-weight FLOPs; the recurrent core
// (4 O(D^2) products per head and token) counts as attention FLOPs and is linear in S.
void linear_attention_flops(const ModelSpec& m, double b, double s, double* weights,
                            double* attention) {
  const LinearAttentionDims& g = *m.linear_attention;
  const double bs = b * s;
  const double e = m.emb_dim;
  const double k_dim = static_cast<double>(g.num_key_heads) * g.key_head_dim;
  const double v_dim = static_cast<double>(g.num_value_heads) * g.value_head_dim;
  const double qkvz_ba = 2.0 * bs * e * (2 * k_dim + 2 * v_dim + 2.0 * g.num_value_heads);
  const double out = 2.0 * bs * e * v_dim;
  const double conv = 2.0 * bs * g.conv_kernel_dim * (2 * k_dim + v_dim);
  *weights = qkvz_ba + out + conv;
  *attention =
      bs * (static_cast<double>(g.num_value_heads) * g.key_head_dim * g.value_head_dim * 8);
}

}  // namespace

FlopsEstimate training_tflops_per_device(const ModelSpec& m, const TrainingShape& shape) {
  const double b = shape.per_device_batch_size;
  const double s = shape.max_target_length;
  const double bs = b * s;

  // FFN, all layers. MaxText counts MoE FLOPs dropless: router + num_experts_per_tok routed
  // experts + shared experts per MoE layer; dense layers (DeepSeek first_num_dense_layers) use
  // mlp_dim (calculate_routed_and_shared_ffn_tflops_per_device).
  double ffn = ffn_matmul_flops(m, bs, m.mlp_dim) * m.num_dense_layers();
  double moe_ffn = 0;
  if (m.is_moe()) {
    const double gate = 2.0 * bs * m.emb_dim * m.num_experts;
    const double routed = ffn_matmul_flops(m, bs, m.moe_mlp_dim) * m.num_experts_per_tok;
    const double shared = ffn_matmul_flops(m, bs, m.moe_mlp_dim) * m.shared_experts;
    moe_ffn = (gate + routed + shared) * m.num_moe_layers();
    ffn += moe_ffn;
  }

  const AttentionFlops full = full_attention_flops(m, b, s);
  const int n_full = m.num_full_attention_layers();
  const int n_linear = m.num_linear_attention_layers();
  double linear_weights = 0;
  double linear_attention = 0;
  if (m.linear_attention && n_linear > 0) {
    linear_attention_flops(m, b, s, &linear_weights, &linear_attention);
  }
  const double projections = (full.qkv + full.projection) * n_full + linear_weights * n_linear;
  const double attention = full.causal_attention * n_full + linear_attention * n_linear;

  // Only the unembedding: the embedding lookup is a gather without dense math.
  const double embedding = 2.0 * bs * m.emb_dim * static_cast<double>(m.vocab_size);

  // x3: forward + backward (gradients w.r.t. activations and weights); x gradient accumulation.
  const double factor = 3.0 * std::max(1, shape.gradient_accumulation_steps) / kTera;
  FlopsEstimate f;
  f.ffn_tflops = ffn * factor;
  f.moe_ffn_tflops = moe_ffn * factor;
  f.attention_projection_tflops = projections * factor;
  f.embedding_tflops = embedding * factor;
  f.learnable_weight_tflops = f.ffn_tflops + f.attention_projection_tflops + f.embedding_tflops;
  f.attention_tflops = attention * factor;
  f.total_tflops = f.learnable_weight_tflops + f.attention_tflops;
  return f;
}

double tokens_per_device_per_step(const TrainingShape& shape) {
  return static_cast<double>(shape.max_target_length) * shape.per_device_batch_size *
         std::max(1, shape.gradient_accumulation_steps);
}

nlohmann::json to_json(const FlopsEstimate& f) {
  return {{"total_tflops", f.total_tflops},
          {"learnable_weight_tflops", f.learnable_weight_tflops},
          {"attention_tflops", f.attention_tflops},
          {"learnable_weight_percent", 100.0 * f.learnable_weight_fraction()},
          {"attention_percent", 100.0 * f.attention_fraction()},
          {"breakdown",
           {{"ffn", f.ffn_tflops},
            {"attention_projections", f.attention_projection_tflops},
            {"embedding", f.embedding_tflops}}}};
}

}  // namespace podium::core
