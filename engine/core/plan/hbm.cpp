#include "engine/core/plan/hbm.h"

#include "engine/core/plan/hbm_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace podium::core {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// MaxText logical_axis_rules (configs/base.yml), reduced to what divides what:
// - weights: 'embed' -> fsdp, fsdp_transpose, context, context_usp_ulysses, expert;
//   'mlp'/'heads'/'vocab' -> fsdp_transpose, tensor, tensor_sequence, autoregressive;
//   'exp' -> expert; 'layers' -> stage. Every weight is therefore split over every axis except
//   data and diloco (replicas). Older meshes' sequence and tensor_transpose axes shard 'embed'
//   and 'mlp' the same way.
// - activations: 'activation_batch' -> data, fsdp, fsdp_transpose, expert (and diloco
//   replicas); 'activation_length' -> context, context_usp_ulysses (older: sequence);
//   'activation_embed'/'activation_mlp'/'activation_heads' -> tensor, tensor_sequence.
const std::set<std::string, std::less<>> kReplicaAxes = {"data", "diloco",
                                                         "context_autoregressive"};
const std::set<std::string, std::less<>> kBatchAxes = {"data", "fsdp", "fsdp_transpose", "expert",
                                                       "diloco"};
const std::set<std::string, std::less<>> kSequenceAxes = {"context", "context_usp_ulysses",
                                                          "sequence"};
const std::set<std::string, std::less<>> kHiddenAxes = {"tensor", "tensor_sequence",
                                                        "tensor_transpose"};

int axis(const std::map<std::string, int>& axes, const std::string& name) {
  auto it = axes.find(name);
  return it == axes.end() ? 1 : std::max(1, it->second);
}

// Elements per token of each checkpoint_name tag in one decoder layer.
struct LayerTensors {
  std::map<std::string, double> dims;
};

// How one MoE layer routes a token (MaxText moe.py): the dispatched copies of each token the
// experts see, and, on the capacity path (capacity_factor > 0, dense_matmul), the expert
// capacity per sequence C = int(S k / X cf), whose dispatch and combine masks [S, X, C] grow with
// the sequence. Dropless routing (sparse_matmul) sends every token to its k experts.
struct MoeRouting {
  bool capacity = false;
  double slots = 0;   // C, per sequence (capacity path)
  double copies = 0;  // dispatched copies per token: k cf (capacity) or k (dropless)
};

MoeRouting moe_routing(const ModelSpec& m, double capacity_factor, double sequence) {
  MoeRouting r;
  const double k = m.num_experts_per_tok;
  if (capacity_factor > 0) {
    r.capacity = true;
    r.slots = std::max(1.0, std::floor(sequence * k / m.num_experts * capacity_factor));
    r.copies = k * capacity_factor;
  } else {
    r.copies = k;
  }
  return r;
}

