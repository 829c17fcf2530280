#include "engine/core/model/model_catalog.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

namespace podium::core {

namespace {

// MaxText YAML writes large numbers with digit separators (500_000); YAML 1.1 allows them but
// yaml-cpp's converters do not, so numbers are read as text and the separators dropped.
std::string scalar_text(const YAML::Node& node) {
  std::string text = node.as<std::string>();
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  return text;
}

double to_double(const YAML::Node& node, const std::string& key) {
  const std::string text = scalar_text(node);
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return value;
  } catch (const std::exception&) {
    throw std::runtime_error("key '" + key + "' is not a number: '" + node.as<std::string>() + "'");
  }
}

int catalog_to_int(const YAML::Node& node, const std::string& key) {
  const double value = to_double(node, key);
  if (value != std::floor(value) || std::fabs(value) > 2.0e9) {
    throw std::runtime_error("key '" + key + "' is not an integer");
  }
  return static_cast<int>(value);
}

bool to_bool(const YAML::Node& node, const std::string& key) {
  std::string text = node.as<std::string>();
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (text == "true") return true;
  if (text == "false") return false;
  throw std::runtime_error("key '" + key + "' is not a boolean");
}

void read_int(const YAML::Node& root, const char* key, int& out) {
  if (!root[key]) return;
  if (!root[key].IsScalar())
    throw std::runtime_error("key '" + std::string(key) + "' is not a number");
  out = catalog_to_int(root[key], key);
  if (out < 0) throw std::runtime_error("key '" + std::string(key) + "' must not be negative");
}

void read_string(const YAML::Node& root, const char* key, std::string& out) {
  if (!root[key]) return;
  if (!root[key].IsScalar())
    throw std::runtime_error("key '" + std::string(key) + "' is not a string");
  out = root[key].as<std::string>();
}

double matmul_params(double in, double out) {
  return in * out;
}

// One MLP block (dense or one expert): n_activations up-projections plus one down-projection,
// as MaxText's MlpBlock builds wi_0/wi_1 and wo.
double mlp_params(const ModelSpec& m, int mlp_dim) {
  const double n_act = static_cast<double>(std::max<size_t>(1, m.mlp_activations.size()));
  return matmul_params(m.emb_dim, mlp_dim) * n_act + matmul_params(mlp_dim, m.emb_dim);
}

// Attention block of one full-attention layer.
double full_attention_params(const ModelSpec& m) {
  const double e = m.emb_dim;
  if (m.attention_type == "mla") {
    const MlaDims& a = m.mla;
    const double h = m.num_query_heads;
    const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    double q = 0;
    if (a.q_lora_rank == 0) {
      q = e * h * qk;  // wq
    } else {
      q = e * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * h * qk;  // wq_a, q_norm, wq_b
    }
    const double kv = e * (a.kv_lora_rank + a.qk_rope_head_dim)                    // wkv_a
                      + a.kv_lora_rank                                             // kv_norm
                      + a.kv_lora_rank * h * (a.qk_nope_head_dim + a.v_head_dim);  // wkv_b
    const double out = h * a.v_head_dim * e;                                       // wo
    return q + kv + out;
  }
  const double d = m.head_dim;
  return e * m.num_query_heads * d + 2.0 * e * m.num_kv_heads * d + m.num_query_heads * d * e;
}

// One Gated Delta Net layer (MaxText Qwen3-Next): in_proj_qkvz, in_proj_ba, depthwise conv,
// A_log and dt_bias per value head, gated RMS norm over the value head dim, out_proj.
double linear_attention_params(const ModelSpec& m) {
  const LinearAttentionDims& g = *m.linear_attention;
  const double e = m.emb_dim;
  const double k_dim = static_cast<double>(g.num_key_heads) * g.key_head_dim;
  const double v_dim = static_cast<double>(g.num_value_heads) * g.value_head_dim;
  return e * (2 * k_dim + 2 * v_dim) + e * 2.0 * g.num_value_heads +
         g.conv_kernel_dim * (2 * k_dim + v_dim) + 2.0 * g.num_value_heads + g.value_head_dim +
         v_dim * e;
}

std::vector<ModelSpec> load_catalog() {
  std::vector<ModelSpec> models;
  for (const detail::EmbeddedFile& file : detail::embedded_files()) {
    if (!file.path.starts_with("models/") || !file.path.ends_with(".yaml")) continue;
    Parsed<ModelSpec> model = parse_model_yaml(file.content);
    // The YAML files are part of the build and covered by tests; a broken one is a programming
    // error that must not silently shrink the catalog.
    if (!model.ok())
      throw std::logic_error("model catalog " + std::string(file.path) + ": " + model.summary());
    models.push_back(std::move(*model.value));
  }
  std::sort(models.begin(), models.end(),
            [](const ModelSpec& a, const ModelSpec& b) { return a.name < b.name; });
  return models;
}

}  // namespace

