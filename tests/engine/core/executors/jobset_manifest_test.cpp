#include "engine/core/executors/jobset_manifest.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/engine/core/structural_schema.h"
#include "tests/support/yaml_json.h"

namespace podium::core {
namespace {

using nlohmann::json;
using podium::testing::read_source_file;
using podium::testing::StructuralSchema;
using podium::testing::yaml_to_json;

// The vendored JobSet CRD (tests/engine/core/data/jobset/README.md), as JSON.
const json& jobset_crd() {
  static const json crd = [] {
    return yaml_to_json(
        YAML::Load(read_source_file("tests/engine/core/data/jobset/jobset.x-k8s.io_jobsets.yaml")));
  }();
  return crd;
}

const StructuralSchema& jobset_schema() {
  static const StructuralSchema schema = [] {
    for (const auto& v : jobset_crd()["spec"]["versions"])
      if (v["name"] == "v1alpha2") return StructuralSchema(v["schema"]["openAPIV3Schema"]);
    ADD_FAILURE() << "the vendored CRD has no v1alpha2 version";
    return StructuralSchema(json::object());
  }();
  return schema;
}

const char* const kToken = "pda_s3cret-token-value";

JobSetRequest request(const std::string& accelerator, int slices) {
  JobSetRequest r;
  r.name = "podium-abc123-1";
  r.run_id = "run_abc123";
  r.attempt_id = "att_0011";
  auto parsed = parse_accelerator(accelerator);
  EXPECT_TRUE(parsed.value) << accelerator;
  if (parsed.value) r.accelerator = *parsed.value;
  r.num_slices = slices;
  r.executor.namespace_name = "training";
  r.executor.queue = "multislice-queue";
  r.executor.priority_class = "medium";
  r.executor.service_account = "trainer";
  r.executor.env = {{"LIBTPU_INIT_ARGS", "--xla_tpu_enable_async_collective_fusion=true"},
                    {"XLA_FLAGS", "--xla_dump_to=/tmp/xla"}};
  r.image = "us-docker.pkg.dev/proj/repo/maxtext:2026-11";
  r.server_url = "https://podium.example.com";
  r.token_secret = "podium-abc123-1-token";
  return r;
}

const json& job_spec(const json& js) {
  return js["spec"]["replicatedJobs"][0]["template"]["spec"];
}
const json& pod_spec(const json& js) {
  return job_spec(js)["template"]["spec"];
}
const json& main_container(const json& js) {
  return pod_spec(js)["containers"][0];
}

const json* env_entry(const json& container, const std::string& name) {
  for (const auto& e : container["env"])
    if (e["name"] == name) return &e;
  return nullptr;
}

std::string env_value(const json& container, const std::string& name) {
  const json* e = env_entry(container, name);
  if (!e) return "<missing>";
  return e->contains("value") ? (*e)["value"].get<std::string>() : "<valueFrom>";
}

std::string field_ref(const json& container, const std::string& name) {
  const json* e = env_entry(container, name);
  if (!e || !e->contains("valueFrom")) return "<none>";
  return (*e)["valueFrom"]["fieldRef"]["fieldPath"].get<std::string>();
}

// The schema accepts it, and the YAML kubectl gets reads back as the same JSON.
void expect_valid(const json& js) {
  const auto errors = jobset_schema().validate(js);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  const std::string yaml = to_yaml(js);
  EXPECT_EQ(yaml_to_json(YAML::Load(yaml)), js) << yaml;
}

// What every JobSet Podium builds has, whatever the accelerator.
void expect_common_shape(const json& js, const JobSetRequest& r) {
  EXPECT_EQ(js["apiVersion"], "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(js["kind"], "JobSet");
  EXPECT_EQ(js["metadata"]["name"], r.name);
  EXPECT_EQ(js["metadata"]["namespace"], r.executor.namespace_name);
  EXPECT_EQ(js["metadata"]["labels"]["podium.dev/run"], r.run_id);
  EXPECT_EQ(js["metadata"]["labels"]["podium.dev/attempt"], r.attempt_id);
  if (r.accelerator.kind == AcceleratorKind::tpu)
    EXPECT_EQ(
        js["metadata"]["annotations"],
        json({{"alpha.jobset.sigs.k8s.io/exclusive-topology", "cloud.google.com/gke-nodepool"}}));
  else
    EXPECT_FALSE(js["metadata"].contains("annotations"));  // as xpk's GPU JobSets
  EXPECT_EQ(js["spec"]["failurePolicy"], json::parse(R"({"maxRestarts":0,"rules":[
      {"name":"fail-on-pod-failure-policy","action":"FailJobSet",
       "onJobFailureReasons":["PodFailurePolicy"]}]})"));
  EXPECT_EQ(js["spec"]["ttlSecondsAfterFinished"], 43200);
  EXPECT_EQ(js["metadata"]["labels"]["xpk.google.com/workload"], r.name);
  ASSERT_EQ(js["spec"]["replicatedJobs"].size(), 1u);
  const auto& rj = js["spec"]["replicatedJobs"][0];
  EXPECT_EQ(rj["name"], "slice-job");
  EXPECT_EQ(rj["replicas"], r.num_slices);
  const auto& job = job_spec(js);
  EXPECT_EQ(job["parallelism"], r.accelerator.hosts_per_slice);
  EXPECT_EQ(job["completions"], r.accelerator.hosts_per_slice);
  EXPECT_EQ(job["backoffLimit"], 0);
  EXPECT_EQ(job["completionMode"], "Indexed");
  EXPECT_EQ(job["template"]["metadata"]["labels"]["podium.dev/attempt"], r.attempt_id);
  const auto& pod = pod_spec(js);
  EXPECT_EQ(pod["restartPolicy"], "Never");
  EXPECT_EQ(pod["hostNetwork"], true);
  EXPECT_EQ(pod["dnsPolicy"], "ClusterFirstWithHostNet");
  EXPECT_EQ(pod["terminationGracePeriodSeconds"], r.termination_grace_seconds);
  const int ranks = ranks_per_host(r.accelerator, r.executor);
  ASSERT_EQ(pod["containers"].size(), static_cast<size_t>(ranks));
  // One podFailurePolicy rule per container: xpk's restartable codes are 42 and 127-255.
  const auto& rules = job["podFailurePolicy"]["rules"];
  ASSERT_EQ(rules.size(), static_cast<size_t>(ranks));
  for (int i = 0; i < ranks; ++i) {
    const auto& rule = rules[static_cast<size_t>(i)];
    EXPECT_EQ(rule["action"], "FailJob");
    EXPECT_EQ(rule["onExitCodes"]["containerName"],
              pod["containers"][static_cast<size_t>(i)]["name"]);
    EXPECT_EQ(rule["onExitCodes"]["operator"], "NotIn");
    const auto& codes = rule["onExitCodes"]["values"];
    ASSERT_EQ(codes.size(), 130u);
    EXPECT_EQ(codes.front(), 42);
    EXPECT_EQ(codes[1], 127);
    EXPECT_EQ(codes.back(), 255);
  }
  for (int i = 0; i < ranks; ++i) {
    const auto& c = pod["containers"][static_cast<size_t>(i)];
    EXPECT_EQ(env_value(c, "PODIUM_RANKS_PER_HOST"), std::to_string(ranks));
    EXPECT_EQ(env_value(c, "PODIUM_RANK_IN_HOST"), std::to_string(i));
    EXPECT_EQ(c["image"], r.image);
    EXPECT_EQ(env_value(c, "PODIUM_SERVER"), r.server_url);
    EXPECT_EQ(env_value(c, "PODIUM_RUN_ID"), r.run_id);
    EXPECT_EQ(env_value(c, "PODIUM_ATTEMPT_ID"), r.attempt_id);
    EXPECT_EQ(env_value(c, "PODIUM_ENGINE"), "kubernetes");
    EXPECT_EQ(env_value(c, "PODIUM_JOBSET"), r.name);
    EXPECT_EQ(env_value(c, "PODIUM_HOSTS_PER_SLICE"),
              std::to_string(r.accelerator.hosts_per_slice));
    EXPECT_EQ(env_value(c, "PODIUM_NUM_SLICES"), std::to_string(r.num_slices));
    EXPECT_EQ(field_ref(c, "PODIUM_SLICE"), "metadata.labels['jobset.sigs.k8s.io/job-index']");
    EXPECT_EQ(field_ref(c, "PODIUM_ENGINE_RESTART"),
              "metadata.labels['jobset.sigs.k8s.io/restart-attempt']");
    const json* token = env_entry(c, "PODIUM_ATTACH_TOKEN");
    ASSERT_NE(token, nullptr);
    EXPECT_EQ(
        *token,
        json({{"name", "PODIUM_ATTACH_TOKEN"},
              {"valueFrom", {{"secretKeyRef", {{"name", r.token_secret}, {"key", "token"}}}}}}));
    // The Job controller sets it for Indexed Jobs; setting it here would fight it.
    EXPECT_EQ(env_entry(c, "JOB_COMPLETION_INDEX"), nullptr);
    for (const auto& [k, v] : r.executor.env) EXPECT_EQ(env_value(c, k), v) << k;
    // /dev/shm in memory, as xpk.
    EXPECT_EQ(c["volumeMounts"][0], json({{"name", "dshm"}, {"mountPath", "/dev/shm"}}));
  }
  EXPECT_EQ(pod["volumes"][0], json({{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}}}}));
  // The token never appears in the manifest, in any form.
  EXPECT_EQ(to_yaml(js).find(kToken), std::string::npos);
  EXPECT_EQ(js.dump().find(kToken), std::string::npos);
}