LayerTensors layer_tensors(const ModelSpec& m, bool full_attention, bool moe_layer,
                           const MoeRouting& routing) {
  LayerTensors t;
  const double e = m.emb_dim;
  t.dims["decoder_layer_input"] = e;  // the scan carry: always kept, the remat restart point
  if (!full_attention && m.linear_attention) {
    const LinearAttentionDims& g = *m.linear_attention;
    const double k_dim = static_cast<double>(g.num_key_heads) * g.key_head_dim;
    const double v_dim = static_cast<double>(g.num_value_heads) * g.value_head_dim;
    t.dims["query_proj"] = k_dim;
    t.dims["key_proj"] = k_dim;
    t.dims["value_proj"] = v_dim;
    t.dims["context"] = v_dim;
  } else if (m.attention_type == "mla") {
    const double h = m.num_query_heads;
    const double qk = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    t.dims["query_proj"] = h * qk;
    t.dims["key_proj"] = h * qk;
    t.dims["value_proj"] = h * m.mla.v_head_dim;
    t.dims["context"] = h * m.mla.v_head_dim;
  } else {
    t.dims["query_proj"] = static_cast<double>(m.num_query_heads) * m.head_dim;
    t.dims["key_proj"] = static_cast<double>(m.num_kv_heads) * m.head_dim;
    t.dims["value_proj"] = static_cast<double>(m.num_kv_heads) * m.head_dim;
    t.dims["context"] = static_cast<double>(m.num_query_heads) * m.head_dim;
  }
  t.dims["out_proj"] = e;

  const size_t n_act = std::max<size_t>(1, m.mlp_activations.size());
  auto add_mlp = [&](const std::string& prefix, double width, double out, double copies) {
    if (n_act >= 2) {
      t.dims[prefix + "mlpwi_0"] += copies * width;
      t.dims[prefix + "mlpwi_1"] += copies * width * static_cast<double>(n_act - 1);
    } else {
      t.dims[prefix + "mlpwi"] += copies * width;
    }
    t.dims[prefix + "mlpwo"] += copies * out;
  };
  if (moe_layer) {
    // Routed experts see each token `routing.copies` times (k dropless; k cf at expert capacity:
    // the [X, C, moe_mlp] buffers are padded to capacity).
    add_mlp("moe_", m.moe_mlp_dim, e, routing.copies);
    if (m.shared_experts > 0)
      add_mlp("", static_cast<double>(m.moe_mlp_dim) * m.shared_experts, e, 1);
    t.dims["mlp_activation"] =
        static_cast<double>(m.moe_mlp_dim) * (routing.copies + m.shared_experts);
    // The routing residuals autodiff keeps when nothing is rematerialized (remat_policy none):
    // at capacity the dispatch and combine masks [S, X, C] and the one-hot slots [S, k, X, C]
    // (X C (2 + k) per token), dropless the k permuted copies of the token (k E).
    t.dims["moe_routing_residuals"] =
        routing.capacity
            ? static_cast<double>(m.num_experts) * routing.slots * (2.0 + m.num_experts_per_tok)
            : routing.copies * e;
  } else {
    add_mlp("", m.mlp_dim, e, 1);
    t.dims["mlp_activation"] = m.mlp_dim;
  }
  t.dims["norm_outputs"] = 2 * e;
  return t;
}

const std::vector<std::string> kQkv = {"query_proj", "key_proj", "value_proj", "qkv_proj"};
const std::vector<std::string> kMlp = {"mlpwi_0",     "mlpwi_1",     "mlpwi",    "mlpwo",
                                       "moe_mlpwi_0", "moe_mlpwi_1", "moe_mlpwo"};

