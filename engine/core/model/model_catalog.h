#pragma once
// Model catalog (GET /api/v1/models): architectures in MaxText's own config keys, embedded at
// build time from engine/core/models/*.yaml, with parameter counts computed from the shapes the
// way MaxText builds its weights. Pure: no I/O at run time.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/validation/parsed.h"

namespace podium::core {

// Multi-head latent attention (DeepSeek-V2 style, MaxText attention_type: "mla").
struct MlaDims {
  int q_lora_rank = 0;  // 0: queries projected directly from the embedding
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

// Linear-attention layers of a hybrid model, in the shape of MaxText's Gated Delta Net
// (Qwen3-Next gdn_* keys).
struct LinearAttentionDims {
  int num_key_heads = 0;
  int num_value_heads = 0;
  int key_head_dim = 0;
  int value_head_dim = 0;
  int conv_kernel_dim = 0;
};

struct ModelSpec {
  std::string name;                  // MaxText model_name, e.g. "llama2-7b"
  std::string description;           // one line for the dashboard
  std::string source;                // where the architecture comes from
  std::string workload = "maxtext";  // "maxtext" or "reference"
  std::string decoder_block;         // MaxText decoder_block ("llama2", "deepseek", ...)

  int emb_dim = 0;
  int num_query_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int mlp_dim = 0;
  int num_decoder_layers = 0;
  int vocab_size = 0;
  std::vector<std::string> mlp_activations;  // length = number of up-projections (gated: 2)
  bool logits_via_embedding = false;         // true: unembedding shares the embedding table

  // Mixture of experts. num_experts <= 1 means a dense model.
  int num_experts = 1;
  int num_experts_per_tok = 1;
  int shared_experts = 0;
  int moe_mlp_dim = 0;
  int first_num_dense_layers = 0;  // leading dense layers (DeepSeek)
  std::string routed_score_func;
  bool routed_bias = false;

  std::string attention_type = "global";  // "global" or "mla"
  MlaDims mla;

  // Hybrid layout: every `full_attention_interval`-th layer has full attention, the others use
  // linear attention (MaxText inhomogeneous_layer_cycle_interval). 1 = every layer full.
  int full_attention_interval = 1;
  std::optional<LinearAttentionDims> linear_attention;

  std::optional<double> published_total_params;
  std::optional<double> published_active_params;
  std::string published_source;
  // Whether MaxText has this model as a model_name (its configs/models/<name>.yml). When not
  // (podium.maxtext_known: false, e.g. a team's own architecture), a maxtext run must supply the
  // model's config file (run spec config_file) and Podium passes no model_name.
  bool maxtext_known = true;

  bool is_moe() const { return num_experts > 1; }
  int num_dense_layers() const;  // layers with a dense MLP
  int num_moe_layers() const;    // layers with a routed MLP
  int num_full_attention_layers() const;
  int num_linear_attention_layers() const;
};

// Parameter counts by component, in parameters (not bytes).
struct ParamCounts {
  double embedding = 0;    // input embedding table
  double unembedding = 0;  // output projection (0 when logits_via_embedding)
  double attention = 0;    // all full-attention layers (projections + norms inside attention)
  double linear_attention = 0;
  double dense_mlp = 0;   // dense MLP layers
  double moe_routed = 0;  // all routed experts of all MoE layers
  double moe_shared = 0;  // shared experts
  double moe_router = 0;  // gate (+ bias)
  double norms = 0;       // layer norms and the final norm
  double total = 0;
  // Parameters whose weights take part in the matmuls of one token: everything except the
  // input embedding table (a gather, no FLOPs) and the routed experts a token is not sent to.
  double active_per_token = 0;
  // Largest single decoder layer (what FSDP all-gathers at once).
  double largest_layer = 0;
};

ParamCounts count_parameters(const ModelSpec& model);

// The catalog, sorted by name.
const std::vector<ModelSpec>& model_catalog();
const ModelSpec* find_model(std::string_view name);
std::vector<std::string> model_names();

// Parses one catalog YAML document (MaxText keys + a `podium` block). Its one error, if any, is
// about the whole document (field ""), the message naming the key.
Parsed<ModelSpec> parse_model_yaml(std::string_view yaml_text);

// A MaxText model config as a team writes it (the keys of MaxText's configs/models/*.yml; any
// other MaxText key is kept and ignored), from YAML text or a JSON object: POST /api/v1/models.
// The model's name comes from the request, not the file. Such a model is not one MaxText knows
// by model_name (maxtext_known false): a maxtext run of it supplies the file as config_file.
inline constexpr size_t kMaxModelConfigEntries = 4096;  // keys, list items and nested values
// Its one error, if any, is about the whole document (field ""), the message naming the key.
struct ModelConfig {
  ModelSpec model;        // name, description and source left empty
  nlohmann::json config;  // the config as JSON (YAML numbers as numbers)
};
Parsed<ModelConfig> parse_model_config_yaml(std::string_view yaml_text);
Parsed<ModelConfig> parse_model_config_json(const nlohmann::json& config);

// {"name","description","source","workload","architecture":{MaxText keys...},
//  "parameters":{"total","active_per_token","breakdown":{...}},"published":{...}}
nlohmann::json to_json(const ModelSpec& model);

namespace detail {
// Files embedded at build time (engine/core/models/*.yaml, engine/core/data/*.txt); generated
// by engine/core/CMakeLists.txt. path is relative to engine/core, e.g. "models/llama2-7b.yaml".
struct EmbeddedFile {
  std::string_view path;
  std::string_view content;
};
std::span<const EmbeddedFile> embedded_files();
const EmbeddedFile* find_embedded_file(std::string_view path);
}  // namespace detail

}  // namespace podium::core
