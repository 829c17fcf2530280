// Models as data (issue 27): the catalog in PostgreSQL, a team's own MaxText model config added
// through the API and planned from the stored architecture, and skip_checks.
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;

std::string example_text(const std::string& relative) {
  std::ifstream in(repo_root() / relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The run spec files are YAML; the API takes JSON (what `podium runs submit -f` sends).
json yaml_json(const YAML::Node& n) {
  if (n.IsMap()) {
    json o = json::object();
    for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_json(kv.second);
    return o;
  }
  if (n.IsSequence()) {
    json a = json::array();
    for (const auto& v : n) a.push_back(yaml_json(v));
    return a;
  }
  if (n.IsNull()) return nullptr;
  const std::string s = n.Scalar();
  if (n.Tag() != "!") {
    if (s == "true" || s == "false") return s == "true";
    try {
      size_t used = 0;
      const long long v = std::stoll(s, &used);
      if (used == s.size()) return v;
      const double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (const std::exception&) {
    }
  }
  return s;
}

json tiny_config() {
  return {{"base_emb_dim", 64},  {"base_num_query_heads", 2},    {"base_num_kv_heads", 2},
          {"base_mlp_dim", 128}, {"base_num_decoder_layers", 2}, {"vocab_size", 256},
          {"head_dim", 32}};
}

class Models : public PodiumTest {};

TEST_F(Models, TheSeedsAlmodelAddedWithItsOwnConfigPlansAndSubmitsWithoutSkippingAnyCheck) {
  auto member = podium().create_user("member");
  auto added = member.api.post("/api/v1/models",
                               {{"name", "almodel-8b-team"},
                                {"description", "the team's ALModel"},
                                {"yaml", example_text("examples/configs/almodel-8b.yml")}});
  ASSERT_EQ(added.status, 201) << added;
  EXPECT_FALSE(added.json["builtin"].get<bool>());
  EXPECT_FALSE(added.json["maxtext_known"].get<bool>());
  EXPECT_EQ(added.json["config"]["decoder_block"], "almodel");
  const auto builtin = member.api.get("/api/v1/models/almodel-8b");
  ASSERT_EQ(builtin.status, 200) << builtin;
  EXPECT_TRUE(builtin.json["builtin"].get<bool>());
  // The example config is the catalog's ALModel (reconciled): the same count.
  const double params = added.json["parameters"]["total"].get<double>();
  EXPECT_EQ(params, builtin.json["parameters"]["total"].get<double>());
  EXPECT_NEAR(params / 1e9, 18.92, 0.01);
  EXPECT_EQ(added.json["active_parameters"], added.json["parameters"]["active_per_token"]);

  // The example run of it, on the cluster its header names, naming the added model.
  podium().create_cluster("ironwood-64", "tpu7x-64");
  json spec = yaml_json(YAML::Load(example_text("examples/almodel-tpu7x-64.yaml")));
  spec["model"] = "almodel-8b-team";
  ASSERT_FALSE(spec.contains("force"));
  ASSERT_FALSE(spec.contains("skip_checks"));
  auto run = member.api.post("/api/v1/runs", spec);
  ASSERT_EQ(run.status, 201) << run;
  const json& plan = run.json["plan"];
  EXPECT_TRUE(plan["ok"].get<bool>()) << plan;
  EXPECT_EQ(plan["skipped_checks"], json::array());
  EXPECT_EQ(run.json["skipped_checks"], json::array());
  EXPECT_FALSE(run.json["forced"].get<bool>());
  EXPECT_EQ(plan["model"]["name"], "almodel-8b-team");
  EXPECT_EQ(plan["model"]["total_params"].get<double>(), params);
  EXPECT_TRUE(plan["model"]["moe"].get<bool>());
  // MoE FLOPs: 27 MoE layers of 6 routed + 1 shared expert of 1280 and a 64-way router, x3 for
  // forward and backward, per device at batch 1 x 4096 tokens.
  const double bs = 4096, e = 2560, expert = 3 * 2 * bs * e * 1280;
  const double moe = 3 * 27 * (2 * bs * e * 64 + 7 * expert) / 1e12;
  EXPECT_NEAR(plan["estimate"]["moe_ffn_tflops"].get<double>(), moe, moe * 1e-9) << plan;
  EXPECT_GT(plan["estimate"]["ffn_tflops"].get<double>(), moe);

  // While the run is live, its model's architecture cannot change or go; its description can.
  auto patched = member.api.patch("/api/v1/models/almodel-8b-team", {{"config", tiny_config()}});
  EXPECT_EQ(patched.status, 409) << patched;
  EXPECT_EQ(member.api.del("/api/v1/models/almodel-8b-team").status, 409);
  auto described = member.api.patch("/api/v1/models/almodel-8b-team", {{"description", "v2"}});
  ASSERT_EQ(described.status, 200) << described;
  EXPECT_EQ(described.json["description"], "v2");
  require_status(member.api.post("/api/v1/runs/" + run.json["id"].get<std::string>() + "/cancel"),
                 200);
}

TEST_F(Models, TheCatalogIsSeededAndBuiltInsAreReadOnly) {
  auto member = podium().create_user("member");
  auto list = member.api.get("/api/v1/models?limit=500");
  ASSERT_EQ(list.status, 200) << list;
  std::vector<std::string> names;
  for (const auto& m : list.json["items"]) {
    names.push_back(m["name"]);
    EXPECT_TRUE(m["builtin"].get<bool>()) << m["name"];
  }
  EXPECT_THAT(names, Contains("llama2-7b"));
  EXPECT_THAT(names, Contains("almodel-8b"));
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM models WHERE builtin"),
            std::to_string(names.size()));

  auto admin = podium().admin();
  EXPECT_EQ(admin.del("/api/v1/models/llama2-7b").status, 403);
  EXPECT_EQ(admin.patch("/api/v1/models/llama2-7b", {{"description", "x"}}).status, 403);
  auto taken =
      member.api.post("/api/v1/models", {{"name", "llama2-7b"}, {"config", tiny_config()}});
  EXPECT_EQ(taken.status, 409) << taken;

  // A restart re-seeds without duplicating and leaves users' models alone.
  require_status(member.api.post("/api/v1/models", {{"name", "mine"}, {"config", tiny_config()}}),
                 201);
  podium().restart();
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM models WHERE builtin"),
            std::to_string(names.size()));
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM models WHERE name = 'mine'"), "1");
}

TEST_F(Models, AddChangeDeleteAreOwnedAndAudited) {
  auto member = podium().create_user("member");
  auto other = podium().create_user("member");
  auto json_form =
      member.api.post("/api/v1/models", {{"name", "tiny-json"}, {"config", tiny_config()}});
  ASSERT_EQ(json_form.status, 201) << json_form;
  EXPECT_EQ(json_form.json["yaml"], nullptr);
  EXPECT_EQ(json_form.json["config"], tiny_config());
  EXPECT_EQ(json_form.json["created_by"], member.id);
  // 64x256 embedding + unembedding, 2 layers of q,k,v,o (64x64 each) and a gated MLP
  // (3 x 64x128), 2 norms per layer and the final norm.
  EXPECT_EQ(json_form.json["parameters"]["total"],
            2 * 64 * 256 + 2 * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64) + 64);

  EXPECT_EQ(other.api.patch("/api/v1/models/tiny-json", {{"description", "x"}}).status, 403);
  EXPECT_EQ(other.api.del("/api/v1/models/tiny-json").status, 403);
  json bigger = tiny_config();
  bigger["base_num_decoder_layers"] = 4;
  auto changed = member.api.patch("/api/v1/models/tiny-json", {{"config", bigger}});
  ASSERT_EQ(changed.status, 200) << changed;
  EXPECT_EQ(changed.json["architecture"]["base_num_decoder_layers"], 4);
  EXPECT_EQ(member.api.del("/api/v1/models/tiny-json").status, 204);
  EXPECT_EQ(member.api.get("/api/v1/models/tiny-json").status, 404);
  EXPECT_EQ(podium().db().scalar("SELECT string_agg(action, ',' ORDER BY id) FROM audit_log "
                                 "WHERE resource_type = 'model'"),
            "create,update,delete");
}