std::vector<std::string> concat(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::set<std::string> saved_tags(const HbmInput& in) {
  if (in.remat_policy == "custom") {
    std::set<std::string> saved;
    for (const auto& [name, where] : in.custom_remat) {
      if (where == "device") saved.insert(name);
    }
    return saved;
  }
  const RematPolicyInfo* p = find_remat_policy(in.remat_policy);
  if (!p) p = find_remat_policy("full");
  return {p->saved.begin(), p->saved.end()};
}

struct Parts {
  HbmBreakdown b;
  HbmSharding s;
  // The token-dependent part of the remat floor (GiB, margin excluded): what XLA's
  // rematerialization cannot recompute away when the natural peak is over the memory limit.
  double floor_token = 0;
};

Parts compute(const HbmInput& in, const TrainingShape& shape) {
  const ModelSpec& m = *in.model;
  Parts out;
  HbmSharding& s = out.s;
  int total_devices = 1;
  for (const auto& [name, size] : in.axes) {
    const int n = std::max(1, size);
    total_devices *= n;
    if (!kReplicaAxes.contains(name)) s.state *= n;
    if (kBatchAxes.contains(name)) s.batch *= n;
    if (kSequenceAxes.contains(name)) s.sequence *= n;
    if (kHiddenAxes.contains(name)) s.hidden *= n;
  }
  s.layers = axis(in.axes, "stage");
  // Global batch = per_device_batch_size x devices (one micro-batch); a device holds the
  // activations of its batch x sequence shard.
  const double global_tokens =
      shape.per_device_batch_size * shape.max_target_length * static_cast<double>(total_devices);
  s.tokens_per_device = global_tokens / (static_cast<double>(s.batch) * s.sequence);

  const ParamCounts pc = count_parameters(m);
  const double w_bytes = dtype_bytes(in.weight_dtype).value_or(4);
  const double g_bytes = dtype_bytes(in.grad_dtype).value_or(4);
  const double a_bytes = dtype_bytes(in.dtype).value_or(2);
  const double state = s.state;

  HbmBreakdown& b = out.b;
  b.params = pc.total * w_bytes / state;
  b.gradients = pc.total * g_bytes / state;
  double moment_params = 0;
  if (in.opt_type == "muon") {
    // Muon orthogonalises 2-D weight matrices (1 momentum); the embedding tables go to Adam.
    const double tables = pc.embedding + pc.unembedding;
    moment_params = (pc.total - tables) * 1 + tables * 2;
  } else {
    moment_params = pc.total * optimizer_moments(in.opt_type).value_or(2);
  }
  // mu_dtype and nu inherit weight_dtype in MaxText (base.yml mu_dtype: "").
  double opt_shards = state;
  if (in.shard_optimizer_over_data) opt_shards *= axis(in.axes, "data");
  b.optimizer_state = moment_params * w_bytes / opt_shards;
  if (shape.gradient_accumulation_steps > 1) b.gradient_accumulation = pc.total * g_bytes / state;

  // Activations kept for the backward pass: per layer, the tags the remat policy saves.
  const std::set<std::string> saved = saved_tags(in);
  const MoeRouting routing = moe_routing(m, in.capacity_factor, shape.max_target_length);
  double saved_dims_all_layers = 0;
  // The largest layer's intermediates that its backward pass recomputes: every tag but those the
  // policy saved (read back from the saved activations, not recomputed) and the routed experts'
  // (in moe_routing below). The layer input stays: its gradient has its shape.
  double working_dims = 0;
  // The largest single intermediate of any layer (one tensor: recomputing cannot split it).
  double largest_tensor_dims = 0;
  for (int i = 0; i < m.num_decoder_layers; ++i) {
    const bool full_attention = !m.linear_attention || m.full_attention_interval <= 1 ||
                                (i + 1) % m.full_attention_interval == 0;
    const bool moe_layer = m.is_moe() && i >= m.num_dense_layers();
    const LayerTensors t = layer_tensors(m, full_attention, moe_layer, routing);
    double layer_dims = 0;
    for (const auto& [tag, dims] : t.dims) {
      if (tag == "decoder_layer_input" || saved.contains(tag)) saved_dims_all_layers += dims;
      if (tag.rfind("moe_", 0) != 0 && !saved.contains(tag)) layer_dims += dims;
      if (tag != "decoder_layer_input" && tag != "moe_routing_residuals")
        largest_tensor_dims = std::max(largest_tensor_dims, dims);
    }
    working_dims = std::max(working_dims, layer_dims);
  }
  const double hidden = s.hidden;
  // Saved for the backward pass, plus the working set of the one layer whose backward runs: its
  // recomputed intermediates and their gradients (kHbmLayerWorkingCopies).
  b.activations = s.tokens_per_device * saved_dims_all_layers / s.layers * a_bytes / hidden;
  b.layer_working = s.tokens_per_device * working_dims * a_bytes * kHbmLayerWorkingCopies / hidden;
  // Attention scores outside a flash kernel: a block of `attention_query_block` queries against
  // every key of the sequence at a time, float32 scores and their probabilities in the compute
  // dtype (MaxText attention=dot_product: one block of S; splash/flash keep them in VMEM: none).
  double attention_block_bytes = 0;
  if (in.attention_query_block > 0) {
    const double block = std::min<double>(in.attention_query_block, shape.max_target_length);
    const double sequences = s.tokens_per_device / shape.max_target_length;
    attention_block_bytes = sequences * static_cast<double>(m.num_query_heads) * block *
                            shape.max_target_length * (4.0 + a_bytes) / hidden;
    b.layer_working += attention_block_bytes;
  }

  // Logits in float32 (cast_logits_to_fp32), batch also split over pipeline stages
  // (activation_embed_and_logits_batch), vocab over tensor axes; vocab tiling computes the loss
  // in num_vocab_tiling chunks; kHbmLogitsCopies float32 copies at the peak. (The compile grid's
  // decoder also keeps the bfloat16 original at very large token counts, 23.48 GiB for 15.63 of
  // float32 logits on v5e; MaxText's deepseek2-16b run does not: 100.4 GB in all, which the
  // extra copy would overshoot by 15%.)
  const double logits_tokens = s.tokens_per_device / s.layers;
  b.logits = logits_tokens * static_cast<double>(m.vocab_size) * 4.0 * kHbmLogitsCopies / hidden /
             std::max(1, in.num_vocab_tiling);

  // MoE, modelled per routing path: the buffers of the one MoE layer whose backward runs (every
  // other layer keeps only what the remat policy saves, counted in activations above).
  // - capacity path (MaxText dense_matmul): the dispatch and combine masks [S, X, C] in the
  //   compute dtype (2 X C per token: grows with S), the dispatched tokens [X, C, E] going in and
  //   out (2 k cf E per token), the expert hidden [X, C, moe_mlp] (k cf moe_mlp (n_act + 1) per
  //   token) and float32 router logits and probabilities (2 X), once (kHbmMoeCapacityCopies).
  //   The one-hot slots [S, k, X, C] that build the masks are fused into the reductions that
  //   consume them and never reach HBM;
  // - dropless (capacity_factor <= 0, MaxText's default sparse_matmul): the k permuted copies of
  //   each token in and out (2 k E), the expert hidden (k moe_mlp (n_act + 1)), router (2 X),
  //   twice (kHbmMoeDroplessCopies: not in the compile grid; its band stays wide).
  if (m.is_moe()) {
    const double n_act = static_cast<double>(std::max<size_t>(1, m.mlp_activations.size()));
    const double x = m.num_experts;
    const double expert_dims =
        routing.copies * 2.0 * m.emb_dim + routing.copies * m.moe_mlp_dim * (n_act + 1);
    const double router_bytes = 2.0 * x * 4.0;
    const double per_token_bytes =
        routing.capacity ? ((2.0 * x * routing.slots + expert_dims) * a_bytes + router_bytes) *
                               kHbmMoeCapacityCopies
                         : (expert_dims * a_bytes + router_bytes) * kHbmMoeDroplessCopies;
    b.moe_routing = s.tokens_per_device * per_token_bytes / hidden;
  }

  // FSDP all-gathers a layer's weights in the compute dtype before using them; XLA prefetches
  // the next layer while the current one runs, so two layers' worth are live. Still split over
  // tensor axes, and routed experts over the expert axis.
  const int t_shards = s.hidden;
  const int e_shards = axis(in.axes, "expert");
  double largest = 0;
  {
    const double e = m.emb_dim;
    const double n_act = static_cast<double>(std::max<size_t>(1, m.mlp_activations.size()));
    const double attention =
        m.num_full_attention_layers() > 0 ? pc.attention / m.num_full_attention_layers() : 0.0;
    const double linear = m.num_linear_attention_layers() > 0
                              ? pc.linear_attention / m.num_linear_attention_layers()
                              : 0.0;
    const double attn = std::max(attention, linear) / t_shards;
    const double dense = (e * m.mlp_dim * (n_act + 1)) / t_shards;
    double moe = 0;
    if (m.is_moe() && m.num_moe_layers() > 0) {
      moe = pc.moe_routed / m.num_moe_layers() / (t_shards * static_cast<double>(e_shards)) +
            (pc.moe_shared + pc.moe_router) / m.num_moe_layers() / t_shards;
    }
    largest = attn + (m.num_dense_layers() > 0 ? std::max(dense, moe) : moe);
  }
  // Two layers gathered in the compute dtype (the one in use and the prefetched next), and the
  // layer's full weight gradient before its reduce-scatter, in the gradient dtype.
  b.weight_gather = largest * (2.0 * a_bytes + g_bytes);

  b.compiler_margin = kHbmCompilerMargin * b.sum();

  // The remat floor (docs/planner.md "HBM against the compiler"): when the natural peak is over
  // the limit, XLA's rematerialization recomputes what it can. It cannot go below the saved
  // activations plus the larger of two moments: the loss, with the float32 logits and one copy in
  // the compute dtype (the logits or their gradient: kHbmFloorLogitsComputeCopies), and the
  // backward of one layer, with its largest single intermediate and that tensor's gradient, one
  // attention block's scores and, at expert capacity, the dispatch and combine masks (each one
  // tensor that recomputation cannot split).
  {
    const double vocab_tokens = logits_tokens * static_cast<double>(m.vocab_size) / hidden /
                                std::max(1, in.num_vocab_tiling);
    const double loss_bytes = vocab_tokens * (4.0 + a_bytes * kHbmFloorLogitsComputeCopies);
    double layer_bytes =
        2.0 * s.tokens_per_device * largest_tensor_dims * a_bytes / hidden + attention_block_bytes;
    if (m.is_moe() && routing.capacity) {
      layer_bytes += s.tokens_per_device * 2.0 * m.num_experts * routing.slots * a_bytes / hidden;
    }
    const double natural_token =
        b.activations + b.layer_working + b.logits + b.moe_routing;  // bytes still
    out.floor_token = std::min(natural_token, b.activations + std::max(loss_bytes, layer_bytes));
    out.floor_token /= kGiB;
  }

  // bytes -> GiB
  for (double* v :
       {&b.params, &b.gradients, &b.optimizer_state, &b.gradient_accumulation, &b.activations,
        &b.layer_working, &b.logits, &b.moe_routing, &b.weight_gather, &b.compiler_margin}) {
    *v /= kGiB;
  }
  return out;
}

std::string format_gib(double gib) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", gib);
  return buf;
}

