#include "backend/sched/executors/kubernetes_executor.h"

#include <gtest/gtest.h>

#include "tests/backend/sched/executors/fake_command_runner.h"

namespace podium::sched {
namespace {

EngineJobSpec spec() {
  EngineJobSpec s;
  s.run_id = "run_9f2c";
  s.attempt_id = "att_1";
  s.attempt_number = 3;
  s.executor.kind = core::ExecutorKind::kubernetes;
  s.executor.kubernetes.context = "gke_p_z_c";
  s.executor.kubernetes.namespace_name = "training";
  s.executor.kubernetes.queue = "multislice-queue";
  s.accelerator = *core::parse_accelerator("v6e-16").value;
  s.num_slices = 2;
  s.image = "img:1";
  s.server_url = "https://podium.example.com";
  return s;
}

TEST(KubernetesEngine, AppliesTheSecretAndTheJobSetWithTheClustersContext) {
  auto runner = std::make_shared<FakeRunner>();
  KubernetesEngine engine(runner, {{"PATH", "/usr/bin"}, {"KUBECONFIG", "/k"}});
  auto out = engine.submit(spec(), "pda_tok");
  ASSERT_TRUE(out.job_id) << out.error;
  EXPECT_EQ(*out.job_id, "podium-9f2c-3");
  const auto& call = runner->calls.at(0);
  EXPECT_EQ(call.argv, (std::vector<std::string>{"kubectl", "--context=gke_p_z_c",
                                                 "--namespace=training", "apply", "--server-side",
                                                 "--field-manager=podium", "-f", "-"}));
  EXPECT_EQ(call.env.at("KUBECONFIG"), "/k");
  EXPECT_NE(call.stdin_text.find("kind: Secret\n"), std::string::npos);
  EXPECT_NE(call.stdin_text.find("kind: JobSet\n"), std::string::npos);
  EXPECT_NE(call.stdin_text.find("pda_tok"), std::string::npos);  // in the Secret only
  EXPECT_EQ(out.manifest.find("pda_tok"), std::string::npos);
  for (const auto& a : call.argv) EXPECT_EQ(a.find("pda_tok"), std::string::npos);
}

TEST(KubernetesEngine, ObserveReadsTheJobSetAndItsPods) {
  auto runner = std::make_shared<FakeRunner>();
  runner->answers = {CommandResult{true, false, 0, 0,
                                   R"({"spec":{"suspend":true},"status":{"conditions":[]}})", ""},
                     CommandResult{true, false, 0, 0, R"({"items":[]})", ""}};
  KubernetesEngine engine(runner, {});
  auto o = engine.observe(spec(), "podium-9f2c-3", false);
  ASSERT_TRUE(o.observation) << o.error;
  EXPECT_EQ(o.observation->phase, core::EngineObservation::Phase::queued);
  EXPECT_EQ(runner->calls[1].argv[6], "jobset.sigs.k8s.io/jobset-name=podium-9f2c-3");
  // Gone: --ignore-not-found prints nothing.
  runner->answers = {CommandResult{true, false, 0, 0, "", ""},
                     CommandResult{true, false, 0, 0, R"({"items":[]})", ""}};
  auto gone = engine.observe(spec(), "podium-9f2c-3", false);
  ASSERT_TRUE(gone.observation);
  EXPECT_EQ(gone.observation->phase, core::EngineObservation::Phase::vanished);
  runner->answers = {CommandResult{true, false, 1, 0, "", "Unable to connect to the server"}};
  EXPECT_FALSE(engine.observe(spec(), "podium-9f2c-3", false).observation);
}

TEST(KubernetesEngine, CancelDeletesTheJobSetAndItsTokenSecret) {
  auto runner = std::make_shared<FakeRunner>();
  KubernetesEngine engine(runner, {});
  EXPECT_EQ(engine.cancel(spec(), "podium-9f2c-3"), "");
  ASSERT_EQ(runner->calls.size(), 2u);
  EXPECT_EQ(runner->calls[0].argv[3], "delete");
  EXPECT_EQ(runner->calls[0].argv[4], "jobset");
  EXPECT_EQ(runner->calls[1].argv[4], "secret");
  EXPECT_EQ(runner->calls[1].argv[5], "podium-9f2c-3-token");
  // Without a recorded name: the attempt's own.
  EXPECT_EQ(engine.cancel(spec(), ""), "");
  EXPECT_EQ(runner->calls[2].argv[5], "podium-9f2c-3");
}

TEST(KubernetesEngine, NamesAreDnsLabels) {
  auto s = spec();
  s.run_id = "run_ABCDEF0123456789abcdef0123456789abcdef";
  const auto name = KubernetesEngine::jobset_name(s);
  EXPECT_LE(name.size(), 40u);
  EXPECT_TRUE(core::is_dns_label(name)) << name;
}

// What `podium runs manifest` prints for a tpu7x-64 x 2 run (GET /runs/{id}/manifest asks the
// engine for this text): xpk's two containers per pod, one rank each, 2 chips each.
TEST(KubernetesEngine, ManifestOfTpu7x64TimesTwoHasTwoContainersPerPod) {
  auto s = spec();
  s.accelerator = *core::parse_accelerator("tpu7x-64").value;
  s.num_slices = 2;
  auto runner = std::make_shared<FakeRunner>();
  KubernetesEngine engine(runner, {});
  const std::string text = engine.manifest(s);
  EXPECT_TRUE(runner->calls.empty());  // printing the manifest runs nothing
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  // The pod template (one per slice-job) lists both containers, each in its failure rule too.
  EXPECT_EQ(count(" name: jax-tpu-1\n"), 1u) << text;
  EXPECT_EQ(count(" name: jax-tpu-2\n"), 1u) << text;
  EXPECT_EQ(count("containerName: jax-tpu-1\n"), 1u) << text;
  EXPECT_EQ(count("containerName: jax-tpu-2\n"), 1u) << text;
  EXPECT_EQ(count("google.com/tpu: 2\n"), 2u) << text;
  EXPECT_EQ(count(" name: jax-tpu\n"), 0u) << text;
  EXPECT_NE(text.find("replicas: 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("parallelism: 8\n"), std::string::npos) << text;
  EXPECT_NE(text.find("- name: PODIUM_RANKS_PER_HOST\n"), std::string::npos) << text;
  // The cluster turns them off: one container with the VM's 4 chips.
  s.executor.kubernetes.parallel_containers = false;
  const std::string single = engine.manifest(s);
  EXPECT_EQ(single.find("jax-tpu-1"), std::string::npos) << single;
  EXPECT_NE(single.find(" name: jax-tpu\n"), std::string::npos) << single;
  EXPECT_NE(single.find("google.com/tpu: 4\n"), std::string::npos) << single;
}

}  // namespace
}  // namespace podium::sched