TEST_F(Models, ConfigsThatCannotBeCountedAreRefusedByField) {
  auto member = podium().create_user("member");
  auto no_sizes = member.api.post(
      "/api/v1/models", {{"name", "bad"}, {"yaml", "base_emb_dim: 512\nvocab_size: 9\n"}});
  ASSERT_EQ(no_sizes.status, 422) << no_sizes;
  EXPECT_EQ(no_sizes.json["errors"][0]["field"], "yaml");
  auto broken = member.api.post("/api/v1/models", {{"name", "bad"}, {"yaml", "a: [1"}});
  EXPECT_EQ(broken.status, 422) << broken;
  json negative = tiny_config();
  negative["shared_experts"] = -1;
  auto neg = member.api.post("/api/v1/models", {{"name", "bad"}, {"config", negative}});
  ASSERT_EQ(neg.status, 422) << neg;
  EXPECT_THAT(neg.json["detail"].get<std::string>(), HasSubstr("shared_experts"));
  EXPECT_EQ(member.api.post("/api/v1/models", {{"name", "bad"}}).status, 400);
  EXPECT_EQ(
      member.api
          .post("/api/v1/models", {{"name", "bad"}, {"config", tiny_config()}, {"yaml", "a: 1"}})
          .status,
      400);
  EXPECT_EQ(member.api.post("/api/v1/models", {{"name", "../x"}, {"config", tiny_config()}}).status,
            400);
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM models WHERE NOT builtin"), "0");
}