std::string format_number(double v) {
  char buf[32];
  if (v == std::floor(v)) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%g", v);
  }
  return buf;
}

// The estimate's parts that do not depend on tokens (margin excluded).
double fixed_part(const HbmBreakdown& b) {
  return b.params + b.gradients + b.optimizer_state + b.gradient_accumulation + b.weight_gather;
}

// The parts that grow with tokens per device.
double token_part(const HbmBreakdown& b) {
  return b.activations + b.layer_working + b.logits + b.moe_routing;
}

// A variant's total under the same calibration as the estimate (fitted scales of each part).
double total_calibrated(const HbmInput& in, const TrainingShape& shape, const HbmEstimate& e) {
  const HbmBreakdown b = compute(in, shape).b;
  return (1 + kHbmCompilerMargin) * (e.fixed_scale * fixed_part(b) + e.token_scale * token_part(b));
}

}  // namespace

const std::vector<RematPolicyInfo>& remat_policies() {
  // MaxText decoders.get_remat_policy (save_only_these_names / minimal_policy). Ordered from
  // least to most HBM.
  static const std::vector<RematPolicyInfo> policies = {
      {"full", {}, "only the decoder layer input; everything else recomputed"},
      {"qkv_proj_offloaded", {}, "q/k/v projections offloaded to host memory"},
      {"minimal_offloaded", {}, "all weight matmul outputs offloaded to host memory"},
      {"save_out_proj", {"out_proj"}, ""},
      {"save_qkv_proj", kQkv, ""},
      {"save_dot_except_mlp", concat({kQkv, {"out_proj"}}), ""},
      {"save_dot_with_context_except_mlp", concat({kQkv, {"context", "out_proj"}}), ""},
      {"save_dot_except_mlpwi", concat({kQkv, {"out_proj", "mlpwo", "moe_mlpwo"}}), ""},
      {"minimal", concat({kQkv, {"out_proj"}, kMlp}), "all weight matmul outputs except context"},
      {"minimal_with_context", concat({kQkv, {"context", "out_proj"}, kMlp}),
       "minimal plus the attention output"},
      {"minimal_flash", concat({kQkv, {"context", "out_proj"}, kMlp}),
       "deprecated alias of minimal_with_context"},
      {"custom", {}, "per-tensor keys (query_proj, mlpwo, ...) set to device are kept"},
      {"none",
       concat({kQkv,
               {"context", "out_proj"},
               kMlp,
               {"mlp_activation", "norm_outputs", "moe_routing_residuals"}}),
       "no rematerialisation: every intermediate kept"},
  };
  return policies;
}

