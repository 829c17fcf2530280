// The Kubernetes executor with xpk's parallel containers, end to end through the real server with
// a fake `kubectl` on its PATH (apply records the objects it was given; get answers a JobSet that
// runs and no pods; delete succeeds). A tpu7x-64 x 2 run: the JobSet applied has two containers
// per pod, the attempt's gang counts containers (32 ranks, not 16 VMs), and the ranks that join
// get the JAX environment of a 32-process gang.

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "tests/integration/support/fake_kubectl.h"
#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

FakeKubectl& fake() {
  static FakeKubectl f;
  return f;
}

class KubernetesAttach : public PodiumTest {
 protected:
  Podium::Options options() const override {
    Podium::Options o;
    o.env = {{"PATH", fake().path_env()}};
    return o;
  }
};

json join(int rank, int slice, int host, const std::string& address) {
  return {{"engine", "kubernetes"},
          {"rank", rank},
          {"world", 32},
          {"slice", slice},
          {"host", host},
          {"address", address},
          {"hostname", "pod" + std::to_string(rank)}};
}

TEST_F(KubernetesAttach, Tpu7x64TimesTwoRunsTwoRanksPerVm) {
  auto admin = podium().admin();
  const std::string cluster = unique_name("gke");
  podium().create_cluster(
      cluster, "tpu7x-64",
      {{"num_slices", 2},
       {"executor", {{"kind", "kubernetes"}, {"queue", "multislice-queue"}, {"image", "img:1"}}}});
  auto run = podium().submit_run(admin, cluster);
  const std::string id = run["id"];

  // Submitted: the attempt's gang is 2 slices x 8 VMs x 2 containers.
  json attempt;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto a = admin.get("/api/v1/runs/" + id + "/attempts");
    if (a.status == 200 && !a.json["items"].empty() && a.json["items"][0]["engine"].is_object() &&
        a.json["items"][0]["engine"]["job_id"].is_string()) {
      attempt = a.json["items"][0];
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(attempt.is_object()) << "never applied with the fake kubectl";
  EXPECT_EQ(attempt["world_size"], 32) << attempt;
  EXPECT_EQ(attempt["executor"], "kubernetes");

  // `podium runs manifest`: what kubectl applied, two containers per pod.
  auto m = admin.get("/api/v1/runs/" + id + "/manifest");
  ASSERT_EQ(m.status, 200) << m;
  const std::string manifest = m.json["manifest"];
  EXPECT_NE(manifest.find(" name: jax-tpu-1\n"), std::string::npos) << manifest;
  EXPECT_NE(manifest.find(" name: jax-tpu-2\n"), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("google.com/tpu: 2\n"), std::string::npos) << manifest;
  const std::string applied = fake().applied();
  EXPECT_NE(applied.find(" name: jax-tpu-2\n"), std::string::npos) << applied;

  // The token is in the Secret kubectl applied.
  const auto at = applied.find("token: pda_");
  ASSERT_NE(at, std::string::npos) << applied;
  const std::string token =
      applied.substr(at + 7, applied.find('\n', at) - at - 7);  // after "token: "
  auto rank = podium().as(token);

  // Rank 32 does not exist; rank 31 is slice 1's 16th process.
  EXPECT_EQ(rank.post("/api/v1/agent/attach", join(32, 2, 0, "10.2.0.1")).status, 422);
  json last;
  for (int r = 0; r < 32; ++r) {
    const int slice = r / 16;
    const int process = r % 16;
    // Two containers per VM share its address (host networking).
    const std::string address = "10.2." + std::to_string(slice) + "." + std::to_string(process / 2);
    auto reply = rank.post("/api/v1/agent/attach", join(r, slice, process, address));
    ASSERT_EQ(reply.status, r < 31 ? 202 : 200) << r << ": " << reply;
    if (r == 31) last = reply.json;
  }
  const auto& env = last["env"];
  EXPECT_EQ(last["rank"], 31);
  EXPECT_EQ(env["JAX_PROCESS_COUNT"], "32") << env;
  EXPECT_EQ(env["JAX_PROCESS_ID"], "31") << env;
  EXPECT_EQ(env["TPU_WORKER_ID"], "15") << env;
  EXPECT_EQ(env["MEGASCALE_SLICE_ID"], "1") << env;
  EXPECT_EQ(env["MEGASCALE_NUM_SLICES"], "2") << env;
  EXPECT_EQ(env["JAX_COORDINATOR_ADDRESS"].get<std::string>().rfind("10.2.0.0:", 0), 0u) << env;
  // The slice's 16 processes, each VM twice.
  EXPECT_EQ(env["TPU_WORKER_HOSTNAMES"],
            "10.2.1.0,10.2.1.0,10.2.1.1,10.2.1.1,10.2.1.2,10.2.1.2,10.2.1.3,10.2.1.3,"
            "10.2.1.4,10.2.1.4,10.2.1.5,10.2.1.5,10.2.1.6,10.2.1.6,10.2.1.7,10.2.1.7")
      << env;
  // 4 of the VM's 8 JAX devices (2 chips of tpu7x, 2 devices each) per rank.
  EXPECT_EQ(env["GPUS_PER_NODE"], "4") << env;

  const int cancelled = admin.post("/api/v1/runs/" + id + "/cancel", json::object()).status;
  EXPECT_TRUE(cancelled == 200 || cancelled == 202) << cancelled;
}

}  // namespace
}  // namespace podium::it