int ModelSpec::num_dense_layers() const {
  if (!is_moe()) return num_decoder_layers;
  return std::clamp(first_num_dense_layers, 0, num_decoder_layers);
}

int ModelSpec::num_moe_layers() const {
  return num_decoder_layers - num_dense_layers();
}

int ModelSpec::num_full_attention_layers() const {
  if (!linear_attention || full_attention_interval <= 1) return num_decoder_layers;
  return num_decoder_layers / full_attention_interval;  // as MaxText: L // cycle_interval
}

int ModelSpec::num_linear_attention_layers() const {
  return num_decoder_layers - num_full_attention_layers();
}

ParamCounts count_parameters(const ModelSpec& m) {
  ParamCounts c;
  const double e = m.emb_dim;
  c.embedding = static_cast<double>(m.vocab_size) * e;
  c.unembedding = m.logits_via_embedding ? 0.0 : static_cast<double>(m.vocab_size) * e;

  const double full_attn = full_attention_params(m);
  const double linear_attn = m.linear_attention ? linear_attention_params(m) : 0.0;
  c.attention = full_attn * m.num_full_attention_layers();
  c.linear_attention = linear_attn * m.num_linear_attention_layers();

  const double dense_mlp = mlp_params(m, m.mlp_dim);
  c.dense_mlp = dense_mlp * m.num_dense_layers();

  double routed_one_layer = 0;
  double shared_one_layer = 0;
  double router_one_layer = 0;
  if (m.is_moe()) {
    const double expert = mlp_params(m, m.moe_mlp_dim);
    routed_one_layer = expert * m.num_experts;
    shared_one_layer = expert * m.shared_experts;
    router_one_layer = e * m.num_experts + (m.routed_bias ? m.num_experts : 0);
    c.moe_routed = routed_one_layer * m.num_moe_layers();
    c.moe_shared = shared_one_layer * m.num_moe_layers();
    c.moe_router = router_one_layer * m.num_moe_layers();
  }
  // Pre-attention and pre-MLP RMSNorm scales per layer, plus the final norm.
  c.norms = 2.0 * e * m.num_decoder_layers + e;

  c.total = c.embedding + c.unembedding + c.attention + c.linear_attention + c.dense_mlp +
            c.moe_routed + c.moe_shared + c.moe_router + c.norms;

  double active_routed = 0;
  if (m.is_moe() && m.num_experts > 0) {
    active_routed = c.moe_routed * static_cast<double>(m.num_experts_per_tok) / m.num_experts;
  }
  // The input embedding is a gather; with a tied table the same weights serve as unembedding
  // and do take part in a matmul, so they count once.
  const double active_embedding = m.logits_via_embedding ? c.embedding : c.unembedding;
  c.active_per_token = active_embedding + c.attention + c.linear_attention + c.dense_mlp +
                       active_routed + c.moe_shared + c.moe_router + c.norms;

  const double attn_max = std::max(full_attn, linear_attn);
  const double mlp_max = m.num_moe_layers() > 0
                             ? std::max(m.num_dense_layers() > 0 ? dense_mlp : 0.0,
                                        routed_one_layer + shared_one_layer + router_one_layer)
                             : dense_mlp;
  c.largest_layer = attn_max + mlp_max + 2.0 * e;
  return c;
}

