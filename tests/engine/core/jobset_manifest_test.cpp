#include "engine/core/jobset_manifest.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "tests/engine/core/structural_schema.h"

namespace podium::core {
namespace {

using nlohmann::json;

// YAML as JSON: quoted scalars are strings; plain ones are null, booleans, numbers or strings.
json yaml_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_json(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& item : n) a.push_back(yaml_json(item));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.Scalar();
      if (n.Tag() == "!") return s;
      if (s == "true") return true;
      if (s == "false") return false;
      if (s == "null" || s == "~") return nullptr;
      json num = json::parse(s, nullptr, false);
      if (!num.is_discarded() && num.is_number()) return num;
      return s;
    }
    default:
      return nullptr;
  }
}

const testing::StructuralSchema& jobset_schema() {
  static const testing::StructuralSchema schema = [] {
    std::ifstream in(std::string(PODIUM_SOURCE_DIR) +
                     "/tests/engine/core/data/jobset/jobset.x-k8s.io_jobsets.yaml");
    std::stringstream ss;
    ss << in.rdbuf();
    const json crd = yaml_json(YAML::Load(ss.str()));
    for (const auto& v : crd["spec"]["versions"])
      if (v["name"] == "v1alpha2") return testing::StructuralSchema(v["schema"]["openAPIV3Schema"]);
    return testing::StructuralSchema(json::object());
  }();
  return schema;
}

JobSetRequest request(const std::string& accelerator, int slices) {
  JobSetRequest r;
  r.name = "podium-abc123-1";
  r.run_id = "run_abc123";
  r.attempt_id = "att_0011";
  r.accelerator = *parse_accelerator(accelerator).type;
  r.num_slices = slices;
  r.executor.namespace_name = "training";
  r.executor.queue = "multislice-queue";
  r.executor.priority_class = "medium";
  r.executor.service_account = "trainer";
  r.executor.env = {{"LIBTPU_INIT_ARGS", "--xla_tpu_enable_async_collective_fusion=true"}};
  r.image = "us-docker.pkg.dev/proj/repo/maxtext:2026-11";
  r.server_url = "https://podium.example.com";
  r.token_secret = "podium-abc123-1-token";
  return r;
}

const json& pod_spec(const json& js) {
  return js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"];
}

std::string env_value(const json& container, const std::string& name) {
  for (const auto& e : container["env"])
    if (e["name"] == name) return e.contains("value") ? e["value"].get<std::string>() : "<ref>";
  return "<missing>";
}

void expect_valid(const json& js) {
  const auto errors = jobset_schema().validate(js);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  // And the YAML kubectl gets says the same.
  EXPECT_EQ(yaml_json(YAML::Load(to_yaml(js))), js);
}

TEST(JobSetManifest, Tpu7x64TimesTwoSlices) {
  const json js = build_jobset(request("tpu7x-64", 2));
  expect_valid(js);
  EXPECT_EQ(js["apiVersion"], "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "multislice-queue");
  EXPECT_EQ(js["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"],
            "cloud.google.com/gke-nodepool");
  EXPECT_EQ(js["spec"]["failurePolicy"]["maxRestarts"], 0);
  const auto& rj = js["spec"]["replicatedJobs"][0];
  EXPECT_EQ(rj["name"], "slice-job");
  EXPECT_EQ(rj["replicas"], 2);
  EXPECT_EQ(rj["template"]["spec"]["parallelism"], 8);  // 32 chips, 4 per host
  EXPECT_EQ(rj["template"]["spec"]["completions"], 8);
  EXPECT_EQ(rj["template"]["spec"]["backoffLimit"], 0);
  const auto& pod = pod_spec(js);
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/gke-tpu-accelerator"], "tpu7x");
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/gke-tpu-topology"], "2x4x4");
  EXPECT_EQ(pod["hostNetwork"], true);
  EXPECT_EQ(pod["dnsPolicy"], "ClusterFirstWithHostNet");
  EXPECT_EQ(pod["priorityClassName"], "medium");
  EXPECT_EQ(pod["serviceAccountName"], "trainer");
  const auto& c = pod["containers"][0];
  EXPECT_EQ(c["name"], "jax-tpu");
  EXPECT_EQ(c["resources"]["limits"]["google.com/tpu"], 4);
  EXPECT_EQ(c["command"], json({"/usr/local/bin/podium-worker", "attach"}));
  EXPECT_EQ(env_value(c, "PODIUM_HOSTS_PER_SLICE"), "8");
  EXPECT_EQ(env_value(c, "PODIUM_NUM_SLICES"), "2");
  EXPECT_EQ(env_value(c, "PODIUM_SERVER"), "https://podium.example.com");
  EXPECT_EQ(env_value(c, "LIBTPU_INIT_ARGS"), "--xla_tpu_enable_async_collective_fusion=true");
  bool token_from_secret = false, slice_from_label = false;
  for (const auto& e : c["env"]) {
    if (e["name"] == "PODIUM_ATTACH_TOKEN")
      token_from_secret = e["valueFrom"]["secretKeyRef"] ==
                          json({{"name", "podium-abc123-1-token"}, {"key", "token"}});
    if (e["name"] == "PODIUM_SLICE")
      slice_from_label = e["valueFrom"]["fieldRef"]["fieldPath"] ==
                         "metadata.labels['jobset.sigs.k8s.io/job-index']";
  }
  EXPECT_TRUE(token_from_secret);
  EXPECT_TRUE(slice_from_label);
}

TEST(JobSetManifest, V6e16TimesTwoAndAnInitContainerForTheWorker) {
  auto r = request("v6e-16", 2);
  r.worker_image = "ghcr.io/podium/worker:0.1.0";
  const json js = build_jobset(r);
  expect_valid(js);
  EXPECT_EQ(js["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"], 4);
  const auto& pod = pod_spec(js);
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/gke-tpu-accelerator"], "tpu-v6e-slice");
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/gke-tpu-topology"], "4x4");
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["google.com/tpu"], 4);
  EXPECT_EQ(pod["initContainers"][0]["image"], "ghcr.io/podium/worker:0.1.0");
  EXPECT_EQ(pod["containers"][0]["command"][0], "/podium/podium-worker");
}

