#include "engine/core/executors/pod_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "engine/core/executors/executor.h"

namespace podium::core {
namespace {

using nlohmann::json;

json example_executor() {
  std::ifstream in(std::string(PODIUM_SOURCE_DIR) +
                   "/examples/executors/gke-tpu7x-gcsfuse-dranet.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

std::vector<std::string> fields_at_fault(const json& executor) {
  std::vector<std::string> out;
  for (const auto& e : parse_executor(executor).errors) out.push_back(e.field);
  return out;
}

// The documented example (docs/executors.md) is accepted as it stands and round-trips.
TEST(PodTemplate, TheDocumentedExampleRoundTrips) {
  const json in = example_executor();
  auto p = parse_executor(in);
  ASSERT_TRUE(p.value) << p.errors.front().field << ": " << p.errors.front().message;
  const auto& pod = p.value->kubernetes.pod;
  EXPECT_EQ(pod.annotations.at("gke-gcsfuse/volumes"), "true");
  EXPECT_EQ(pod.node_selector.at("cloud.google.com/gke-spot"), "true");
  ASSERT_EQ(pod.volumes.size(), 2u);
  EXPECT_EQ(pod.volumes[0]["csi"]["driver"], "gcsfuse.csi.storage.gke.io");
  EXPECT_EQ(pod.volumes[1]["persistentVolumeClaim"]["claimName"], "maxtext-checkpoints");
  EXPECT_EQ(pod.resource_claims[0]["resourceClaimTemplateName"], "tpu-dranet-nics");
  const json out = to_json(*p.value);
  for (const auto& key : pod_template_keys()) EXPECT_EQ(out[key], in[key]) << key;
  EXPECT_EQ(parse_executor(out).value->kubernetes.pod, pod);
}

// A cluster without extensions keeps the executor JSON it had before they existed.
TEST(PodTemplate, NoExtensionsAddsNoKeys) {
  const json in = {{"kind", "kubernetes"}, {"namespace", "ml"}};
  const json out = to_json(*parse_executor(in).value);
  for (const auto& key : pod_template_keys()) EXPECT_FALSE(out.contains(key)) << key;
}

TEST(PodTemplate, WrongTypesAndUnknownKeysNameTheField) {
  json e = example_executor();
  e["volumes"][0]["csi"]["readOnly"] = "yes";
  e["volumes"][0]["csi"]["bucket"] = "b";
  e["volumes"][1]["persistentVolumeClaim"]["claimName"] = 7;
  e["volume_mounts"][0]["mountPath"] = "data";
  e["resource_claims"][0]["deviceClassName"] = "x";
  e["tolerations"][0]["operator"] = "Maybe";
  e["annotations"]["gke-gcsfuse/volumes"] = true;
  e["node_selector"]["bad key!"] = "x";
  e["sidecars"] = json::array();
  const auto fields = fields_at_fault(e);
  for (const std::string f :
       {"executor.volumes[0].csi.readOnly", "executor.volumes[0].csi.bucket",
        "executor.volumes[1].persistentVolumeClaim.claimName",
        "executor.volume_mounts[0].mountPath", "executor.resource_claims[0].deviceClassName",
        "executor.tolerations[0].operator", "executor.annotations.gke-gcsfuse/volumes",
        "executor.node_selector.bad key!", "executor.sidecars"})
    EXPECT_NE(std::find(fields.begin(), fields.end(), f), fields.end())
        << f << " not in " << ::testing::PrintToString(fields);
}

TEST(PodTemplate, ShapesKubernetesWouldRefuse) {
  auto faults = [](const std::string& key, const json& value) {
    json e = example_executor();
    e[key] = value;
    return fields_at_fault(e);
  };
  using ::testing::Contains;
  // Not one volume source, or two.
  EXPECT_THAT(faults("volumes", json::parse(R"([{"name":"v"}])")), Contains("executor.volumes[0]"));
  EXPECT_THAT(
      faults(
          "volumes",
          json::parse(R"([{"name":"v","emptyDir":{},"persistentVolumeClaim":{"claimName":"c"}}])")),
      Contains("executor.volumes[0]"));
  // Podium's own volumes, mount paths and node labels stay Podium's.
  EXPECT_THAT(faults("volumes", json::parse(R"([{"name":"dshm","emptyDir":{}}])")),
              Contains("executor.volumes[0].name"));
  EXPECT_THAT(
      faults("volume_mounts", json::parse(R"([{"name":"gcs-data","mountPath":"/dev/shm/x"}])")),
      Contains("executor.volume_mounts[0].mountPath"));
  EXPECT_THAT(faults("node_selector", json{{"cloud.google.com/gke-tpu-topology", "2x2x1"}}),
              Contains("executor.node_selector.cloud.google.com/gke-tpu-topology"));
  // A mount of a volume nobody declared; two mounts at one path; '..' in a path.
  EXPECT_THAT(faults("volume_mounts", json::parse(R"([{"name":"nope","mountPath":"/x"}])")),
              Contains("executor.volume_mounts[0].name"));
  EXPECT_THAT(faults("volume_mounts", json::parse(R"([{"name":"gcs-data","mountPath":"/x"},
                                                       {"name":"checkpoints","mountPath":"/x"}])")),
              Contains("executor.volume_mounts[1].mountPath"));
  EXPECT_THAT(
      faults("volume_mounts", json::parse(R"([{"name":"gcs-data","mountPath":"/a/../etc"}])")),
      Contains("executor.volume_mounts[0].mountPath"));
  // A claim needs exactly one source; names are DNS labels and unique.
  EXPECT_THAT(faults("resource_claims", json::parse(R"([{"name":"n"}])")),
              Contains("executor.resource_claims[0]"));
  EXPECT_THAT(faults("resource_claims", json::parse(R"([{"name":"N_1","resourceClaimName":"c"}])")),
              Contains("executor.resource_claims[0].name"));
  EXPECT_THAT(faults("resource_claims", json::parse(R"([{"name":"n","resourceClaimName":"c"},
                                                         {"name":"n","resourceClaimName":"d"}])")),
              Contains("executor.resource_claims[1].name"));
  // Toleration rules: Exists takes no value, tolerationSeconds only with NoExecute.
  EXPECT_THAT(
      faults("tolerations", json::parse(R"([{"key":"k","operator":"Exists","value":"v"}])")),
      Contains("executor.tolerations[0].value"));
  EXPECT_THAT(
      faults(
          "tolerations",
          json::parse(
              R"([{"key":"k","operator":"Exists","effect":"NoSchedule","tolerationSeconds":5}])")),
      Contains("executor.tolerations[0].tolerationSeconds"));
  // Quantities as Kubernetes writes them.
  EXPECT_THAT(faults("volumes", json::parse(R"([{"name":"v","emptyDir":{"sizeLimit":"64 GiB"}}])")),
              Contains("executor.volumes[0].emptyDir.sizeLimit"));
  EXPECT_THAT(faults("volumes", json::parse(R"([{"name":"v","emptyDir":{"sizeLimit":"64Gi"}}])")),
              ::testing::Not(Contains("executor.volumes[0].emptyDir.sizeLimit")));
  // Not a list, too many entries.
  EXPECT_THAT(faults("volumes", json{{"name", "v"}}), Contains("executor.volumes"));
  json many = json::array();
  for (int i = 0; i < 33; ++i)
    many.push_back({{"key", "k" + std::to_string(i)}, {"operator", "Exists"}});
  EXPECT_THAT(faults("tolerations", many), Contains("executor.tolerations"));
}

}  // namespace
}  // namespace podium::core