namespace {

// The architecture: MaxText's own model-config keys at the top level of `root`. Throws
// std::runtime_error naming the key on anything it cannot read. `linear_attention_block` is the
// catalog files' podium.linear_attention ("" when not given).
void read_architecture(const YAML::Node& root, const std::string& linear_attention_block,
                       ModelSpec& m) {
  read_string(root, "decoder_block", m.decoder_block);
  read_int(root, "base_emb_dim", m.emb_dim);
  read_int(root, "base_num_query_heads", m.num_query_heads);
  read_int(root, "base_num_kv_heads", m.num_kv_heads);
  read_int(root, "head_dim", m.head_dim);
  read_int(root, "base_mlp_dim", m.mlp_dim);
  read_int(root, "base_num_decoder_layers", m.num_decoder_layers);
  read_int(root, "vocab_size", m.vocab_size);
  if (root["mlp_activations"]) {
    if (!root["mlp_activations"].IsSequence() || root["mlp_activations"].size() == 0 ||
        root["mlp_activations"].size() > 8)
      throw std::runtime_error("key 'mlp_activations' must be a list of 1 to 8 activation names");
    for (const auto& a : root["mlp_activations"]) {
      if (!a.IsScalar()) throw std::runtime_error("key 'mlp_activations' must list names");
      m.mlp_activations.push_back(a.as<std::string>());
    }
  } else {
    m.mlp_activations = {"silu", "linear"};  // MaxText base.yml default
  }
  if (root["logits_via_embedding"]) {
    m.logits_via_embedding = to_bool(root["logits_via_embedding"], "logits_via_embedding");
  }
  read_int(root, "num_experts", m.num_experts);
  read_int(root, "num_experts_per_tok", m.num_experts_per_tok);
  read_int(root, "shared_experts", m.shared_experts);
  read_int(root, "base_moe_mlp_dim", m.moe_mlp_dim);
  read_int(root, "first_num_dense_layers", m.first_num_dense_layers);
  read_string(root, "routed_score_func", m.routed_score_func);
  if (root["routed_bias"]) m.routed_bias = to_bool(root["routed_bias"], "routed_bias");
  read_string(root, "attention_type", m.attention_type);
  if (m.attention_type == "mla") {
    // MaxText base.yml defaults for the MLA keys a model file may leave out.
    m.mla = MlaDims{0, 512, 128, 64, 128};
    read_int(root, "q_lora_rank", m.mla.q_lora_rank);
    read_int(root, "kv_lora_rank", m.mla.kv_lora_rank);
    read_int(root, "qk_nope_head_dim", m.mla.qk_nope_head_dim);
    read_int(root, "qk_rope_head_dim", m.mla.qk_rope_head_dim);
    read_int(root, "v_head_dim", m.mla.v_head_dim);
  } else if (m.attention_type != "global") {
    throw std::runtime_error("attention_type '" + m.attention_type +
                             "' is not modelled (global or mla)");
  }
  if (m.head_dim == 0) m.head_dim = 128;  // MaxText base.yml default
  read_int(root, "inhomogeneous_layer_cycle_interval", m.full_attention_interval);
  // Linear-attention layers: MaxText's Gated Delta Net (Qwen3-Next, decoder_block qwen3_next),
  // or a team's own block described with the same gdn_* keys. A hybrid layout needs a cycle
  // interval above 1 (every interval-th layer keeps full attention).
  bool gdn_keys = false;
  for (const char* key : {"gdn_num_key_heads", "gdn_num_value_heads", "gdn_key_head_dim",
                          "gdn_value_head_dim", "gdn_conv_kernel_dim"})
    gdn_keys = gdn_keys || static_cast<bool>(root[key]);
  std::string linear = linear_attention_block;
  if (linear.empty() && m.full_attention_interval > 1 &&
      (gdn_keys || m.decoder_block == "qwen3_next"))
    linear = "gated_delta_net";
  if (!linear.empty()) {
    if (linear != "gated_delta_net") {
      throw std::runtime_error("podium.linear_attention '" + linear +
                               "' is not modelled (gated_delta_net)");
    }
    // MaxText base.yml defaults for the gdn_* keys.
    LinearAttentionDims g{16, 32, 128, 128, 4};
    read_int(root, "gdn_num_key_heads", g.num_key_heads);
    read_int(root, "gdn_num_value_heads", g.num_value_heads);
    read_int(root, "gdn_key_head_dim", g.key_head_dim);
    read_int(root, "gdn_value_head_dim", g.value_head_dim);
    read_int(root, "gdn_conv_kernel_dim", g.conv_kernel_dim);
    m.linear_attention = g;
  }

  if (m.emb_dim <= 0 || m.num_query_heads <= 0 || m.num_kv_heads <= 0 ||
      m.num_decoder_layers <= 0 || m.vocab_size <= 0 || m.mlp_dim <= 0) {
    throw std::runtime_error(
        "base_emb_dim, base_num_query_heads, base_num_kv_heads, base_mlp_dim, "
        "base_num_decoder_layers and vocab_size must be positive");
  }
  if (m.is_moe() &&
      (m.moe_mlp_dim <= 0 || m.num_experts_per_tok <= 0 || m.num_experts_per_tok > m.num_experts)) {
    throw std::runtime_error(
        "an MoE model needs base_moe_mlp_dim > 0 and 1 <= num_experts_per_tok <= num_experts");
  }
  if (m.full_attention_interval < 1) {
    throw std::runtime_error("inhomogeneous_layer_cycle_interval must be >= 1");
  }
}

// YAML (a parsed MaxText config) as JSON: scalars become numbers (digit separators dropped),
// booleans, null or strings. Aliases are expanded, so the node count is bounded: a document of
// nested aliases ("billion laughs") must not expand without end.
nlohmann::json yaml_to_json(const YAML::Node& node, int depth, size_t& budget) {
  if (depth > 32) throw std::runtime_error("the config nests deeper than 32 levels");
  if (budget == 0) throw std::runtime_error("the config has too many entries");
  --budget;
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(yaml_to_json(item, depth + 1, budget));
      return out;
    }
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) throw std::runtime_error("a key of the config is not a string");
        out[kv.first.Scalar()] = yaml_to_json(kv.second, depth + 1, budget);
      }
      return out;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted in the document: a string
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (text == "null" || text == "Null" || text == "NULL" || text == "~") return nullptr;
  std::string digits = text;
  digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
  if (!digits.empty() && digits.find_first_not_of("+-0123456789") == std::string::npos &&
      digits.size() <= 18) {
    try {
      size_t used = 0;
      const long long v = std::stoll(digits, &used);
      if (used == digits.size()) return v;
    } catch (const std::exception&) {
    }
  }
  if (!digits.empty() && digits.find_first_not_of("+-0123456789.eE") == std::string::npos) {
    try {
      size_t used = 0;
      const double v = std::stod(digits, &used);
      if (used == digits.size() && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
  }
  return text;
}

YAML::Node json_to_yaml(const nlohmann::json& j) {
  YAML::Node node;
  if (j.is_object()) {
    node = YAML::Node(YAML::NodeType::Map);
    for (const auto& [k, v] : j.items()) node[k] = json_to_yaml(v);
  } else if (j.is_array()) {
    node = YAML::Node(YAML::NodeType::Sequence);
    for (const auto& v : j) node.push_back(json_to_yaml(v));
  } else if (j.is_string()) {
    node = YAML::Node(j.get<std::string>());
  } else if (j.is_boolean()) {
    node = YAML::Node(j.get<bool>() ? "true" : "false");
  } else if (j.is_null()) {
    node = YAML::Node(YAML::NodeType::Null);
  } else {
    node = YAML::Node(j.dump());  // numbers in JSON's own text form
  }
  return node;
}

}  // namespace

