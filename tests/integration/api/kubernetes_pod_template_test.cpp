// A Kubernetes cluster's pod-template extensions through the real server (docs/executors.md,
// "Pod template"): a cluster whose executor carries a gcsfuse CSI volume, a resource claim and an
// annotation gets a JobSet (the one kubectl applied, as `podium runs manifest` shows it) that
// passes the vendored JobSet CRD's schema and carries all three; malformed extensions are a 422
// problem naming the field. A fake `kubectl` on the server's PATH records what it applies.

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "tests/deploy/kubernetes_objects.h"
#include "tests/integration/support/fake_kubectl.h"
#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const podium::testing::StructuralSchema& jobset_schema() {
  static const podium::testing::StructuralSchema schema = [] {
    const json crd = podium::testing::yaml_to_json(YAML::Load(podium::testing::read_source_file(
        "tests/engine/core/data/jobset/jobset.x-k8s.io_jobsets.yaml")));
    for (const auto& v : crd["spec"]["versions"])
      if (v["name"] == "v1alpha2")
        return podium::testing::StructuralSchema(v["schema"]["openAPIV3Schema"]);
    return podium::testing::StructuralSchema(json::object());
  }();
  return schema;
}

// The shared fake (integration/support): records what `kubectl apply` read.
FakeKubectl& kubectl() {
  static FakeKubectl k;
  return k;
}

class KubernetesPodTemplate : public PodiumTest {
 protected:
  Podium::Options options() const override {
    Podium::Options o;
    o.env = {{"PATH", kubectl().path_env()}};
    return o;
  }
};

json executor_with_extensions() {
  return json::parse(R"({
    "kind": "kubernetes", "queue": "lq", "image": "img:1",
    "annotations": {"gke-gcsfuse/volumes": "true"},
    "volumes": [{"name": "gcs-data", "csi": {"driver": "gcsfuse.csi.storage.gke.io",
                 "volumeAttributes": {"bucketName": "team-data", "mountOptions": "implicit-dirs"}}}],
    "volume_mounts": [{"name": "gcs-data", "mountPath": "/data", "readOnly": true}],
    "resource_claims": [{"name": "nics", "resourceClaimTemplateName": "tpu-dranet-nics"}]
  })");
}

TEST_F(KubernetesPodTemplate, TheManifestCarriesTheExtensionsAndPassesTheSchema) {
  auto admin = podium().admin();
  const std::string cluster = unique_name("gke");
  auto created =
      podium().create_cluster(cluster, "v6e-16", {{"executor", executor_with_extensions()}});
  EXPECT_EQ(created["executor"]["volumes"], executor_with_extensions()["volumes"]);
  auto run = podium().submit_run(admin, cluster);
  const std::string id = run["id"];

  json reply;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto m = admin.get("/api/v1/runs/" + id + "/manifest");
    if (m.status == 200 && m.json["applied"] == true) {
      reply = m.json;
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(reply.is_object()) << "the fake kubectl never applied the JobSet";
  const std::string manifest = reply["manifest"];
  json jobset;
  for (const auto& j : podium::testing::yaml_documents(manifest))
    if (j.is_object() && j["kind"] == "JobSet") jobset = j;
  ASSERT_TRUE(jobset.is_object()) << manifest;
  const auto errors = jobset_schema().validate(jobset);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  const json& pod_template = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"];
  EXPECT_EQ(pod_template["metadata"]["annotations"]["gke-gcsfuse/volumes"], "true");
  const json& pod = pod_template["spec"];
  EXPECT_EQ(pod["volumes"][1], executor_with_extensions()["volumes"][0]);
  EXPECT_EQ(pod["resourceClaims"], executor_with_extensions()["resource_claims"]);
  EXPECT_EQ(pod["containers"][0]["volumeMounts"][1],
            executor_with_extensions()["volume_mounts"][0]);
  EXPECT_EQ(pod["containers"][0]["resources"]["claims"], json::parse(R"([{"name":"nics"}])"));
}

TEST_F(KubernetesPodTemplate, MalformedExtensionsAre422NamingTheField) {
  auto admin = podium().admin();
  auto refused = [&](const json& executor) {
    return admin.post(
        "/api/v1/clusters",
        {{"name", unique_name("gke")}, {"accelerator", "v6e-16"}, {"executor", executor}});
  };
  auto fields = [](const Reply& r) {
    std::vector<std::string> out;
    for (const auto& e : r.json["errors"]) out.push_back(e["field"]);
    return out;
  };
  json wrong_type = executor_with_extensions();
  wrong_type["volumes"][0]["csi"]["readOnly"] = "yes";
  auto r = refused(wrong_type);
  EXPECT_EQ(r.status, 422) << r;
  EXPECT_EQ(r.content_type(), "application/problem+json");
  EXPECT_EQ(fields(r), std::vector<std::string>{"executor.volumes[0].csi.readOnly"}) << r;

  json unknown = executor_with_extensions();
  unknown["resource_claims"][0]["deviceClassName"] = "netdev.google.com";
  r = refused(unknown);
  EXPECT_EQ(r.status, 422) << r;
  EXPECT_EQ(fields(r), std::vector<std::string>{"executor.resource_claims[0].deviceClassName"})
      << r;

  json bad_annotations = executor_with_extensions();
  bad_annotations["annotations"] = json::array({"gke-gcsfuse/volumes"});
  r = refused(bad_annotations);
  EXPECT_EQ(r.status, 422) << r;
  EXPECT_EQ(fields(r), std::vector<std::string>{"executor.annotations"}) << r;

  // PATCH validates the same way.
  const std::string cluster = unique_name("gke");
  podium().create_cluster(cluster, "v6e-16", {{"executor", executor_with_extensions()}});
  json patched = executor_with_extensions();
  patched["volume_mounts"][0]["name"] = "nope";
  r = admin.patch("/api/v1/clusters/" + cluster, {{"executor", patched}});
  EXPECT_EQ(r.status, 422) << r;
  EXPECT_EQ(fields(r), std::vector<std::string>{"executor.volume_mounts[0].name"}) << r;
}

}  // namespace
}  // namespace podium::it