// `podium runs manifest` of a tpu7x-64 x 2 run: xpk's parallel containers, two per pod.
TEST(JobSetManifest, Tpu7x64TimesTwoSlicesRunsTwoContainersPerPod) {
  const auto r = request("tpu7x-64", 2);
  ASSERT_EQ(r.accelerator.chips_per_slice, 32);
  ASSERT_EQ(r.accelerator.hosts_per_slice, 8);
  ASSERT_TRUE(r.executor.parallel_containers);  // the default
  EXPECT_EQ(ranks_per_host(r.accelerator, r.executor), 2);
  const json js = build_jobset(r);
  expect_valid(js);
  expect_common_shape(js, r);
  EXPECT_EQ(js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "multislice-queue");
  EXPECT_EQ(js["spec"]["replicatedJobs"][0]["replicas"], 2);
  EXPECT_EQ(job_spec(js)["parallelism"], 8);  // 32 chips, 4 per host
  EXPECT_EQ(job_spec(js)["completions"], 8);
  const auto& pod = pod_spec(js);
  EXPECT_EQ(pod["nodeSelector"],
            json({{"cloud.google.com/gke-tpu-accelerator", "tpu7x"},
                  {"cloud.google.com/gke-tpu-topology", "2x4x4"},
                  {"cloud.google.com/placement-policy-name", "tpu7x-64-2x4x4-placement-policy"}}));
  EXPECT_EQ(pod["tolerations"], json::parse(R"([{"key":"google.com/tpu","operator":"Exists"}])"));
  EXPECT_EQ(pod["priorityClassName"], "medium");
  EXPECT_EQ(pod["serviceAccountName"], "trainer");
  EXPECT_FALSE(pod.contains("initContainers"));
  ASSERT_EQ(pod["containers"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const auto& c = pod["containers"][i];
    EXPECT_EQ(c["name"], "jax-tpu-" + std::to_string(i + 1));
    EXPECT_EQ(c["resources"], json({{"limits", {{"google.com/tpu", 2}}}}));
    EXPECT_EQ(c["securityContext"], json({{"privileged", true}}));
    EXPECT_EQ(c["command"], json({"/usr/local/bin/podium-worker", "attach"}));
    EXPECT_EQ(env_value(c, "PODIUM_HOSTS_PER_SLICE"), "8");
    EXPECT_EQ(env_value(c, "PODIUM_NUM_SLICES"), "2");
    EXPECT_EQ(env_value(c, "PODIUM_RANK_IN_HOST"), std::to_string(i));
  }
  // The YAML kubectl gets (and `podium runs manifest` prints) names both containers.
  const std::string yaml = to_yaml(js);
  EXPECT_NE(yaml.find("name: jax-tpu-1\n"), std::string::npos);
  EXPECT_NE(yaml.find("name: jax-tpu-2\n"), std::string::npos);
}

// The cluster turns parallel containers off (xpk --no-use-parallel-containers): one container
// with the VM's 4 chips, one rank per VM.
TEST(JobSetManifest, Tpu7xWithoutParallelContainers) {
  auto r = request("tpu7x-64", 1);
  r.executor.parallel_containers = false;
  EXPECT_EQ(ranks_per_host(r.accelerator, r.executor), 1);
  const json js = build_jobset(r);
  expect_valid(js);
  expect_common_shape(js, r);
  ASSERT_EQ(pod_spec(js)["containers"].size(), 1u);
  EXPECT_EQ(main_container(js)["name"], "jax-tpu");
  EXPECT_EQ(main_container(js)["resources"]["limits"]["google.com/tpu"], 4);
}

TEST(JobSetManifest, RanksPerHostFollowXpksMachineTypes) {
  KubernetesExecutor on;
  KubernetesExecutor off;
  off.parallel_containers = false;
  auto type = [](const char* acc) { return *parse_accelerator(acc).value; };
  // tpu7x-standard-4t (every tpu7x slice of 4 chips per VM, single-host tpu7x-8 too): 2.
  EXPECT_EQ(ranks_per_host(type("tpu7x-8"), on), 2);
  EXPECT_EQ(ranks_per_host(type("tpu7x-64"), on), 2);
  EXPECT_EQ(ranks_per_host(type("tpu7x-64"), off), 1);
  for (const char* acc : {"v5e-16", "v5p-32", "v6e-16", "v6e-8", "v4-32", "h100-16"})
    EXPECT_EQ(ranks_per_host(type(acc), on), 1) << acc;
}

TEST(JobSetManifest, V6e16TimesTwoSlices) {
  const auto r = request("v6e-16", 2);
  const json js = build_jobset(r);
  expect_valid(js);
  expect_common_shape(js, r);
  EXPECT_EQ(js["spec"]["replicatedJobs"][0]["replicas"], 2);
  EXPECT_EQ(job_spec(js)["parallelism"], 4);  // 16 chips, 4 per host
  EXPECT_EQ(job_spec(js)["completions"], 4);
  const auto& pod = pod_spec(js);
  EXPECT_EQ(pod["nodeSelector"], json({{"cloud.google.com/gke-tpu-accelerator", "tpu-v6e-slice"},
                                       {"cloud.google.com/gke-tpu-topology", "4x4"}}));
  EXPECT_EQ(main_container(js)["resources"]["limits"]["google.com/tpu"], 4);
  EXPECT_EQ(main_container(js)["name"], "jax-tpu");
}

TEST(JobSetManifest, H100NodePoolOfTwoNodes) {
  auto r = request("h100-16", 1);
  ASSERT_EQ(r.accelerator.hosts_per_slice, 2);
  r.executor.queue.clear();
  r.executor.priority_class.clear();
  r.executor.service_account.clear();
  r.executor.env.clear();
  const json js = build_jobset(r);
  expect_valid(js);
  expect_common_shape(js, r);
  EXPECT_FALSE(js["metadata"]["labels"].contains("kueue.x-k8s.io/queue-name"));
  EXPECT_EQ(job_spec(js)["completions"], 2);
  EXPECT_EQ(job_spec(js)["parallelism"], 2);
  const auto& pod = pod_spec(js);
  EXPECT_EQ(pod["nodeSelector"],
            json({{"cloud.google.com/gke-accelerator", "nvidia-h100-mega-80gb"}}));
  EXPECT_EQ(pod["tolerations"], json::parse(R"([{"key":"nvidia.com/gpu","operator":"Exists"}])"));
  EXPECT_FALSE(pod.contains("priorityClassName"));
  EXPECT_FALSE(pod.contains("serviceAccountName"));
  const auto& c = main_container(js);
  EXPECT_EQ(c["name"], "gpu-image");
  EXPECT_EQ(c["resources"], json({{"limits", {{"nvidia.com/gpu", 8}}}}));
  EXPECT_FALSE(c.contains("securityContext"));
}

TEST(JobSetManifest, WorkerFromAnInitContainer) {
  auto r = request("v6e-16", 1);
  r.worker_image = "ghcr.io/podium/worker:0.1.0";
  const json js = build_jobset(r);
  expect_valid(js);
  const auto& pod = pod_spec(js);
  ASSERT_EQ(pod["initContainers"].size(), 1u);
  const auto& init = pod["initContainers"][0];
  EXPECT_EQ(init["name"], "podium-worker");
  EXPECT_EQ(init["image"], "ghcr.io/podium/worker:0.1.0");
  EXPECT_EQ(init["command"], json({"cp", "/podium-worker", "/podium/podium-worker"}));
  const json bin_mount = {{"name", "podium-bin"}, {"mountPath", "/podium"}};
  EXPECT_EQ(init["volumeMounts"], json::array({bin_mount}));
  const auto& c = main_container(js);
  EXPECT_EQ(c["command"], json({"/podium/podium-worker", "attach"}));
  EXPECT_EQ(c["volumeMounts"][1], bin_mount);
  auto tpu7x = request("tpu7x-64", 1);
  tpu7x.worker_image = r.worker_image;
  const json tpu7x_js = build_jobset(tpu7x);  // named: pod_spec returns a reference into it
  for (const auto& each : pod_spec(tpu7x_js)["containers"])
    EXPECT_EQ(each["volumeMounts"][1], bin_mount) << each["name"];
  EXPECT_EQ(pod["volumes"][1], json({{"name", "podium-bin"}, {"emptyDir", json::object()}}));
}

TEST(JobSetManifest, EveryAcceleratorFamilyValidates) {
  for (const char* acc : {"tpu7x-8", "tpu7x-128", "v6e-8", "v6e-256", "v5e-16", "v5p-8", "v5p-64",
                          "v4-32", "h100-8", "h200-16", "b200-8"}) {
    SCOPED_TRACE(acc);
    for (int slices : {1, 4}) {
      auto r = request(acc, slices);
      if (slices == 4) r.worker_image = "ghcr.io/podium/worker:0.1.0";
      const json js = build_jobset(r);
      expect_valid(js);
      const int per_host = r.accelerator.chips_per_slice / r.accelerator.hosts_per_slice;
      const int ranks = ranks_per_host(r.accelerator, r.executor);
      for (const auto& c : pod_spec(js)["containers"])
        EXPECT_EQ(c["resources"]["limits"].begin().value(), per_host / ranks);
    }
  }
}

TEST(JobSetManifest, NodeLabelsPerFamily) {
  auto label = [](const char* acc) {
    return gke_tpu_accelerator_label(*parse_accelerator(acc).value);
  };
  EXPECT_EQ(label("tpu7x-64"), "tpu7x");
  EXPECT_EQ(label("v6e-16"), "tpu-v6e-slice");
  EXPECT_EQ(label("v5p-8"), "tpu-v5p-slice");
  EXPECT_EQ(label("v5e-16"), "tpu-v5-lite-podslice");
  EXPECT_EQ(label("v5litepod-16"), "tpu-v5-lite-podslice");
  EXPECT_EQ(label("v4-8"), "tpu-v4-podslice");
  EXPECT_EQ(label("h100-8"), "nvidia-h100-mega-80gb");
  EXPECT_EQ(label("h200-8"), "nvidia-h200-141gb");
  EXPECT_EQ(label("b200-8"), "nvidia-b200");
  EXPECT_EQ(label("cpu-2"), "");
}

TEST(JobSetManifest, SameRequestSameBytes) {
  const auto r = request("tpu7x-64", 2);
  EXPECT_EQ(to_yaml(build_jobset(r)), to_yaml(build_jobset(r)));
  EXPECT_EQ(build_jobset(r).dump(), build_jobset(r).dump());
}

// Code bundles (issue 28.3): every rank container names the run's bundle for its wrapper, as a
// literal value; a run without one has no such variable, and a cluster cannot set it.
TEST(JobSetManifest, TheRunsCodeBundleReachesEveryRankContainer) {
  const std::string digest = "sha256:" + std::string(64, 'c');
  auto r = request("tpu7x-64", 1);
  r.code_bundle = digest;
  const json js = build_jobset(r);
  expect_valid(js);
  const auto& containers = pod_spec(js)["containers"];
  ASSERT_EQ(containers.size(), 2u);
  for (const auto& c : containers) EXPECT_EQ(env_value(c, "PODIUM_CODE_BUNDLE"), digest);
  EXPECT_EQ(env_entry(main_container(build_jobset(request("v6e-16", 1))), "PODIUM_CODE_BUNDLE"),
            nullptr);
  auto clash = request("v6e-16", 1);
  clash.executor.env = {{"PODIUM_CODE_BUNDLE", digest}};
  EXPECT_THROW(build_jobset(clash), std::invalid_argument);
}

TEST(JobSetManifest, ExecutorEnvStaysLiteral) {
  auto r = request("v6e-16", 1);
  r.executor.env = {{"GREETING", "cost $5, $(HOME) and $$"}};
  const json js = build_jobset(r);
  // Kubernetes reads $$ as $, and leaves no $(VAR) reference to expand.
  EXPECT_EQ(env_value(main_container(js), "GREETING"), "cost $$5, $$(HOME) and $$$$");
}

TEST(JobSetManifest, TheTokenSecret) {
  const json secret =
      build_token_secret("podium-abc123-1-token", "training", kToken, "run_abc123", "att_0011");
  EXPECT_EQ(secret["apiVersion"], "v1");
  EXPECT_EQ(secret["kind"], "Secret");
  EXPECT_EQ(secret["type"], "Opaque");
  EXPECT_EQ(secret["metadata"]["name"], "podium-abc123-1-token");
  EXPECT_EQ(secret["metadata"]["namespace"], "training");
  EXPECT_EQ(secret["metadata"]["labels"]["podium.dev/attempt"], "att_0011");
  EXPECT_EQ(secret["stringData"], json({{"token", kToken}}));
  EXPECT_EQ(yaml_to_json(YAML::Load(to_yaml(secret))), secret);
}

// The message of the std::invalid_argument build_jobset throws, or "<no throw>".
std::string rejection(const JobSetRequest& r) {
  try {
    build_jobset(r);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<no throw>";
}

TEST(JobSetManifest, BadRequestsSayWhatIsWrong) {
  struct Case {
    const char* what;
    std::function<void(JobSetRequest&)> change;
    const char* message_has;
  };
  const std::vector<Case> cases = {
      {"no image", [](JobSetRequest& r) { r.image.clear(); }, "image"},
      {"cpu", [](JobSetRequest& r) { r.accelerator = *parse_accelerator("cpu-2").value; }, "cpu-2"},
      {"uppercase name", [](JobSetRequest& r) { r.name = "Podium-Run"; }, "DNS label"},
      {"underscore name", [](JobSetRequest& r) { r.name = "podium_run"; }, "DNS label"},
      {"41 characters", [](JobSetRequest& r) { r.name = std::string(41, 'a'); }, "40"},
      {"empty name", [](JobSetRequest& r) { r.name.clear(); }, "DNS label"},
      {"zero slices", [](JobSetRequest& r) { r.num_slices = 0; }, "slice"},
      {"no server URL", [](JobSetRequest& r) { r.server_url.clear(); }, "public_url"},
      {"no token Secret", [](JobSetRequest& r) { r.token_secret.clear(); }, "Secret"},
      {"bad token Secret", [](JobSetRequest& r) { r.token_secret = "Token!"; }, "Secret"},
      {"relative worker path", [](JobSetRequest& r) { r.worker_path = "podium-worker"; },
       "absolute"},
      {"negative grace", [](JobSetRequest& r) { r.termination_grace_seconds = -1; },
       "termination_grace_seconds"},
      {"bad namespace", [](JobSetRequest& r) { r.executor.namespace_name = "Team A"; },
       "namespace"},
      {"bad run id", [](JobSetRequest& r) { r.run_id = "run/1"; }, "label"},
      {"bad queue", [](JobSetRequest& r) { r.executor.queue = "queue!"; }, "queue"},
      {"bad priority class", [](JobSetRequest& r) { r.executor.priority_class = "High"; },
       "priority class"},
      {"Podium's env", [](JobSetRequest& r) { r.executor.env["PODIUM_SLICE"] = "3"; },
       "PODIUM_SLICE"},
      {"gang env", [](JobSetRequest& r) { r.executor.env["TPU_WORKER_ID"] = "0"; },
       "TPU_WORKER_ID"},
      {"bad env name", [](JobSetRequest& r) { r.executor.env["1X"] = "y"; }, "1X"},
      {"no topology", [](JobSetRequest& r) { r.accelerator.topology.clear(); }, "topology"},
      {"GPU not whole nodes",
       [](JobSetRequest& r) {
         r.accelerator = *parse_accelerator("h100-16").value;
         r.accelerator.chips_per_slice = 12;
         r.accelerator.hosts_per_slice = 2;
       },
       "8 GPUs"},
  };
  for (const auto& c : cases) {
    auto r = request("v6e-16", 1);
    c.change(r);
    const std::string message = rejection(r);
    EXPECT_NE(message, "<no throw>") << c.what;
    EXPECT_NE(message.find(c.message_has), std::string::npos) << c.what << ": " << message;
  }
  EXPECT_EQ(rejection(request("v6e-16", 1)), "<no throw>");
  auto forty = request("v6e-16", 1);
  forty.name = std::string(40, 'a');
  EXPECT_EQ(rejection(forty), "<no throw>");
}

// A cluster's pod-template extensions (docs/executors.md, "Pod template": the documented
// example, gcsfuse volume, PVC, DRANET resource claim, gcsfuse annotations, extra node selector
// and toleration) reach the pod, every rank's container, and pass the JobSet CRD's schema.
TEST(JobSetManifest, PodTemplateExtensionsFromTheDocumentedExample) {
  const auto parsed = parse_executor(
      json::parse(read_source_file("examples/executors/gke-tpu7x-gcsfuse-dranet.json")));
  ASSERT_TRUE(parsed.value);
  auto r = request("tpu7x-64", 2);
  r.executor = parsed.value->kubernetes;
  const json js = build_jobset(r);
  expect_valid(js);
  expect_common_shape(js, r);
  const json& pod_template = job_spec(js)["template"];
  EXPECT_EQ(pod_template["metadata"]["annotations"]["gke-gcsfuse/volumes"], "true");
  EXPECT_EQ(pod_template["metadata"]["labels"]["podium.dev/attempt"], r.attempt_id);
  const auto& pod = pod_spec(js);
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/gke-spot"], "true");
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/gke-tpu-topology"], "2x4x4");  // still Podium's
  ASSERT_EQ(pod["tolerations"].size(), 2u);
  EXPECT_EQ(pod["tolerations"][0]["key"], "google.com/tpu");
  EXPECT_EQ(pod["tolerations"][1]["key"], "cloud.google.com/gke-spot");
  EXPECT_EQ(pod["serviceAccountName"], "maxtext-trainer");
  EXPECT_EQ(pod["resourceClaims"],
            json::parse(R"([{"name":"tpu-nics","resourceClaimTemplateName":"tpu-dranet-nics"}])"));
  ASSERT_EQ(pod["volumes"].size(), 3u);
  EXPECT_EQ(pod["volumes"][0]["name"], "dshm");
  EXPECT_EQ(pod["volumes"][1]["csi"]["driver"], "gcsfuse.csi.storage.gke.io");
  EXPECT_EQ(pod["volumes"][1]["csi"]["volumeAttributes"]["bucketName"], "my-training-data");
  EXPECT_EQ(pod["volumes"][2]["persistentVolumeClaim"]["claimName"], "maxtext-checkpoints");
  ASSERT_EQ(pod["containers"].size(), 2u);  // parallel containers: both get them
  for (const auto& c : pod["containers"]) {
    EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/dev/shm");
    EXPECT_EQ(c["volumeMounts"][1],
              json({{"name", "gcs-data"}, {"mountPath", "/data"}, {"readOnly", true}}));
    EXPECT_EQ(c["volumeMounts"][2], json({{"name", "checkpoints"}, {"mountPath", "/checkpoints"}}));
    EXPECT_EQ(c["resources"]["claims"], json::parse(R"([{"name":"tpu-nics"}])"));
    EXPECT_EQ(c["resources"]["limits"]["google.com/tpu"], 2);
    EXPECT_EQ(env_value(c, "LIBTPU_INIT_ARGS"), "--xla_tpu_enable_async_collective_fusion=true");
  }
  // The schema check sees the extensions: a claim without its source is refused.
  json broken = js;
  broken["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["volumes"][1]["csi"]
      .erase("driver");
  EXPECT_FALSE(jobset_schema().validate(broken).empty());
  // A node selector Podium sets cannot be replaced, even by a request built by hand.
  r.executor.pod.node_selector["cloud.google.com/gke-tpu-accelerator"] = "tpu-v6e-slice";
  EXPECT_THROW(build_jobset(r), std::invalid_argument);
}

TEST(JobSetManifest, TheSchemaCheckCanFail) {
  const json js = build_jobset(request("v6e-16", 2));
  ASSERT_TRUE(jobset_schema().validate(js).empty());
  auto errors_of = [](const json& j) { return jobset_schema().validate(j); };
  auto mentions = [](const std::vector<std::string>& errors, const std::string& what) {
    for (const auto& e : errors)
      if (e.find(what) != std::string::npos) return true;
    return false;
  };

  json wrong_type = js;
  wrong_type["spec"]["replicatedJobs"][0]["replicas"] = "two";
  auto errors = errors_of(wrong_type);
  EXPECT_TRUE(mentions(errors, ".spec.replicatedJobs[0].replicas: must be of type integer"))
      << ::testing::PrintToString(errors);

  json unknown = js;
  unknown["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelizm"] = 4;
  errors = errors_of(unknown);
  EXPECT_TRUE(mentions(errors, "parallelizm: unknown field")) << ::testing::PrintToString(errors);

  json unknown_top = js;
  unknown_top["spec"]["maxRestarts"] = 0;  // belongs under failurePolicy
  EXPECT_TRUE(mentions(errors_of(unknown_top), ".spec.maxRestarts: unknown field"));

  json deep = js;
  deep["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
      ["imagePullPolicy"] = 7;
  EXPECT_TRUE(mentions(errors_of(deep), "imagePullPolicy: must be of type string"));

  json missing = js;
  missing["spec"]["replicatedJobs"][0].erase("name");
  EXPECT_TRUE(mentions(errors_of(missing), "required field name is missing"));

  json bad_enum = js;
  bad_enum["spec"]["failurePolicy"]["restartStrategy"] = "Restart";
  EXPECT_TRUE(mentions(errors_of(bad_enum),
                       ".spec.failurePolicy.restartStrategy: \"Restart\" is not one of"))
      << ::testing::PrintToString(errors_of(bad_enum));

  json bad_quantity = js;
  bad_quantity["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
              ["resources"]["limits"]["google.com/tpu"] = "four";
  EXPECT_FALSE(errors_of(bad_quantity).empty());

  json duplicate_env = js;
  auto& env = duplicate_env["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
                           ["containers"][0]["env"];
  env.push_back(env[0]);
  EXPECT_TRUE(mentions(errors_of(duplicate_env), "duplicate entry"))
      << ::testing::PrintToString(errors_of(duplicate_env));

  json bad_label = js;
  bad_label["metadata"]["labels"]["podium.dev/run"] = 42;
  EXPECT_TRUE(mentions(errors_of(bad_label), ".metadata.labels.podium.dev/run"));

  json bad_meta = js;
  bad_meta["metadata"]["lables"] = json::object();
  EXPECT_TRUE(mentions(errors_of(bad_meta), ".metadata.lables: unknown field"));
}

TEST(JobSetManifest, YamlQuotesWhatWouldChangeType) {
  // Each of these read plain would be a boolean, null, number, timestamp, or a syntax error
  // under YAML 1.1 (kubectl's go-yaml) or 1.2.
  for (const char* s :
       {"true",      "False",      "yes",   "No",
        "on",        "OFF",        "y",     "N",
        "null",      "~",          "",      "0",
        "1.5",       "-1",         "+1",    "0x1F",
        "0o17",      "1_000",      "1e3",   ".inf",
        ".NaN",      "2026-11-24", "12:30", "a: b",
        "key:",      "#c",         "x #y",  "- x",
        "-",         "?",          "[a]",   "{a}",
        "*ref",      "&anchor",    "!tag",  "|",
        ">",         "%x",         "@x",    "`x",
        "'x'",       "\"x\"",      " lead", "trail ",
        "two words", "<<",         "=",     "metadata.labels['jobset.sigs.k8s.io/job-index']"}) {
    SCOPED_TRACE(s);
    const std::string yaml = to_yaml(json{{"k", s}});
    EXPECT_EQ(yaml.substr(0, 4), "k: \"") << yaml;
    EXPECT_EQ(yaml_to_json(YAML::Load(yaml)), json({{"k", s}})) << yaml;
  }
  for (const char* s : {"Never", "slice-job", "jobset.x-k8s.io/v1alpha2", "/usr/local/bin/w",
                        "tpu-v6e-slice", "tpu7x", "ClusterFirstWithHostNet", "_x", "a.b-c_d"}) {
    SCOPED_TRACE(s);
    EXPECT_EQ(to_yaml(json{{"k", s}}), std::string("k: ") + s + "\n");
  }
}

TEST(JobSetManifest, YamlEscapesAndStructure) {
  const json v = {
      {"multi", "line one\nline two\ttab \"quoted\" back\\slash"},
      {"unicode", "h\xC3\xA9llo \xE2\x9C\x93"},
      {"controls", std::string("a\x01z\x7F", 4)},
      {"empty_object", json::object()},
      {"empty_array", json::array()},
      {"numbers", {0, -7, 1.5, 1e100}},
      {"nested", {{"list", {{{"a", 1}, {"b", {{"c", json::array({"x", "y"})}}}}, {"z", true}}}}},
      {"arrays", json::array({json::array({1, 2}), json::array(), json::object()})},
      {"keys", {{"true", 1}, {"a: b", 2}, {"google.com/tpu", 3}, {"", 4}}},
      {"null", nullptr},
  };
  const std::string yaml = to_yaml(v);
  EXPECT_EQ(yaml_to_json(YAML::Load(yaml)), v) << yaml;
  // Invalid UTF-8 becomes U+FFFD instead of breaking the document.
  EXPECT_EQ(yaml_to_json(YAML::Load(to_yaml(json{{"k", std::string("a\xFFz")}}))),
            json({{"k", "a\xEF\xBF\xBDz"}}));
  EXPECT_EQ(to_yaml(json("plain")), "plain\n");
  EXPECT_EQ(to_yaml(json::array()), "[]\n");
  EXPECT_EQ(to_yaml(json{{"a", {{"b", json::array({{{"c", 1}, {"d", 2}}})}}}}),
            "a:\n  b:\n  - c: 1\n    d: 2\n");
}

// The validator on small hand-written schemas.

StructuralSchema schema_of(const char* text) {
  return StructuralSchema(json::parse(text));
}

TEST(StructuralSchema, TypesRequiredAndUnknownFields) {
  const auto s = schema_of(R"({"type":"object","required":["n"],"properties":{
      "n":{"type":"integer"},"x":{"type":"number"},"s":{"type":"string"},
      "b":{"type":"boolean"},"a":{"type":"array","items":{"type":"string"}},
      "o":{"type":"object","properties":{"k":{"type":"string"}}}}})");
  EXPECT_TRUE(s.validate(json::parse(R"({"n":1,"x":1.5,"s":"t","b":false,"a":["q"],
      "o":{"k":"v"}})"))
                  .empty());
  EXPECT_TRUE(s.validate(json::parse(R"({"n":1,"x":2})")).empty());  // an integer is a number
  EXPECT_EQ(s.validate(json::parse(R"({"n":1.5})")),
            std::vector<std::string>{".n: must be of type integer, not number"});
  EXPECT_EQ(s.validate(json::parse(R"({})")),
            std::vector<std::string>{"<root>: required field n is missing"});
  EXPECT_EQ(s.validate(json::parse(R"({"n":1,"a":["q",2]})")),
            std::vector<std::string>{".a[1]: must be of type string, not number"});
  EXPECT_EQ(s.validate(json::parse(R"({"n":1,"o":{"k":"v","j":1}})")),
            std::vector<std::string>{".o.j: unknown field"});
  EXPECT_EQ(s.validate(json::parse(R"({"n":null})")),
            std::vector<std::string>{".n: null is not allowed"});
  EXPECT_EQ(s.validate(json::parse(R"([1])")),
            std::vector<std::string>{"<root>: must be of type object, not array"});
}

TEST(StructuralSchema, MapsPreservedFieldsAndObjectsWithoutProperties) {
  const auto s = schema_of(R"({"type":"object","properties":{
      "labels":{"type":"object","additionalProperties":{"type":"string"}},
      "closed":{"type":"object","additionalProperties":false},
      "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
      "bare":{"type":"object"}}})");
  EXPECT_TRUE(s.validate(json::parse(R"({"labels":{"a":"b"},"closed":{},
      "free":{"anything":[1,{"x":null}]},"bare":{}})"))
                  .empty());
  EXPECT_EQ(s.validate(json::parse(R"({"labels":{"a":1}})")),
            std::vector<std::string>{".labels.a: must be of type string, not number"});
  EXPECT_EQ(s.validate(json::parse(R"({"closed":{"a":1}})")),
            std::vector<std::string>{".closed.a: unknown field"});
  // Without properties and without preserve-unknown-fields the server prunes every field.
  EXPECT_EQ(s.validate(json::parse(R"({"bare":{"a":1}})")),
            std::vector<std::string>{".bare.a: unknown field"});
}

TEST(StructuralSchema, IntOrStringEnumFormatsAndPatterns) {
  const auto s = schema_of(R"({"type":"object","properties":{
      "q":{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true,
           "pattern":"^[0-9]+(Gi|Mi)?$"},
      "e":{"type":"string","enum":["Indexed","NonIndexed"]},
      "i32":{"type":"integer","format":"int32"},
      "i64":{"type":"integer","format":"int64","minimum":0},
      "name":{"type":"string","maxLength":5}}})");
  EXPECT_TRUE(s.validate(json::parse(R"({"q":4,"e":"Indexed","i32":2147483647,
      "i64":4294967296,"name":"abc"})"))
                  .empty());
  EXPECT_TRUE(s.validate(json::parse(R"({"q":"16Gi"})")).empty());
  EXPECT_FALSE(s.validate(json::parse(R"({"q":"lots"})")).empty());
  EXPECT_FALSE(s.validate(json::parse(R"({"q":true})")).empty());
  EXPECT_FALSE(s.validate(json::parse(R"({"e":"indexed"})")).empty());
  EXPECT_FALSE(s.validate(json::parse(R"({"i32":2147483648})")).empty());
  EXPECT_FALSE(s.validate(json::parse(R"({"i64":-1})")).empty());
  EXPECT_FALSE(s.validate(json::parse(R"({"i64":18446744073709551615})")).empty());
  EXPECT_FALSE(s.validate(json::parse(R"({"name":"abcdef"})")).empty());
}

