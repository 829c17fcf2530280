// deploy/kubernetes/ against the vendored Kubernetes v1.34 schemas (tests/deploy/data/kubernetes,
// strict: unknown fields are errors), plus what operations.md promises of them: two replicas
// over an external PostgreSQL, probes on /healthz and /readyz, a PodDisruptionBudget, requests,
// the config from a ConfigMap and TLS from a Secret.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/deploy/kubernetes_objects.h"

namespace podium::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<json> all_objects() {
  std::vector<json> out;
  for (const auto& entry :
       fs::directory_iterator(fs::path(PODIUM_SOURCE_DIR) / "deploy/kubernetes"))
    if (entry.path().extension() == ".yaml")
      for (auto& doc : yaml_documents(
               read_source_file("deploy/kubernetes/" + entry.path().filename().string())))
        out.push_back(std::move(doc));
  return out;
}

const json& find(const std::vector<json>& objects, const std::string& kind,
                 const std::string& name) {
  for (const auto& o : objects)
    if (o["kind"] == kind && o["metadata"]["name"] == name) return o;
  static const json none;
  ADD_FAILURE() << "no " << kind << " " << name;
  return none;
}

TEST(DeployKubernetes, EveryObjectPassesItsSchema) {
  const auto objects = all_objects();
  ASSERT_GE(objects.size(), 7u);
  for (const auto& o : objects) {
    SCOPED_TRACE(o.value("kind", "?") + " " + o["metadata"].value("name", "?"));
    const auto errors = validate_kubernetes_object(o);
    EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
    EXPECT_TRUE(o["metadata"].contains("namespace"));  // nothing lands in "default" by accident
  }
}

TEST(DeployKubernetes, TheServerAsTwoReplicasOverAnExternalDatabase) {
  const auto objects = all_objects();
  const json& deployment = find(objects, "Deployment", "podium-server");
  EXPECT_EQ(deployment["spec"]["replicas"], 2);
  const json& pod = deployment["spec"]["template"]["spec"];
  const json& c = pod["containers"][0];
  auto env_secret = [&](const std::string& name) -> json {
    for (const auto& e : c["env"])
      if (e["name"] == name) return e["valueFrom"]["secretKeyRef"];
    return nullptr;
  };
  EXPECT_EQ(env_secret("PODIUM_DATABASE_URL"), json({{"name", "podium-database"}, {"key", "url"}}));
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"], "/healthz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"], "/readyz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["scheme"], "HTTPS");
  EXPECT_TRUE(c["resources"]["requests"].contains("cpu"));
  EXPECT_TRUE(c["resources"]["requests"].contains("memory"));
  std::map<std::string, json> volumes;
  for (const auto& v : pod["volumes"]) volumes[v["name"]] = v;
  EXPECT_EQ(volumes["config"]["configMap"]["name"], "podium-config");
  EXPECT_EQ(volumes["tls"]["secret"]["secretName"], "podium-tls");

  // The configuration the ConfigMap holds is the server's: TLS files where the Secret is
  // mounted, a public URL the Service answers, no database URL or token in it.
  const json& config = find(objects, "ConfigMap", "podium-config");
  const json server_config =
      yaml_to_json(YAML::Load(config["data"]["podium.yaml"].get<std::string>()));
  EXPECT_EQ(server_config["tls"]["cert_file"], "/etc/podium/tls/tls.crt");
  EXPECT_EQ(server_config["tls"]["key_file"], "/etc/podium/tls/tls.key");
  EXPECT_FALSE(server_config.contains("database_url"));
  EXPECT_FALSE(server_config.contains("admin_token"));
  const json& service = find(objects, "Service", "podium");
  EXPECT_EQ(
      server_config["public_url"],
      "https://podium." + service["metadata"]["namespace"].get<std::string>() +
          ".svc.cluster.local:" + std::to_string(service["spec"]["ports"][0]["port"].get<int>()));
  EXPECT_EQ(service["spec"]["selector"], deployment["spec"]["selector"]["matchLabels"]);
  EXPECT_FALSE(server_config["executors"]["worker_image"].get<std::string>().empty());

  const json& pdb = find(objects, "PodDisruptionBudget", "podium-server");
  EXPECT_EQ(pdb["spec"]["selector"], deployment["spec"]["selector"]);
  EXPECT_EQ(pdb["spec"]["minAvailable"], 1);
}

// The check can fail: a misspelt field, a wrong type and an unknown kind are refused.
TEST(DeployKubernetes, TheSchemaCheckCanFail) {
  const auto objects = all_objects();
  json deployment = find(objects, "Deployment", "podium-server");
  ASSERT_TRUE(validate_kubernetes_object(deployment).empty());
  json typo = deployment;
  typo["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = json::object();
  EXPECT_FALSE(validate_kubernetes_object(typo).empty());
  json wrong = deployment;
  wrong["spec"]["replicas"] = "two";
  EXPECT_FALSE(validate_kubernetes_object(wrong).empty());
  json port = deployment;
  port["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"] = 1.5;
  EXPECT_FALSE(validate_kubernetes_object(port).empty());
  json role = find(objects, "Role", "podium-executor");
  role["rules"][0]["verb"] = json::array({"get"});
  EXPECT_FALSE(validate_kubernetes_object(role).empty());
  EXPECT_FALSE(validate_kubernetes_object(json{{"apiVersion", "v1"}, {"kind", "Pod"}}).empty());
}

}  // namespace
}  // namespace podium::testing
