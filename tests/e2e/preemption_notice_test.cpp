// Issue 14 acceptance: a preemption notice from the hosts' metadata server (a local endpoint
// standing in for Compute Engine's) ends the attempt `preempted` with no restart spent; while the
// notice stands the hosts take no new ranks; when it is withdrawn the run resumes from its latest
// checkpoint and succeeds.
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "engine/client/http_client.h"
#include "engine/process/spawn.h"
#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

// Python's http.server over a directory laid out as the metadata server's instance tree:
// <root>/computeMetadata/v1/instance/{preempted,maintenance-event}.
class MetadataEndpoint {
 public:
  explicit MetadataEndpoint(const std::filesystem::path& root) : root_(root), port_(free_port()) {
    std::filesystem::create_directories(instance_dir());
    set("FALSE", "NONE");
    process::Spec spec;
    spec.argv = {"/usr/bin/python3", "-m",        "http.server", std::to_string(port_),
                 "--bind",           "127.0.0.1", "--directory", root_.string()};
    spec.group = process::Group::inherit;
    spec.out = spec.err = process::Stdio::inherit;
    auto spawned = process::spawn(spec);
    if (!spawned.child) throw std::runtime_error("the metadata endpoint: " + spawned.error);
    server_.emplace(std::move(*spawned.child));
    client::HttpClient probe(base());
    const bool up = eventually(
        [&] {
          auto r = probe.get("/computeMetadata/v1/instance/preempted");
          return r.ok() && r.response->status == 200;
        },
        20s, 100ms);
    if (!up) throw std::runtime_error("the metadata endpoint did not start");
  }
  ~MetadataEndpoint() {
    server_.reset();  // SIGKILL and reaped
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string instance_url() const { return base() + "/computeMetadata/v1/instance"; }
  void set(const std::string& preempted, const std::string& event) {
    write(instance_dir() / "preempted", preempted);
    write(instance_dir() / "maintenance-event", event);
  }

 private:
  std::filesystem::path instance_dir() const { return root_ / "computeMetadata/v1/instance"; }
  static void write(const std::filesystem::path& p, const std::string& text) {
    const auto tmp = p.string() + ".tmp";
    std::ofstream(tmp) << text;
    std::filesystem::rename(tmp, p);
  }
  std::filesystem::path root_;
  int port_;
  std::optional<process::Child> server_;
};

class PreemptionNotice : public E2eTest {
 protected:
  void SetUp() override {
    endpoint_ = std::make_unique<MetadataEndpoint>(std::filesystem::temp_directory_path() /
                                                   ("podium-metadata-" + it::unique_name("m")));
    E2eTest::SetUp();
  }
  void TearDown() override {
    E2eTest::TearDown();
    endpoint_.reset();
  }
  Settings settings() const override {
    return {.extra = {"scheduler.heartbeat_interval_seconds=1"},
            .worker_env = {{"PODIUM_METADATA_URL", endpoint_->instance_url()}}};
  }
  std::unique_ptr<MetadataEndpoint> endpoint_;
};

TEST_F(PreemptionNotice, EndsTheAttemptPreemptedAndResumesWhenTheNoticeIsWithdrawn) {
  const auto cluster = create_cluster("cpu-2", 1);
  start_workers(cluster, 1, 2);
  const json run = submit(reference_spec(unique_name("notice"), cluster, dataset(),
                                         {.steps = 60,
                                          .per_device_batch_size = 8,
                                          .max_target_length = 128,
                                          .checkpoint_period = 10,
                                          .max_restarts = 0}));
  const std::string id = run["id"];
  ASSERT_TRUE(wait_for_run(
      id, "running with a checkpoint saved",
      [&](const json& r) {
        return r.value("state", "") == "running" && !checkpoint_steps(id).empty();
      },
      240s))
      << diagnostics(id);

  // The platform announces the preemption; the agents report it in their next heartbeat.
  const auto noticed_at = std::chrono::steady_clock::now();
  endpoint_->set("TRUE", "NONE");
  json recovering;
  ASSERT_TRUE(wait_for_run(
      id, "attempt 1 ended",
      [&](const json&) {
        auto att = attempts(id);
        return !att.empty() && att[0].value("state", "") == "failed";
      },
      60s, &recovering))
      << diagnostics(id);
  const double seconds_to_end =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - noticed_at).count();
  auto att = attempts(id);
  EXPECT_EQ(att[0].value("failure_class", json()), json("preempted")) << describe_attempts(att);
  std::cout << "[ figures ] notice to attempt ended: " << seconds_to_end << " s\n";

  // While the notice stands, the hosts take no new ranks: no second attempt.
  std::this_thread::sleep_for(4s);
  att = attempts(id);
  EXPECT_EQ(att.size(), 1u) << describe_attempts(att);
  const json waiting = get_run(id);
  EXPECT_EQ(waiting.value("restarts", -1), 0) << waiting.dump();
  EXPECT_NE(waiting.value("state", ""), "failed") << waiting.dump();

  // Withdrawn (a restarted Spot VM): the run resumes from its latest checkpoint and succeeds.
  const std::vector<int> saved = checkpoint_steps(id);
  ASSERT_FALSE(saved.empty());
  endpoint_->set("FALSE", "NONE");
  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 300s, &done)) << diagnostics(id);
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump();
  EXPECT_EQ(done.value("recoveries", -1), 1) << done.dump();
  att = attempts(id);
  ASSERT_EQ(att.size(), 2u) << describe_attempts(att);
  ASSERT_TRUE(att[1].value("resumed_from_step", json()).is_number_integer())
      << describe_attempts(att);
  EXPECT_GE(att[1]["resumed_from_step"].get<int>(), saved.back()) << describe_attempts(att);

  bool noted = false;
  for (const auto& e : events(id))
    noted = noted || e.value("cause", "").find("notice") != std::string::npos;
  EXPECT_TRUE(noted) << "the run's events say why the attempt ended";
}

}  // namespace
}  // namespace podium::e2e