Parsed<ModelSpec> parse_model_yaml(std::string_view yaml_text) {
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    if (!root.IsMap()) throw std::runtime_error("document is not a mapping");
    const YAML::Node podium = root["podium"];
    if (!podium || !podium.IsMap()) throw std::runtime_error("missing 'podium' block");

    ModelSpec m;
    read_string(podium, "name", m.name);
    if (m.name.empty()) throw std::runtime_error("podium.name is required");
    read_string(podium, "description", m.description);
    read_string(podium, "source", m.source);
    read_string(podium, "workload", m.workload);
    read_string(podium, "published_source", m.published_source);
    if (podium["maxtext_known"]) {
      if (!podium["maxtext_known"].IsScalar() || (podium["maxtext_known"].Scalar() != "true" &&
                                                  podium["maxtext_known"].Scalar() != "false"))
        throw std::runtime_error("podium.maxtext_known must be true or false");
      m.maxtext_known = podium["maxtext_known"].Scalar() == "true";
    }
    if (podium["published_total_params"]) {
      m.published_total_params =
          to_double(podium["published_total_params"], "podium.published_total_params");
    }
    if (podium["published_active_params"]) {
      m.published_active_params =
          to_double(podium["published_active_params"], "podium.published_active_params");
    }
    std::string linear;
    read_string(podium, "linear_attention", linear);
    read_architecture(root, linear, m);
    return Parsed<ModelSpec>::from(std::move(m), {});
  } catch (const std::exception& e) {
    // The YAML reader and the key readers stop at the first problem, by exception.
    return Parsed<ModelSpec>::failure("", e.what());
  }
}

Parsed<ModelConfig> parse_model_config_yaml(std::string_view yaml_text) {
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    if (!root.IsMap()) throw std::runtime_error("the document is not a mapping of MaxText keys");
    size_t budget = kMaxModelConfigEntries;
    ModelConfig out;
    out.config = yaml_to_json(root, 0, budget);
    out.model.maxtext_known = false;
    read_architecture(root, "", out.model);
    return Parsed<ModelConfig>::from(std::move(out), {});
  } catch (const std::exception& e) {
    return Parsed<ModelConfig>::failure("", e.what());
  }
}

