// A MaxText run is checked against the MaxText its cluster's hosts run (issue 27, point 2): the
// agents report a version at registration, a cluster or run may declare one, and the plan checks
// that release's config keys and mesh_axes (vendored data, engine/core/data/). An unknown version
// or a fork makes an unknown key a warning with the nearest known key; a fork may bring its own
// key list.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using ::testing::Contains;

class MaxTextVersions : public PodiumTest {
 protected:
  // A v5p-16 cluster (2 hosts) whose two agents report `maxtext` (none when empty).
  std::string cluster_reporting(const std::string& maxtext, const json& extra = json::object()) {
    const std::string name = unique_name("mt");
    podium().create_cluster(name, "v5p-16", extra);
    const std::string token = podium().worker_token(name);
    for (int host = 0; host < 2; ++host) {
      json body = {{"cluster", name},
                   {"slice", 0},
                   {"host", host},
                   {"address", "127.0.0.1"},
                   {"instance", "i" + std::to_string(host)}};
      if (!maxtext.empty())
        body["software"] = {{"python", "3.12.3"}, {"jax", "0.8.1"}, {"maxtext", maxtext}};
      require_status(podium().as(token).post("/api/v1/agent/register", body), 200);
    }
    return name;
  }

  static json spec(const std::string& cluster, const json& extra) {
    json s = {{"name", unique_name("r")}, {"cluster", cluster}, {"model", "llama2-7b"},
              {"workload", "maxtext"},    {"steps", 10},        {"per_device_batch_size", 1},
              {"max_target_length", 1024}};
    s.update(extra);
    return s;
  }

  json plan(const std::string& cluster, const json& extra) {
    return require_status(podium().admin().post("/api/v1/plan", spec(cluster, extra)), 200).json;
  }

  static std::vector<std::string> codes(const json& issues) {
    std::vector<std::string> out;
    for (const json& i : issues) out.push_back(i["code"]);
    return out;
  }

  // A key and a mesh axis only MaxText 0.1.0 (2025-09) has, and ones only 0.2.4 (2026-08) has.
  const json keys_of_2025 = {{"config", {{"cosine_learning_rate_final_fraction", 0.1}}},
                             {"parallelism", {{"ici_fsdp", -1}, {"ici_sequence", 2}}}};
  const json keys_of_2026 = {{"config", {{"abort_on_nan_loss", true}}},
                             {"parallelism", {{"ici_fsdp", -1}, {"ici_context_usp_ulysses", 2}}}};
};

TEST_F(MaxTextVersions, EachClusterIsCheckedAgainstTheReleaseItsAgentsReport) {
  const std::string old_cluster = cluster_reporting("0.1.0");
  const std::string new_cluster = cluster_reporting("0.2.4");

  json p = plan(old_cluster, keys_of_2025);
  EXPECT_TRUE(p["ok"]) << p["errors"].dump();
  EXPECT_EQ(p["maxtext"]["source"], "agents");
  EXPECT_EQ(p["maxtext"]["release"]["tag"], "maxtext-v0.1.0");
  EXPECT_EQ(p["maxtext"]["exact"], true);
  EXPECT_THAT(p["mesh"]["axes"], Contains("sequence"));

  p = plan(new_cluster, keys_of_2025);
  EXPECT_FALSE(p["ok"]);
  EXPECT_EQ(p["maxtext"]["release"]["tag"], "maxtext-v0.2.4");
  EXPECT_THAT(codes(p["errors"]), Contains("unknown_config_key"));
  EXPECT_THAT(codes(p["errors"]), Contains("unknown_mesh_axis"));

  p = plan(new_cluster, keys_of_2026);
  EXPECT_TRUE(p["ok"]) << p["errors"].dump();
  EXPECT_THAT(p["mesh"]["axes"], Contains("context_usp_ulysses"));

  p = plan(old_cluster, keys_of_2026);
  EXPECT_FALSE(p["ok"]);
  EXPECT_THAT(codes(p["errors"]), Contains("unknown_config_key"));
  EXPECT_THAT(codes(p["errors"]), Contains("unknown_mesh_axis"));

  // Submitting follows the plan: refused on the release that lacks the keys, accepted on its own.
  EXPECT_EQ(podium().admin().post("/api/v1/runs", spec(new_cluster, keys_of_2025)).status, 422);
  auto run =
      require_status(podium().admin().post("/api/v1/runs", spec(old_cluster, keys_of_2025)), 201);
  EXPECT_EQ(run.json["plan"]["maxtext"]["release"]["version"], "0.1.0");
}