const RematPolicyInfo* find_remat_policy(std::string_view name) {
  for (const RematPolicyInfo& p : remat_policies()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::optional<int> optimizer_moments(std::string_view opt_type) {
  if (opt_type == "adamw" || opt_type == "adam_pax") return 2;
  if (opt_type == "muon") return 1;
  if (opt_type == "sgd") return 0;
  return std::nullopt;
}

std::optional<double> dtype_bytes(std::string_view dtype) {
  if (dtype == "float32" || dtype == "fp32" || dtype == "f32") return 4;
  if (dtype == "bfloat16" || dtype == "bf16" || dtype == "float16" || dtype == "fp16") return 2;
  if (dtype == "fp8" || dtype == "float8" || dtype == "int8" || dtype == "float8_e4m3fn") return 1;
  return std::nullopt;
}

HbmEstimate estimate_hbm(const HbmInput& in) {
  HbmEstimate e;
  e.capacity_gib = in.capacity_gib;
  if (!in.model) return e;
  Parts parts = compute(in, in.shape);
  e.sharding = parts.s;
  e.breakdown = parts.b;

  // Calibration: the estimate's structure fitted to the observed runs (hbm_calibration.h), an
  // uncertainty band, and the verdict against capacity.
  const double margin = 1 + kHbmCompilerMargin;
  std::vector<HbmPoint> points;
  for (const HbmObservation& o : in.history) {
    if (o.gib_per_device <= 0 || o.tokens_per_device <= 0 || in.shape.max_target_length <= 0)
      continue;
    TrainingShape observed = in.shape;
    if (o.per_device_batch_size > 0 && o.max_target_length > 0) {
      observed.per_device_batch_size = o.per_device_batch_size;
      observed.max_target_length = o.max_target_length;
    } else {
      observed.per_device_batch_size = o.tokens_per_device / in.shape.max_target_length;
    }
    const HbmBreakdown ob = compute(in, observed).b;
    points.push_back({o.gib_per_device, fixed_part(ob), token_part(ob), o.tokens_per_device, o.oom,
                      o.source, o.run});
  }
  const double raw = e.breakdown.sum();
  const double fixed = fixed_part(e.breakdown);
  const double tokens = token_part(e.breakdown);
  const bool unvalidated =
      (in.model->is_moe() && in.capacity_factor <= 0) || in.model->linear_attention.has_value();
  // The remat floor rests on the compile grid: only for the pure estimate of a validated model
  // (history calibrates the natural peak of runs that may have rematerialized already).
  std::optional<double> floor_token;
  if (points.empty() && !unvalidated) floor_token = parts.floor_token;
  const HbmVerdict verdict =
      predict_hbm(fixed, tokens, in.shape.per_device_batch_size * in.shape.max_target_length,
                  margin, points, unvalidated, in.capacity_gib, floor_token);
  if (!points.empty()) {
    const HbmFit fit = fit_hbm(points, margin);
    e.basis = "history";
    e.observations = fit.points;
    e.fixed_scale = fit.fixed_scale;
    e.token_scale = fit.token_scale;
    HbmBreakdown& b = e.breakdown;
    for (double* v : {&b.params, &b.gradients, &b.optimizer_state, &b.gradient_accumulation,
                      &b.weight_gather}) {
      *v *= fit.fixed_scale;
    }
    for (double* v : {&b.activations, &b.layer_working, &b.logits, &b.moe_routing})
      *v *= fit.token_scale;
    b.compiler_margin = kHbmCompilerMargin * (b.sum() - b.compiler_margin);
    if (verdict.quoted) {
      for (const HbmObservation& o : in.history) {
        if (o.run == verdict.quoted->run && o.source == verdict.quoted->source &&
            o.gib_per_device == verdict.quoted->observed_gib) {
          e.quoted = o;
          break;
        }
      }
    }
  }
  e.per_device_gib = std::max(e.breakdown.sum(), verdict.gib);
  e.low_gib = verdict.low_gib;
  e.high_gib = verdict.high_gib;
  e.verdict = verdict.verdict;
  e.remat_floor_gib = verdict.floor_gib;
  e.remat_floor_low_gib = verdict.floor_low_gib;
  e.remat_floor_high_gib = verdict.floor_high_gib;
  e.remat_pressure = verdict.remat_pressure;
  e.calibration_factor = raw > 0 ? e.per_device_gib / raw : 1;
  e.fits = e.verdict == "fits";
  if (e.verdict != "does_not_fit") return e;

  // What would fit: the usual levers, each tried alone on top of the current settings.
  auto try_change = [&](const std::string& change, const HbmInput& variant) {
    const double gib = total_calibrated(variant, variant.shape, e);
    e.suggestions.push_back({change, gib, gib <= in.capacity_gib});
  };
  if (in.remat_policy != "full") {
    HbmInput v = in;
    v.remat_policy = "full";
    try_change("remat_policy=full", v);
  }
  {
    // The largest halving of the batch that fits (down to 1, or one halving below a fractional
    // batch); when none fits, the smallest one tried.
    const double min_batch = std::min(1.0, in.shape.per_device_batch_size / 2);
    std::optional<HbmSuggestion> best;
    for (double b = in.shape.per_device_batch_size / 2; b > 0 && b >= min_batch; b /= 2) {
      HbmInput v = in;
      v.shape.per_device_batch_size = b;
      const double gib = total_calibrated(v, v.shape, e);
      best =
          HbmSuggestion{"per_device_batch_size=" + format_number(b), gib, gib <= in.capacity_gib};
      if (best->fits) break;
    }
    if (best) e.suggestions.push_back(*best);
  }
  const int data = axis(in.axes, "data");
  if (data > 1) {
    HbmInput v = in;
    v.axes["fsdp"] = axis(in.axes, "fsdp") * data;
    v.axes["data"] = 1;
    try_change(
        "move data parallelism into fsdp (fsdp=" + format_number(v.axes["fsdp"]) + ", data=1)", v);
    if (!in.shard_optimizer_over_data) {
      HbmInput z = in;
      z.shard_optimizer_over_data = true;
      try_change("shard_optimizer_over_data=true", z);
    }
  }
  if (in.num_vocab_tiling <= 1 && e.breakdown.logits > 0.1 * e.per_device_gib) {
    HbmInput v = in;
    v.num_vocab_tiling = 4;
    try_change("num_vocab_tiling=4", v);
  }
  if (in.weight_dtype == "float32") {
    HbmInput v = in;
    v.weight_dtype = "bfloat16";
    try_change("weight_dtype=bfloat16 (halves params and optimizer moments; lower precision)", v);
  }

  std::string fitting;
  std::string others;
  for (const HbmSuggestion& s : e.suggestions) {
    std::string& target = s.fits ? fitting : others;
    if (!target.empty()) target += "; ";
    target += s.change + " -> " + format_gib(s.per_device_gib) + " GiB";
  }
  e.hint = "needs " + format_gib(e.per_device_gib) + " GiB per device of " +
           format_gib(in.capacity_gib) + " GiB. ";
  if (e.quoted && e.quoted->oom) {
    e.hint = "needs at least " + format_gib(e.low_gib) + " GiB per device of " +
             format_gib(in.capacity_gib) + " GiB: run " + e.quoted->run + " ran out of memory at " +
             format_number(e.quoted->tokens_per_device) + " tokens per device, needing " +
             format_gib(e.quoted->gib_per_device) + " GiB (" + e.quoted->source + "). ";
  }
  if (!fitting.empty()) {
    e.hint += "Would fit: " + fitting + ".";
  } else {
    e.hint += "No single change fits";
    if (!others.empty()) e.hint += " (" + others + ")";
    e.hint += "; use more devices (a larger slice or more slices) with more fsdp sharding.";
  }
  return e;
}

nlohmann::json to_json(const HbmEstimate& e) {
  using nlohmann::json;
  json suggestions = json::array();
  for (const HbmSuggestion& s : e.suggestions) {
    suggestions.push_back(
        {{"change", s.change}, {"per_device_gib", s.per_device_gib}, {"fits", s.fits}});
  }
  const HbmBreakdown& b = e.breakdown;
  return {{"per_device_gib", e.per_device_gib},
          {"capacity_gib", e.capacity_gib},
          {"low_gib", e.low_gib},
          {"high_gib", e.high_gib},
          {"fits", e.fits},
          {"verdict", e.verdict},
          {"remat_floor", e.remat_floor_gib > 0 ? json{{"gib", e.remat_floor_gib},
                                                       {"low_gib", e.remat_floor_low_gib},
                                                       {"high_gib", e.remat_floor_high_gib}}
                                                : json(nullptr)},
          {"remat_pressure", e.remat_pressure},
          {"basis", e.basis},
          {"source", e.quoted ? json{{"kind", e.quoted->source},
                                     {"gib_per_device", e.quoted->gib_per_device},
                                     {"tokens_per_device", e.quoted->tokens_per_device},
                                     {"oom", e.quoted->oom},
                                     {"run", e.quoted->run}}
                              : json(nullptr)},
          {"observations", e.observations},
          {"fixed_scale", e.fixed_scale},
          {"token_scale", e.token_scale},
          {"calibration_factor", e.calibration_factor},
          {"breakdown",
           {{"params", b.params},
            {"gradients", b.gradients},
            {"optimizer_state", b.optimizer_state},
            {"gradient_accumulation", b.gradient_accumulation},
            {"activations", b.activations},
            {"layer_working", b.layer_working},
            {"logits", b.logits},
            {"moe_routing", b.moe_routing},
            {"weight_gather", b.weight_gather},
            {"compiler_margin", b.compiler_margin}}},
          {"sharding",
           {{"state", e.sharding.state},
            {"batch", e.sharding.batch},
            {"sequence", e.sharding.sequence},
            {"hidden", e.sharding.hidden},
            {"layers", e.sharding.layers},
            {"tokens_per_device", e.sharding.tokens_per_device}}},
          {"suggestions", suggestions}};
}

}  // namespace podium::core