Parsed<ModelConfig> parse_model_config_json(const nlohmann::json& config) {
  try {
    if (!config.is_object())
      throw std::runtime_error("the config is not an object of MaxText keys");
    size_t budget = kMaxModelConfigEntries;
    const YAML::Node root = json_to_yaml(config);
    (void)yaml_to_json(root, 0, budget);  // the same bounds as a YAML document
    ModelConfig out;
    out.model.maxtext_known = false;
    read_architecture(root, "", out.model);
    out.config = config;
    return Parsed<ModelConfig>::from(std::move(out), {});
  } catch (const std::exception& e) {
    return Parsed<ModelConfig>::failure("", e.what());
  }
}

const std::vector<ModelSpec>& model_catalog() {
  static const std::vector<ModelSpec> catalog = load_catalog();
  return catalog;
}

const ModelSpec* find_model(std::string_view name) {
  for (const ModelSpec& m : model_catalog()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const ModelSpec& m : model_catalog()) names.push_back(m.name);
  return names;
}

nlohmann::json to_json(const ModelSpec& m) {
  using nlohmann::json;
  json arch = {
      {"decoder_block", m.decoder_block},
      {"base_emb_dim", m.emb_dim},
      {"base_num_query_heads", m.num_query_heads},
      {"base_num_kv_heads", m.num_kv_heads},
      {"head_dim", m.head_dim},
      {"base_mlp_dim", m.mlp_dim},
      {"base_num_decoder_layers", m.num_decoder_layers},
      {"vocab_size", m.vocab_size},
      {"mlp_activations", m.mlp_activations},
      {"logits_via_embedding", m.logits_via_embedding},
      {"attention_type", m.attention_type},
  };
  if (m.is_moe()) {
    arch["num_experts"] = m.num_experts;
    arch["num_experts_per_tok"] = m.num_experts_per_tok;
    arch["shared_experts"] = m.shared_experts;
    arch["base_moe_mlp_dim"] = m.moe_mlp_dim;
    arch["first_num_dense_layers"] = m.first_num_dense_layers;
    if (!m.routed_score_func.empty()) arch["routed_score_func"] = m.routed_score_func;
    arch["routed_bias"] = m.routed_bias;
  }
  if (m.attention_type == "mla") {
    arch["q_lora_rank"] = m.mla.q_lora_rank;
    arch["kv_lora_rank"] = m.mla.kv_lora_rank;
    arch["qk_nope_head_dim"] = m.mla.qk_nope_head_dim;
    arch["qk_rope_head_dim"] = m.mla.qk_rope_head_dim;
    arch["v_head_dim"] = m.mla.v_head_dim;
  }
  if (m.linear_attention) {
    arch["inhomogeneous_layer_cycle_interval"] = m.full_attention_interval;
    arch["linear_attention"] = "gated_delta_net";
    arch["gdn_num_key_heads"] = m.linear_attention->num_key_heads;
    arch["gdn_num_value_heads"] = m.linear_attention->num_value_heads;
    arch["gdn_key_head_dim"] = m.linear_attention->key_head_dim;
    arch["gdn_value_head_dim"] = m.linear_attention->value_head_dim;
    arch["gdn_conv_kernel_dim"] = m.linear_attention->conv_kernel_dim;
  }

  const ParamCounts c = count_parameters(m);
  json layers = {{"dense_mlp", m.num_dense_layers()},
                 {"moe", m.num_moe_layers()},
                 {"full_attention", m.num_full_attention_layers()},
                 {"linear_attention", m.num_linear_attention_layers()}};
  json params = {
      {"total", c.total},
      {"active_per_token", c.active_per_token},
      {"breakdown",
       {{"embedding", c.embedding},
        {"unembedding", c.unembedding},
        {"attention", c.attention},
        {"linear_attention", c.linear_attention},
        {"dense_mlp", c.dense_mlp},
        {"moe_routed_experts", c.moe_routed},
        {"moe_shared_experts", c.moe_shared},
        {"moe_router", c.moe_router},
        {"norms", c.norms}}},
  };
  json published = {
      {"total", m.published_total_params ? json(*m.published_total_params) : json(nullptr)},
      {"active_per_token",
       m.published_active_params ? json(*m.published_active_params) : json(nullptr)},
      {"source", m.published_source},
  };
  return {{"name", m.name},
          {"description", m.description},
          {"source", m.source},
          {"workload", m.workload},
          {"maxtext_known", m.maxtext_known},
          {"moe", m.is_moe()},
          {"architecture", arch},
          {"layers", layers},
          {"parameters", params},
          {"published", published}};
}

namespace detail {
const EmbeddedFile* find_embedded_file(std::string_view path) {
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.path == path) return &f;
  }
  return nullptr;
}
}  // namespace detail

}  // namespace podium::core
