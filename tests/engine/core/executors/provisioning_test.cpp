// Provisioning commands: pasteable when the cluster's fields are set (no shell variable left),
// honest about what is missing otherwise, with a teardown for every path.
#include "engine/core/executors/provisioning.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

namespace podium::core {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

AcceleratorType accel(const std::string& name) {
  auto parsed = parse_accelerator(name);
  EXPECT_TRUE(parsed.value) << name;
  return *parsed.value;
}

ProvisioningRequest complete(const std::string& accelerator, const std::string& capacity) {
  ProvisioningRequest r;
  r.cluster = "train-a";
  r.accelerator = accel(accelerator);
  r.num_slices = 2;
  r.capacity = capacity;
  r.zone = "us-central1-c";
  r.project = "my-project-1";
  r.reservation = "res-1";
  r.network = "tpu-net";
  r.server_url = "https://podium.example.com";
  r.image = "us-docker.pkg.dev/my-project-1/train/maxtext:2026-11";
  return r;
}

const ProvisioningOption* option(const std::vector<ProvisioningOption>& all,
                                 const std::string& method) {
  for (const auto& o : all)
    if (o.method == method) return &o;
  return nullptr;
}

// A shell variable the user would have to set: $NAME or ${NAME} (not $( ... )).
bool has_placeholder(const std::string& s) {
  static const std::regex var(R"(\$\{?[A-Z_][A-Z0-9_]*)");
  return std::regex_search(s, var);
}

TEST(ProvisioningTest, EveryAcceleratorFamilyIsPasteableWhenTheFieldsAreSet) {
  for (const char* a : {"v5e-16", "v5p-128", "v6e-16", "tpu7x-64", "tpu7x-8", "h100-16", "cpu-2"}) {
    for (const char* capacity : {"spot", "on-demand", "reservation", "flex"}) {
      const auto options = provisioning_commands(complete(a, capacity));
      ASSERT_FALSE(options.empty()) << a;
      for (const auto& o : options) {
        EXPECT_THAT(o.missing, IsEmpty()) << a << " " << capacity << " " << o.method;
        EXPECT_FALSE(o.commands.empty()) << a << " " << o.method;
        for (const auto& c : o.commands) EXPECT_FALSE(has_placeholder(c)) << a << ": " << c;
        for (const auto& c : o.teardown) EXPECT_FALSE(has_placeholder(c)) << a << ": " << c;
        if (o.method != "none") {
          EXPECT_FALSE(o.teardown.empty()) << a << " " << o.method;
        }
      }
    }
  }
}

TEST(ProvisioningTest, MissingFieldsStandAsVariablesAndAreListed) {
  ProvisioningRequest r = complete("v6e-16", "reservation");
  r.project.clear();
  r.reservation.clear();
  r.server_url.clear();
  const auto options = provisioning_commands(r);
  const auto* vm = option(options, "tpu-vm");
  ASSERT_NE(vm, nullptr);
  EXPECT_THAT(vm->commands[1], HasSubstr("--project $PROJECT"));
  ASSERT_EQ(vm->missing.size(), 3u);
  EXPECT_THAT(vm->missing[0], HasSubstr("project"));
  EXPECT_THAT(vm->missing[1], HasSubstr("reservation"));
  EXPECT_THAT(vm->missing[2], HasSubstr("public_url"));
  const auto* xpk = option(options, "xpk");
  ASSERT_NE(xpk, nullptr);
  EXPECT_THAT(xpk->commands[0], HasSubstr("--reservation $RESERVATION"));
  // The workload goes first, then the cluster.
  EXPECT_THAT(xpk->teardown.back(),
              HasSubstr("xpk cluster delete --cluster train-a --project $PROJECT"));
}

TEST(ProvisioningTest, BareVmsUseTheFamilysRuntimeAndTheCapacitysFlag) {
  auto vm = *option(provisioning_commands(complete("v6e-16", "spot")), "tpu-vm");
  // The token once, then per slice: create, wait until ACTIVE, copy, install.
  ASSERT_EQ(vm.commands.size(), 9u);
  EXPECT_EQ(vm.commands[0],
            "(umask 077 && podium clusters worker-token train-a > train-a.worker-token)");
  EXPECT_THAT(vm.commands[1], HasSubstr("--runtime-version v2-alpha-tpuv6e"));
  EXPECT_THAT(vm.commands[1], HasSubstr("--accelerator-type v6e-16"));
  EXPECT_THAT(vm.commands[1], HasSubstr("--network tpu-net"));
  EXPECT_THAT(vm.commands[1], HasSubstr(" --spot"));
  EXPECT_THAT(vm.commands[4], HasSubstr("--server https://podium.example.com"));
  EXPECT_THAT(vm.commands[4], HasSubstr("--slice 0"));
  EXPECT_THAT(vm.commands[8], HasSubstr("--slice 1"));
  EXPECT_THAT(vm.teardown,
              Contains("gcloud compute tpus queued-resources delete train-a-s1 --project "
                       "my-project-1 --zone us-central1-c --force --quiet"));
  EXPECT_EQ(vm.teardown.back(), "rm -f train-a.worker-token");

  vm = *option(provisioning_commands(complete("v5e-16", "flex")), "tpu-vm");
  EXPECT_THAT(vm.commands[1], HasSubstr("--runtime-version v2-alpha-tpuv5-lite"));
  EXPECT_THAT(vm.commands[1], HasSubstr(" --best-effort"));
  EXPECT_THAT(vm.commands[1], ::testing::Not(HasSubstr("--spot")));
  vm = *option(provisioning_commands(complete("v5p-128", "reservation")), "tpu-vm");
  EXPECT_THAT(vm.commands[1], HasSubstr("--runtime-version v2-alpha-tpuv5 "));
  EXPECT_THAT(vm.commands[1], HasSubstr(" --reserved"));
}

// Hosts that onboard themselves: after the queued resource is ACTIVE, every worker of the slice
// gets the binary and the token, and `podium-worker install` makes the agent a systemd unit.
TEST(ProvisioningTest, BareVmsWaitUntilActiveThenInstallTheAgentOnEveryWorker) {
  const auto vm = *option(provisioning_commands(complete("v6e-16", "on-demand")), "tpu-vm");
  for (int slice = 0; slice < 2; ++slice) {
    SCOPED_TRACE(slice);
    const std::string name = "train-a-s" + std::to_string(slice);
    const size_t at = 1 + 4 * static_cast<size_t>(slice);
    EXPECT_THAT(vm.commands[at], HasSubstr("queued-resources create " + name));
    // The wait: polls the state until ACTIVE, stops on FAILED or SUSPENDED.
    const std::string& wait = vm.commands[at + 1];
    EXPECT_THAT(wait, HasSubstr("gcloud compute tpus queued-resources describe " + name +
                                " --project my-project-1 --zone us-central1-c "
                                "--format='value(state.state)'"));
    EXPECT_THAT(wait, HasSubstr("ACTIVE) exit 0;;"));
    EXPECT_THAT(wait, HasSubstr("FAILED|SUSPENDED)"));
    EXPECT_THAT(wait, HasSubstr("sleep 30"));
    EXPECT_THAT(vm.commands[at + 2],
                HasSubstr("gcloud compute tpus tpu-vm scp \"$(command -v podium-worker)\" "
                          "train-a.worker-token " +
                          name + ": --project my-project-1 --zone us-central1-c --worker=all"));
    const std::string& install = vm.commands[at + 3];
    EXPECT_THAT(install, HasSubstr("gcloud compute tpus tpu-vm ssh " + name));
    EXPECT_THAT(install, HasSubstr("--worker=all --command "));
    EXPECT_THAT(install, HasSubstr("sudo ./podium-worker install --server "
                                   "https://podium.example.com --cluster train-a --slice " +
                                   std::to_string(slice)));
    EXPECT_THAT(install, HasSubstr("agent-worker-number"));
    EXPECT_THAT(install, HasSubstr("--token-file train-a.worker-token && rm -f "
                                   "train-a.worker-token podium-worker"));
    EXPECT_THAT(install, ::testing::Not(HasSubstr("pdw_")));  // the token is never an argument
    EXPECT_FALSE(has_placeholder(wait)) << wait;
    EXPECT_FALSE(has_placeholder(install)) << install;
  }
}

TEST(ProvisioningTest, Tpu7xHasNodePoolsAndNoCloudTpuApiPath) {
  const auto options = provisioning_commands(complete("tpu7x-64", "spot"));
  EXPECT_EQ(option(options, "tpu-vm"), nullptr);
  const auto* pool = option(options, "gke-node-pool");
  ASSERT_NE(pool, nullptr);
  EXPECT_THAT(pool->commands[0],
              HasSubstr("workload-policies create tpu7x-64-2x4x4-placement-policy --project "
                        "my-project-1 --region us-central1 --type=HIGH_THROUGHPUT "
                        "--accelerator-topology=2x4x4"));
  ASSERT_EQ(pool->commands.size(), 3u);  // the policy, one pool per slice
  EXPECT_THAT(pool->commands[1], HasSubstr("--machine-type tpu7x-standard-4t --num-nodes 8"));
  EXPECT_THAT(pool->commands[1], HasSubstr(" --spot"));
  ASSERT_EQ(pool->teardown.size(), 3u);
  EXPECT_THAT(pool->teardown.back(), HasSubstr("workload-policies delete"));
  const auto* xpk = option(options, "xpk");
  ASSERT_NE(xpk, nullptr);
  EXPECT_THAT(xpk->notes, Contains(HasSubstr("Cloud TPU API")));
}

TEST(ProvisioningTest, GpuNodesThroughXpkCountNodes) {
  const auto options = provisioning_commands(complete("h100-16", "on-demand"));
  ASSERT_EQ(options.size(), 2u);
  EXPECT_THAT(options[0].commands[0],
              HasSubstr("--device-type h100-mega-80gb-8 --num-nodes 4 --on-demand"));
  // The agents as an xpk workload: node n of the 4 is slice n / 2, host n % 2.
  ASSERT_EQ(options[0].commands.size(), 2u);
  EXPECT_THAT(options[0].commands[1],
              HasSubstr("xpk workload create --cluster train-a --project my-project-1 --zone "
                        "us-central1-c --workload podium-agents-train-a --device-type "
                        "h100-mega-80gb-8 --num-nodes 4 --docker-image "
                        "us-docker.pkg.dev/my-project-1/train/maxtext:2026-11 --command "));
  EXPECT_THAT(options[0].commands[1],
              HasSubstr("--slice $((NODE_RANK / 2)) --host $((NODE_RANK % 2))"));
  ASSERT_EQ(options[0].teardown.size(), 2u);
  EXPECT_EQ(options[0].teardown[0],
            "xpk workload delete --cluster train-a --project my-project-1 --zone us-central1-c "
            "--workload podium-agents-train-a");
}

TEST(ProvisioningTest, XpkRunsTheTpuAgentsAsAWorkloadWithShortNames) {
  auto r = complete("v6e-16", "spot");
  r.cluster = "a-very-long-cluster-name-for-the-pretraining-team";
  const auto options = provisioning_commands(r);
  const auto* xpk = option(options, "xpk");
  ASSERT_NE(xpk, nullptr);
  ASSERT_EQ(xpk->commands.size(), 2u);
  EXPECT_THAT(xpk->commands[1], HasSubstr("--tpu-type v6e-16 --num-slices 2 --docker-image "));
  EXPECT_THAT(xpk->commands[1],
              HasSubstr("--slice $((MEGASCALE_SLICE_ID)) --host $((JOB_COMPLETION_INDEX))"));
  // The container starts as root: the agent is told whom ranks run as, or it refuses to start.
  EXPECT_THAT(xpk->commands[1], HasSubstr("--run-as root"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(xpk->commands[1], m, std::regex("--workload ([^ ]+)")));
  EXPECT_LE(m[1].str().size(), 40u);
  EXPECT_TRUE(std::regex_match(m[1].str(), std::regex("[a-z0-9]([-a-z0-9]*[a-z0-9])?")));
  r.image.clear();
  const auto without_image = provisioning_commands(r);
  const auto* missing = option(without_image, "xpk");
  ASSERT_NE(missing, nullptr);
  EXPECT_THAT(missing->missing, Contains(HasSubstr("image:")));
  EXPECT_THAT(missing->commands[1], HasSubstr("--docker-image $IMAGE"));
}

TEST(ProvisioningTest, GpuNodesAsAVertexCustomJobWithOnePrimaryReplica) {
  for (const char* capacity : {"spot", "flex", "on-demand", "reservation"}) {
    SCOPED_TRACE(capacity);
    const auto options = provisioning_commands(complete("h100-16", capacity));
    const auto* vertex = option(options, "vertex");
    ASSERT_NE(vertex, nullptr);
    ASSERT_EQ(vertex->commands.size(), 2u);
    // The job spec is written by a quoted heredoc and read by gcloud.
    const std::string& cat = vertex->commands[0];
    ASSERT_THAT(cat, HasSubstr("<<'JSON'\n"));
    const auto begin = cat.find('\n') + 1;
    const auto end = cat.rfind("\nJSON");
    const auto spec = nlohmann::json::parse(cat.substr(begin, end - begin));
    const auto& pools = spec["workerPoolSpecs"];
    ASSERT_EQ(pools.size(), 2u);
    EXPECT_EQ(pools[0]["replicaCount"], 1);
    EXPECT_EQ(pools[1]["replicaCount"], 3);  // 4 nodes
    EXPECT_EQ(pools[0]["machineSpec"]["machineType"], "a3-megagpu-8g");
    EXPECT_EQ(pools[0]["machineSpec"]["acceleratorType"], "NVIDIA_H100_MEGA_80GB");
    EXPECT_EQ(pools[0]["machineSpec"]["acceleratorCount"], 8);
    EXPECT_EQ(pools[0]["containerSpec"]["imageUri"],
              "us-docker.pkg.dev/my-project-1/train/maxtext:2026-11");
    const std::string script = pools[1]["containerSpec"]["command"][2];
    EXPECT_THAT(script, HasSubstr("CLUSTER_SPEC"));
    EXPECT_THAT(script, HasSubstr("--slice $((R / 2)) --host $((R % 2))"));
    EXPECT_THAT(script, HasSubstr("--run-as root"));
    const std::string strategy = spec["scheduling"]["strategy"];
    EXPECT_EQ(strategy, std::string(capacity) == "spot"   ? "SPOT"
                        : std::string(capacity) == "flex" ? "FLEX_START"
                                                          : "STANDARD");
    if (std::string(capacity) == "reservation") {
      EXPECT_EQ(pools[0]["machineSpec"]["reservationAffinity"]["values"][0],
                "projects/my-project-1/zones/us-central1-c/reservations/res-1");
    }
    EXPECT_THAT(vertex->commands[1],
                HasSubstr("gcloud ai custom-jobs create --project my-project-1 --region "
                          "us-central1 --display-name podium-agents-train-a --config "
                          "podium-train-a-vertex.json"));
    ASSERT_EQ(vertex->teardown.size(), 1u);
    EXPECT_THAT(vertex->teardown[0], HasSubstr("gcloud ai custom-jobs cancel"));
  }
  // One node: pool 0 only.
  auto one = complete("h100-8", "on-demand");
  one.num_slices = 1;
  const auto single_node = provisioning_commands(one);
  const auto* single = option(single_node, "vertex");
  ASSERT_NE(single, nullptr);
  const auto& cat = single->commands[0];
  const auto spec = nlohmann::json::parse(
      cat.substr(cat.find('\n') + 1, cat.rfind("\nJSON") - cat.find('\n') - 1));
  EXPECT_EQ(spec["workerPoolSpecs"].size(), 1u);
}

TEST(ProvisioningTest, ValuesAreQuotedForTheShell) {
  EXPECT_EQ(shell_quote("us-central1-c"), "us-central1-c");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("$(rm -rf /)"), "'$(rm -rf /)'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(ProvisioningTest, GcpFieldChecks) {
  EXPECT_FALSE(check_gcp_project("my-project-1"));
  EXPECT_TRUE(check_gcp_project("My-Project"));
  EXPECT_TRUE(check_gcp_project("short"));
  EXPECT_TRUE(check_gcp_project("ends-with-"));
  EXPECT_TRUE(check_gcp_project("p; rm -rf /"));
  EXPECT_FALSE(check_gcp_resource_name("tpu-net"));
  EXPECT_TRUE(check_gcp_resource_name("9net"));
  EXPECT_FALSE(check_gcp_reservation("res-1"));
  EXPECT_FALSE(check_gcp_reservation("projects/other-project/reservations/res-1"));
  EXPECT_TRUE(check_gcp_reservation("projects/x/reservations/res-1"));
  EXPECT_TRUE(check_gcp_reservation("res 1"));
}

}  // namespace
}  // namespace podium::core