TEST(StructuralSchema, ListTypes) {
  const auto s = schema_of(R"({"type":"object","properties":{
      "env":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
             "items":{"type":"object","required":["name"],"properties":{
               "name":{"type":"string"},"value":{"type":"string"}}}},
      "ports":{"type":"array","x-kubernetes-list-type":"map",
               "x-kubernetes-list-map-keys":["port","protocol"],
               "items":{"type":"object","properties":{"port":{"type":"integer"},
                 "protocol":{"type":"string","default":"TCP"}}}},
      "codes":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"integer"}}}})");
  EXPECT_TRUE(s.validate(json::parse(R"({"env":[{"name":"A"},{"name":"B","value":"x"}],
      "ports":[{"port":80},{"port":80,"protocol":"UDP"}],"codes":[1,2]})"))
                  .empty());
  EXPECT_FALSE(
      s.validate(json::parse(R"({"env":[{"name":"A"},{"name":"A","value":"x"}]})")).empty());
  EXPECT_FALSE(
      s.validate(json::parse(R"({"ports":[{"port":80},{"port":80,"protocol":"TCP"}]})")).empty());
  EXPECT_FALSE(s.validate(json::parse(R"({"codes":[1,1]})")).empty());
}

TEST(StructuralSchema, TheVendoredCrdIsTheJobSetOne) {
  const json& crd = jobset_crd();
  EXPECT_EQ(crd["kind"], "CustomResourceDefinition");
  EXPECT_EQ(crd["spec"]["group"], "jobset.x-k8s.io");
  EXPECT_EQ(crd["spec"]["names"]["kind"], "JobSet");
  // The server validates the root metadata as ObjectMeta; the CRD leaves it a bare object.
  EXPECT_TRUE(jobset_schema()
                  .validate(json::parse(R"({"apiVersion":"jobset.x-k8s.io/v1alpha2",
                      "kind":"JobSet","metadata":{"name":"x","labels":{"a":"b"}},
                      "spec":{"replicatedJobs":[]}})"))
                  .empty());
}

}  // namespace
}  // namespace podium::core