TEST_F(Models, SkipChecksWaivesOneCheckAndIsShownAndAudited) {
  auto member = podium().create_user("member");
  podium().create_cluster("c", "cpu-1");
  json spec = Podium::run_spec("c", "skipping");
  spec["workload"] = "reference";
  spec.erase("command");
  spec["model"] = "reference-tiny";
  spec["steps"] = 10;
  spec["per_device_batch_size"] = 1;
  spec["max_target_length"] = 64;
  spec["config"] = {{"weight_decay_typo", 0.1}};  // an unknown key: config_keys
  auto plan = member.api.post("/api/v1/plan", spec);
  ASSERT_EQ(plan.status, 200) << plan;
  ASSERT_FALSE(plan.json["errors"].empty()) << plan;
  for (const auto& e : plan.json["errors"]) EXPECT_EQ(e["check"], "config_keys") << e;

  // Skipping another check does not let it through.
  spec["skip_checks"] = {"hbm"};
  auto refused = member.api.post("/api/v1/runs", spec);
  ASSERT_EQ(refused.status, 422) << refused;
  EXPECT_EQ(refused.json["plan"]["skipped_checks"], json::array({"hbm"}));

  spec["skip_checks"] = {"config_keys"};
  auto run = member.api.post("/api/v1/runs", spec);
  ASSERT_EQ(run.status, 201) << run;
  EXPECT_EQ(run.json["skipped_checks"], json::array({"config_keys"}));
  EXPECT_TRUE(run.json["forced"].get<bool>());
  EXPECT_TRUE(run.json["plan"]["errors"][0]["skipped"].get<bool>());
  const std::string id = run.json["id"];
  EXPECT_EQ(member.api.get("/api/v1/runs/" + id).json["skipped_checks"],
            json::array({"config_keys"}));
  EXPECT_EQ(podium().db().scalar("SELECT detail->>'check' FROM audit_log WHERE action = "
                                 "'skip_check' AND resource_id = $1",
                                 {id}),
            "config_keys");

  // force still means every check.
  spec.erase("skip_checks");
  spec["force"] = true;
  spec["name"] = "forcing";
  auto forced = member.api.post("/api/v1/runs", spec);
  ASSERT_EQ(forced.status, 201) << forced;
  EXPECT_EQ(forced.json["skipped_checks"],
            json::array({"model", "config_keys", "mesh", "hbm", "data"}));
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM audit_log WHERE action = 'skip_check' AND "
                                 "resource_id = $1",
                                 {forced.json["id"].get<std::string>()}),
            "5");

  json unknown_check = spec;
  unknown_check["skip_checks"] = {"all"};
  auto bad = member.api.post("/api/v1/plan", unknown_check);
  EXPECT_EQ(bad.status, 400) << bad;
}

}  // namespace
}  // namespace podium::it
