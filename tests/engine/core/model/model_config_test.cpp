// A team's own MaxText model config (POST /api/v1/models): parsed from YAML or JSON, counted the
// way MaxText counts its parameters.
#include "engine/core/model/model_catalog.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace podium::core {
namespace {

std::string read_source_file(const std::string& relative) {
  std::ifstream in(std::string(PODIUM_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The catalog file's architecture keys without its `podium` block: what a user would post.
std::string maxtext_keys_of(const std::string& catalog_file) {
  std::istringstream in(read_source_file(catalog_file));
  std::string line, out;
  bool in_podium = false;
  while (std::getline(in, line)) {
    if (line.rfind("podium:", 0) == 0) {
      in_podium = true;
      continue;
    }
    if (in_podium && (line.empty() || line[0] == ' ' || line[0] == '#')) continue;
    in_podium = false;
    out += line + "\n";
  }
  return out;
}

double relative_error(double actual, double expected) {
  return std::fabs(actual - expected) / expected;
}

// MaxText's own "number parameters" (common/metric_logger.py logs
// calculate_num_params_from_pytree(state.params) / 1e9 with 3 decimals). MaxText publishes no
// table of these figures, so they were computed with MaxText 0.2.0 (PyPI, Apache-2.0) itself:
// its pyconfig with model_name=<name> and its Transformer's abstract init (jax.eval_shape of
// model.init, as maxtext_utils.get_abstract_param does), counted with
// max_utils.calculate_num_params_from_pytree on one CPU device.
struct MaxTextFigure {
  const char* model;
  double parameters;
};
constexpr MaxTextFigure kMaxTextNumberParameters[] = {
    {"llama2-7b", 6'738'415'616.0},
    {"llama3-8b", 8'030'261'248.0},
    {"mixtral-8x7b", 46'702'792'704.0},
    {"deepseek2-16b", 15'706'484'224.0},
};

TEST(ModelConfig, ParameterCountsAreWithinOnePercentOfMaxTextsOwn) {
  for (const MaxTextFigure& f : kMaxTextNumberParameters) {
    // The user's path: MaxText's keys posted as a model config.
    const Parsed<ModelConfig> parsed = parse_model_config_yaml(
        maxtext_keys_of(std::string("engine/core/models/") + f.model + ".yaml"));
    ASSERT_TRUE(parsed.ok()) << f.model << ": " << parsed.summary();
    const double counted = count_parameters(parsed.value->model).total;
    EXPECT_LT(relative_error(counted, f.parameters), 0.01)
        << f.model << ": Podium " << counted << ", MaxText " << f.parameters;
    // And the built-in catalog entry agrees with it.
    const ModelSpec* builtin = find_model(f.model);
    ASSERT_NE(builtin, nullptr);
    EXPECT_EQ(count_parameters(*builtin).total, counted) << f.model;
  }
}

TEST(ModelConfig, TheExampleAlmodelConfigIsTheCatalogsAlmodel) {
  const Parsed<ModelConfig> parsed =
      parse_model_config_yaml(read_source_file("examples/configs/almodel-8b.yml"));
  ASSERT_TRUE(parsed.ok()) << parsed.summary();
  const ModelSpec* builtin = find_model("almodel-8b");
  ASSERT_NE(builtin, nullptr);
  EXPECT_EQ(to_json(parsed.value->model)["architecture"], to_json(*builtin)["architecture"]);
  EXPECT_EQ(count_parameters(parsed.value->model).total, count_parameters(*builtin).total);
  EXPECT_EQ(parsed.value->model.num_linear_attention_layers(), 21);
  EXPECT_FALSE(parsed.value->model.maxtext_known);
  // Keys that are not architecture are kept as given; YAML digit separators read as numbers.
  EXPECT_EQ(parsed.value->config["rope_max_timescale"], 50000);
  EXPECT_EQ(parsed.value->config["decoder_block"], "almodel");
  EXPECT_EQ(parsed.value->config["normalization_layer_epsilon"], 1.0e-5);
}

TEST(ModelConfig, JsonAndYamlFormsAgree) {
  const Parsed<ModelConfig> from_yaml =
      parse_model_config_yaml(read_source_file("examples/configs/almodel-8b.yml"));
  ASSERT_TRUE(from_yaml.ok());
  const Parsed<ModelConfig> from_json = parse_model_config_json(from_yaml.value->config);
  ASSERT_TRUE(from_json.ok()) << from_json.summary();
  EXPECT_EQ(to_json(from_json.value->model), to_json(from_yaml.value->model));
}

TEST(ModelConfig, DenseDefaultsFollowMaxTextsBaseConfig) {
  const Parsed<ModelConfig> p = parse_model_config_json({{"base_emb_dim", 512},
                                                         {"base_num_query_heads", 8},
                                                         {"base_num_kv_heads", 8},
                                                         {"base_mlp_dim", 2048},
                                                         {"base_num_decoder_layers", 4},
                                                         {"vocab_size", 32000}});
  ASSERT_TRUE(p.ok()) << p.summary();
  EXPECT_EQ(p.value->model.head_dim, 128);
  EXPECT_EQ(p.value->model.mlp_activations.size(), 2u);
  EXPECT_FALSE(p.value->model.is_moe());
  EXPECT_FALSE(p.value->model.linear_attention.has_value());
}

TEST(ModelConfig, RefusesWhatItCannotCount) {
  auto error_of = [](const std::string& yaml) { return parse_model_config_yaml(yaml).summary(); };
  EXPECT_NE(error_of("- a list"), "");
  EXPECT_NE(error_of("base_emb_dim: [1"), "");                    // malformed YAML
  EXPECT_NE(error_of("base_emb_dim: 512\nvocab_size: 100"), "");  // missing sizes
  const std::string dense =
      "base_emb_dim: 512\nbase_num_query_heads: 8\nbase_num_kv_heads: 8\nbase_mlp_dim: 2048\n"
      "base_num_decoder_layers: 4\nvocab_size: 32000\n";
  EXPECT_EQ(error_of(dense), "");
  EXPECT_NE(error_of(dense + "shared_experts: -1\n").find("must not be negative"),
            std::string::npos);
  EXPECT_NE(error_of(dense + "head_dim: {a: 1}\n"), "");
  EXPECT_NE(error_of(dense + "head_dim: 1e12\n").find("not an integer"), std::string::npos);
  EXPECT_NE(error_of(dense + "num_experts: 8\nnum_experts_per_tok: 9\nbase_moe_mlp_dim: 64\n"), "");
  EXPECT_NE(error_of(dense + "attention_type: sliding\n").find("not modelled"), std::string::npos);
  EXPECT_NE(error_of(dense + "mlp_activations: silu\n"), "");
  // Nested aliases would expand far beyond the document's size: refused, not expanded.
  std::string laughs = dense + "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 8; ++i)
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" +
              std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
              std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  EXPECT_NE(error_of(laughs).find("too many entries"), std::string::npos);
  EXPECT_NE(parse_model_config_json(nlohmann::json::array()).summary(), "");
  // Nesting deeper than anything a config has: refused by yaml-cpp's depth guard or ours.
  EXPECT_NE(error_of(dense + "deep: " + std::string(100000, '[')), "");
  EXPECT_NE(error_of(dense + "deep: " + std::string(40, '[') + std::string(40, ']')), "");
}

}  // namespace
}  // namespace podium::core