TEST_F(MaxTextVersions, ADeclarationComesBeforeWhatTheAgentsReport) {
  // The cluster declares 0.2.0 (a 2026 release with the sequence axis still there) while its
  // agents report 0.1.0; a run may declare its own.
  const std::string cluster = cluster_reporting("0.1.0", {{"maxtext_version", "0.2.0"}});
  json p = plan(cluster, keys_of_2025);
  EXPECT_EQ(p["maxtext"]["source"], "cluster");
  EXPECT_EQ(p["maxtext"]["release"]["date"], "2026-03-05");
  EXPECT_EQ(p["maxtext"]["reported"], json::array({"0.1.0"}));
  // 0.2.0 no longer has cosine_learning_rate_final_fraction.
  EXPECT_THAT(codes(p["errors"]), Contains("unknown_config_key"));
  EXPECT_THAT(codes(p["errors"]), ::testing::Not(Contains("unknown_mesh_axis")));
  json with_run_version = keys_of_2025;
  with_run_version["maxtext_version"] = "maxtext-v0.1.0";
  p = plan(cluster, with_run_version);
  EXPECT_EQ(p["maxtext"]["source"], "run");
  EXPECT_TRUE(p["ok"]) << p["errors"].dump();
}

TEST_F(MaxTextVersions, OnAForkAnUnknownKeyIsAWarningWithTheNearestKey) {
  const std::string cluster = cluster_reporting("", {{"maxtext_version", "fork"}});
  const json fork_keys = {{"config", {{"remat_polcy", "full"}, {"almodel_linear_attention", 3}}}};
  json p = plan(cluster, fork_keys);
  EXPECT_TRUE(p["ok"]) << p["errors"].dump();
  EXPECT_EQ(p["maxtext"]["exact"], false);
  EXPECT_THAT(codes(p["warnings"]), Contains("maxtext_version"));
  bool nearest = false;
  for (const json& w : p["warnings"])
    if (w["code"] == "unknown_config_key" &&
        w["message"].get<std::string>().find("remat_polcy") != std::string::npos)
      nearest = w["hint"].get<std::string>().find("remat_policy") != std::string::npos;
  EXPECT_TRUE(nearest) << p["warnings"].dump();
  // Submitted without force.
  auto run = require_status(podium().admin().post("/api/v1/runs", spec(cluster, fork_keys)), 201);
  EXPECT_FALSE(run.json["forced"]);

  // An unknown release reported by the agents is treated the same way.
  const std::string future = cluster_reporting("0.9.0");
  p = plan(future, fork_keys);
  EXPECT_TRUE(p["ok"]) << p["errors"].dump();
  EXPECT_EQ(p["maxtext"]["version"], "0.9.0");

  // A fork that brings its own key list and mesh_axes is checked exactly against them.
  json own = {{"maxtext_fork",
               {{"keys", {"remat_policy", "almodel_linear_attention"}},
                {"mesh_axes", {"data", "fsdp", "tensor", "linear"}}}},
              {"config", {{"almodel_linear_attention", 3}, {"remat_policy", "full"}}},
              {"parallelism", {{"ici_fsdp", -1}, {"ici_linear", 2}}}};
  p = plan(cluster, own);
  EXPECT_TRUE(p["ok"]) << p["errors"].dump();
  EXPECT_EQ(p["maxtext"]["keys"], "run");
  EXPECT_EQ(p["mesh"]["axes"], json::array({"data", "fsdp", "tensor", "linear"}));
  own["config"]["remat_polcy"] = "full";
  p = plan(cluster, own);
  EXPECT_THAT(codes(p["errors"]), Contains("unknown_config_key"));
  // The spec keeps the fork's lists.
  own.erase("config");
  run = require_status(podium().admin().post("/api/v1/runs", spec(cluster, own)), 201);
  EXPECT_EQ(run.json["spec"]["maxtext_fork"]["mesh_axes"][3], "linear");
  // A malformed one is a 400 naming the field.
  auto bad =
      podium().admin().post("/api/v1/plan", spec(cluster, {{"maxtext_fork", {{"keys", {"a b"}}}}}));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("maxtext_fork.keys[0]"), std::string::npos) << bad.body;
}

}  // namespace
}  // namespace podium::it