TEST(JobSetManifest, H100NodePoolOfTwoNodes) {
  auto r = request("h100-16", 1);
  r.executor.queue.clear();
  const json js = build_jobset(r);
  expect_valid(js);
  EXPECT_FALSE(js["metadata"]["labels"].contains("kueue.x-k8s.io/queue-name"));
  EXPECT_EQ(js["spec"]["replicatedJobs"][0]["template"]["spec"]["completions"], 2);
  const auto& pod = pod_spec(js);
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/gke-accelerator"], "nvidia-h100-mega-80gb");
  EXPECT_FALSE(pod["nodeSelector"].contains("cloud.google.com/gke-tpu-topology"));
  EXPECT_EQ(pod["containers"][0]["name"], "gpu-image");
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], 8);
}

TEST(JobSetManifest, TheTokenNeverAppearsInTheJobSet) {
  const json secret = build_token_secret("podium-abc123-1-token", "training", "pda_s3cret",
                                         "run_abc123", "att_0011");
  EXPECT_EQ(secret["stringData"]["token"], "pda_s3cret");
  EXPECT_EQ(to_yaml(build_jobset(request("v6e-16", 1))).find("pda_"), std::string::npos);
}

TEST(JobSetManifest, BadRequestsSayWhatIsWrong) {
  auto no_image = request("v6e-16", 1);
  no_image.image.clear();
  EXPECT_THROW(build_jobset(no_image), std::invalid_argument);
  auto cpu = request("cpu-2", 1);
  EXPECT_THROW(build_jobset(cpu), std::invalid_argument);
  auto bad_name = request("v6e-16", 1);
  bad_name.name = "Podium_Run";
  EXPECT_THROW(build_jobset(bad_name), std::invalid_argument);
  try {
    build_jobset(no_image);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("image"), std::string::npos) << e.what();
  }
}

TEST(JobSetManifest, TheSchemaCheckCanFail) {
  json js = build_jobset(request("v6e-16", 2));
  json wrong_type = js;
  wrong_type["spec"]["replicatedJobs"][0]["replicas"] = "two";
  EXPECT_FALSE(jobset_schema().validate(wrong_type).empty());
  json unknown = js;
  unknown["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelizm"] = 4;
  auto errors = jobset_schema().validate(unknown);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find("parallelizm"), std::string::npos) << errors.front();
  json deep = js;
  deep["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
      ["imagePullPolicy"] = 7;
  EXPECT_FALSE(jobset_schema().validate(deep).empty());
  json missing = js;
  missing["spec"]["replicatedJobs"][0].erase("name");
  EXPECT_FALSE(jobset_schema().validate(missing).empty());
}

TEST(JobSetManifest, YamlKeepsStringsAsStrings) {
  const json v = {{"a", "true"},
                  {"b", "0"},
                  {"c", ""},
                  {"d", "x: y"},
                  {"e", json::array()},
                  {"f", {{"g", 1}, {"h", false}}},
                  {"i", {"p", {{"q", "r"}, {"s", 2}}}}};
  EXPECT_EQ(yaml_json(YAML::Load(to_yaml(v))), v) << to_yaml(v);
}

}  // namespace
}  // namespace podium::core
