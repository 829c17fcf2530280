// Issue 32, point 4: Podium agents on two hosts run real MaxText (PyPI maxtext 0.2.0, installed by
// `scripts/setup.sh --maxtext`) through Podium's own launch. MaxText's real log lines give the
// summary, its Orbax checkpoints are listed, and a host killed mid-run is recovered from
// MaxText's own latest checkpoint without spending the restart budget.
//
// The agents' Python is that environment's (--python: the software probe reports maxtext 0.2.0
// and its package layout; PATH: the launch's `python3` is that environment's). The run names no
// command: Podium's default maxtext launch on a CPU cluster is
//   python3 -u -m maxtext.trainers.pre_train.train <config_file> run_name=<run id> ...
//       hardware=cpu jax_cache_dir= num_slices=1 ...
// with JAX_COORDINATOR_ADDRESS=<rank 0's host>, JOB_INDEX, JOB_COMPLETION_INDEX and
// PROCESSES_IN_JOB for MaxText's CPU initialisation (engine/core/launch/maxtext_launch.h).
//
// MaxText's CPU initialisation always uses port 1234 on rank 0's host: only one such run per
// machine at a time. The test waits for the port to be free before it submits (another MaxText
// run on this machine, or the end of an earlier one) and says so when it never is.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <set>
#include <thread>

#include "engine/core/launch/maxtext_launch.h"
#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// Longer than the HostLost test's 4 s: MaxText compiles on every core, and at load average 60 on
// this 2-core machine the server missed its database for 2 s and saw both agents silent for 5 s.
constexpr int kHeartbeatDeadlineSeconds = 20;
constexpr int kSteps = 20;
constexpr int kCheckpointPeriod = 5;

// CMake's PODIUM_MAXTEXT_PYTHON (scripts/setup.sh --maxtext makes it), unless the environment
// variable of that name names another interpreter.
fs::path maxtext_python() {
  const char* given = std::getenv("PODIUM_MAXTEXT_PYTHON");
  return given != nullptr && *given != '\0' ? given : PODIUM_MAXTEXT_PYTHON;
}

// PODIUM_MAXTEXT_E2E=1 asks for this test (scripts/test.sh then makes the environment): without
// its environment it fails instead of skipping.
bool asked_for() {
  const char* asked = std::getenv("PODIUM_MAXTEXT_E2E");
  return asked != nullptr && std::string(asked) == "1";
}

// Steps of MaxText's "completed step: N, seconds: ..." lines (after absl's
// "I1127 03:06:46.545562 140160498895744 metric_logger.py:181] " prefix), in order.
std::vector<int> maxtext_steps(const std::vector<std::string>& lines) {
  static const std::regex re(R"((^|\] )completed step: (\d+), seconds: )");
  std::vector<int> out;
  std::smatch m;
  for (const auto& l : lines)
    if (std::regex_search(l, m, re)) out.push_back(std::stoi(m[2].str()));
  return out;
}

// A number MaxText printed after `field: ` on its step lines, for every step line.
std::vector<double> step_values(const std::vector<std::string>& lines, const std::string& field) {
  const std::regex re("completed step: \\d+, .*" + field + ": ([0-9.]+)");
  std::vector<double> out;
  std::smatch m;
  for (const auto& l : lines)
    if (std::regex_search(l, m, re)) out.push_back(std::stod(m[1].str()));
  return out;
}

bool has_line(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

// Steps MaxText said it saved ("Saved a checkpoint at step N.").
std::vector<int> saved_steps(const std::vector<std::string>& lines) {
  static const std::regex re(R"(Saved a checkpoint at step (\d+)\.)");
  std::vector<int> out;
  std::smatch m;
  for (const auto& l : lines)
    if (std::regex_search(l, m, re)) out.push_back(std::stoi(m[1].str()));
  return out;
}

// The step of MaxText's "restoring from this run's directory step N", when it printed one.
std::optional<int> restored_step(const std::vector<std::string>& lines) {
  static const std::regex re(R"(restoring from this run's directory step (\d+))");
  std::smatch m;
  for (const auto& l : lines)
    if (std::regex_search(l, m, re)) return std::stoi(m[1].str());
  return std::nullopt;
}

// True when a listening socket could take `port` on every IPv4 address now (SO_REUSEADDR: a
// connection in TIME_WAIT from an earlier run does not count; a listener does).
bool port_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok =
      ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd, 1) == 0;
  ::close(fd);
  return ok;
}

// Step directories Orbax finished (renamed from <step>.orbax-checkpoint-tmp) under `dir`.
std::set<int> finished_step_dirs(const fs::path& dir) {
  std::set<int> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (!n.empty() && std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
      out.insert(std::stoi(n));
  }
  return out;
}

class MaxTextOnCpu : public E2eTest {
 protected:
  Settings settings() const override {
    const char* path = std::getenv("PATH");
    return {.extra = {"scheduler.heartbeat_deadline_seconds=" +
                          std::to_string(kHeartbeatDeadlineSeconds),
                      "scheduler.heartbeat_interval_seconds=2"},
            // `python3` of the launch resolves in the agents' PATH: the MaxText environment's.
            .worker_env = {{"PATH", maxtext_python().parent_path().string() + ":" +
                                        (path ? path : "/usr/local/bin:/usr/bin:/bin")}},
            .worker_args = {"--python", maxtext_python().string()}};
  }

  void SetUp() override {
    if (!fs::exists(maxtext_python())) {
      const std::string why =
          maxtext_python().string() +
          " does not exist: run `PODIUM_MAXTEXT_E2E=1 scripts/test.sh` (it creates the MaxText "
          "environment with `scripts/setup.sh --maxtext`), or point CMake's "
          "PODIUM_MAXTEXT_PYTHON at one";
      if (asked_for()) FAIL() << why;
      GTEST_SKIP() << why;
    }
    E2eTest::SetUp();
  }
};

TEST_F(MaxTextOnCpu, TwoAgentsRunRealMaxTextAndRecoverAKilledHostFromItsCheckpoint) {
  const auto test_started = Clock::now();
  const int port = core::kMaxTextCpuCoordinatorPort;
  ASSERT_TRUE(eventually([&] { return port_free(port); }, 180s, 1s))
      << "port " << port << " stayed taken for 3 minutes: MaxText's CPU initialisation always "
      << "puts its coordinator there, so only one multi-process MaxText run per machine at a time "
      << "(`ss -ltnp 'sport = :" << port << "'` names the holder)";

  // Two hosts with two CPU devices each: a 4-device mesh across two processes.
  const auto cluster = create_cluster("cpu-2x2", 1);
  WorkerProcess& host1 = *start_workers(cluster, 1, 2).at(1);

  // Each agent's software probe found MaxText 0.2.0 in its package layout.
  {
    auto r = admin().get("/api/v1/clusters/" + cluster + "/workers");
    ASSERT_EQ(r.status, 200) << r;
    ASSERT_EQ(r.json["items"].size(), 2u) << r.json.dump();
    for (const auto& w : r.json["items"]) {
      EXPECT_EQ(w["software"].value("maxtext", ""), "0.2.0") << w.dump();
      EXPECT_EQ(w["software"].value("maxtext_layout", ""), "package") << w.dump();
      EXPECT_EQ(w["software"].value("jax", ""), "0.10.2") << w.dump();
    }
  }

  // tiny.yml: reference-tiny's widths, depth and vocabulary in MaxText's llama2 block (the
  // catalog says MaxText has no model_name reference-tiny, so Podium passes none). No command.
  const fs::path config = it::repo_root() / "engine/workloads/maxtext/tiny.yml";
  const json spec = {{"name", unique_name("maxtext")},
                     {"cluster", cluster},
                     {"workload", "maxtext"},
                     {"model", "reference-tiny"},
                     {"config_file", config.string()},
                     {"steps", kSteps},
                     // Podium passes the spec's batch and sequence (defaults 12 x 2048), which
                     // override tiny.yml's: a 64-wide model on 12 x 2048 tokens per device
                     // compiles to "Temp size: 3.1 GB" and minutes per step on CPU.
                     {"per_device_batch_size", 1},
                     {"max_target_length", 64},
                     {"checkpoint_period", kCheckpointPeriod},
                     {"max_restarts", 3}};
  const json run = submit(spec);
  const std::string id = run["id"];

  json first;
  ASSERT_TRUE(wait_for_first_attempt_pids(id, 2, 120s, &first));
  const auto hosts = hosts_by_rank(first);
  ASSERT_EQ(hosts.at(1).value("worker_id", ""), host1.worker_id()) << describe_attempts({first});
  const pid_t pid0 = hosts.at(0)["pid"].get<int>();
  const pid_t pid1 = hosts.at(1)["pid"].get<int>();
  const std::string attempt1 = first["id"];

  // MaxText saves checkpoint 5 after step 5's update and prints "Saved a checkpoint at step 5."
  // once Orbax has renamed the directory; the next save is 5 steps later. The deadlines here are
  // generous: one MaxText launch (imports, then the train step compiled twice on every process)
  // took 8 minutes on this 2-core machine at load average 35 (docs/maxtext-on-cpu.md).
  const fs::path checkpoints = output_dir() / id / "checkpoints";
  bool saved = eventually(
      [&] {
        auto s = saved_steps(host1.rank_lines(attempt1, 1));
        return std::find(s.begin(), s.end(), kCheckpointPeriod) != s.end();
      },
      600s, 100ms);
  ASSERT_TRUE(saved) << "rank 1 never printed 'Saved a checkpoint at step " << kCheckpointPeriod
                     << "'; it printed steps "
                     << ::testing::PrintToString(maxtext_steps(host1.rank_lines(attempt1, 1)))
                     << diagnostics(id);

  // The host dies: its agent and its rank's process group, with SIGKILL.
  lose_host(host1, pid1);
  const auto killed_at = Clock::now();
  const auto printed = maxtext_steps(host1.rank_lines(attempt1, 1));
  std::cout << "host 1 killed "
            << std::chrono::duration_cast<std::chrono::seconds>(killed_at - test_started).count()
            << " s into the test; rank 1 had printed steps " << ::testing::PrintToString(printed)
            << "\n";
  {
    const auto on_disk = finished_step_dirs(checkpoints);
    ASSERT_TRUE(on_disk.count(kCheckpointPeriod))
        << "no finished checkpoint " << kCheckpointPeriod << " under " << checkpoints;
    ASSERT_FALSE(on_disk.count(2 * kCheckpointPeriod))
        << "checkpoint " << 2 * kCheckpointPeriod << " exists: the kill came too late";
  }

  // Noticed within the heartbeat deadline; rank 0's MaxText process is stopped (it would block
  // in a gloo collective, or abort on JAX's heartbeat timeout, without its peer).
  ASSERT_TRUE(wait_for_recovering(id, pid0, std::chrono::seconds(kHeartbeatDeadlineSeconds + 30)));
  {
    auto att = attempts(id);
    EXPECT_EQ(att[0].value("failure_class", json()), json("host_lost")) << describe_attempts(att);
  }

  // The agent comes back; MaxText restores its own latest checkpoint and finishes.
  ASSERT_TRUE(eventually([&] { return port_free(port); }, 30s, 200ms))
      << "rank 0's coordinator still holds port " << port;
  host1.start();
  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 600s, &done));
  const auto elapsed = Clock::now() - test_started;
  std::cout << "MaxText run succeeded "
            << std::chrono::duration_cast<std::chrono::seconds>(elapsed).count()
            << " s into the test ("
            << std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - killed_at).count()
            << " s after the kill)\n";
  RecordProperty("seconds_to_success",
                 std::to_string(std::chrono::duration_cast<std::chrono::seconds>(elapsed).count()));
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump();
  EXPECT_EQ(done.value("recoveries", -1), 1) << done.dump();
  EXPECT_EQ(done.value("resumed_from_step", json()), json(kCheckpointPeriod)) << done.dump();

  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 2u) << describe_attempts(att) << diagnostics(id);
  EXPECT_EQ(att[1].value("state", ""), "succeeded") << describe_attempts(att);

  // Both attempts ran MaxText's own launch and its CPU initialisation, two processes, 4 devices.
  for (const json& a : att)
    for (int rank : {0, 1}) {
      const auto lines = local_rank_lines(a, rank);
      const std::string where =
          "attempt " + std::to_string(a.value("number", 0)) + " rank " + std::to_string(rank);
      EXPECT_TRUE(has_line(lines, "Attempting to initialize the jax distributed system for CPU"))
          << where;
      EXPECT_TRUE(has_line(lines, "Jax process id is " + std::to_string(rank))) << where;
      EXPECT_TRUE(has_line(lines, "Jax distributed system initialized on CPUs!")) << where;
      EXPECT_TRUE(has_line(lines, "Num_devices: 4")) << where;
    }

  // Attempt 2 resumed from MaxText's checkpoint 5: rank 0 restored it and trained the rest.
  const auto lines2 = local_rank_lines(att[1], 0);
  EXPECT_EQ(restored_step(lines2), std::optional<int>(kCheckpointPeriod))
      << "rank 0 of attempt 2 did not print MaxText's restore of step " << kCheckpointPeriod;
  const auto steps2 = maxtext_steps(lines2);
  ASSERT_FALSE(steps2.empty()) << "attempt 2 printed no step";
  EXPECT_GT(steps2.front(), 0);
  EXPECT_EQ(steps2.front(), kCheckpointPeriod + 1);
  EXPECT_EQ(steps2.back(), kSteps - 1);
  const auto lines1 = local_rank_lines(att[0], 0);
  const auto steps1 = maxtext_steps(lines1);
  ASSERT_FALSE(steps1.empty()) << "attempt 1 printed no step";
  EXPECT_EQ(steps1.front(), 0);
  EXPECT_TRUE(has_line(lines1, "No existing checkpoints found, not restoring checkpoint."));

  // The summary rests on MaxText's real lines: the steady step time, TFLOP/s/device and
  // Tokens/s/device as MaxText logged them. (This 64-wide model does far less than 0.001 TFLOPs a
  // step, "Total TFLOPs: 0.00": MaxText prints TFLOP/s/device 0.000, and the tokens figure is the
  // one that shows a rate.)
  for (const char* line : {"Per train step:", "Total TFLOPs:", "number parameters:",
                           "Total memory size:", "TFLOP/s/device:"})
    EXPECT_TRUE(has_line(lines2, line)) << "no MaxText line with '" << line << "'";
  auto summary = admin().get("/api/v1/runs/" + it::enc(id) + "/summary");
  ASSERT_EQ(summary.status, 200) << summary;
  const json& s = summary.json;
  std::cout << "summary: step_seconds " << s["step_seconds"].dump() << " over "
            << s["steady_steps"].dump() << " steady steps, tflops_per_device "
            << s["tflops_per_device"].dump() << ", tokens_per_second_per_device "
            << s["tokens_per_second_per_device"].dump() << " (basis " << s["basis"].dump() << ")\n";
  ASSERT_TRUE(s["step_seconds"].is_number()) << s.dump();
  EXPECT_GE(s["steady_steps"].get<int>(), 5) << s.dump();
  ASSERT_TRUE(s["tflops_per_device"].is_number()) << s.dump();
  ASSERT_TRUE(s["tokens_per_second_per_device"].is_number()) << s.dump();
  EXPECT_EQ(s["basis"]["tflops_per_device"], "logged") << s.dump();
  EXPECT_EQ(s["basis"]["tokens_per_second_per_device"], "logged") << s.dump();
  // Each figure lies within what MaxText printed (both attempts' rank 0 lines).
  const auto within = [&](const char* field, const char* key) {
    std::vector<double> v = step_values(lines1, field);
    for (double x : step_values(lines2, field)) v.push_back(x);
    if (v.empty()) return ::testing::AssertionFailure() << "no '" << field << "' in the log";
    const double got = s[key].get<double>();
    const double lo = *std::min_element(v.begin(), v.end());
    const double hi = *std::max_element(v.begin(), v.end());
    if (got < lo || got > hi)
      return ::testing::AssertionFailure() << key << " " << got << " is outside the logged "
                                           << field << " [" << lo << ", " << hi << "]";
    return ::testing::AssertionSuccess();
  };
  EXPECT_TRUE(within("seconds", "step_seconds"));
  EXPECT_TRUE(within("TFLOP/s/device", "tflops_per_device"));
  EXPECT_TRUE(within("Tokens/s/device", "tokens_per_second_per_device"));
  EXPECT_GT(s["tokens_per_second_per_device"].get<double>(), 0.0) << s.dump();

  // MaxText's checkpoints, listed through the API, are the finished Orbax step directories.
  const auto listed = checkpoint_steps(id);
  const auto on_disk = finished_step_dirs(checkpoints);
  EXPECT_EQ(std::set<int>(listed.begin(), listed.end()), on_disk);
  for (int step : {0, kCheckpointPeriod, kSteps - 1})
    EXPECT_TRUE(on_disk.count(step)) << "no checkpoint " << step << " under " << checkpoints;
  for (int step : on_disk)
    EXPECT_TRUE(fs::exists(checkpoints / std::to_string(step) / "_CHECKPOINT_METADATA")) << step;
  EXPECT_TRUE(metrics_steps_are(metrics(id), step_range(0, kSteps), false));
}

}  // namespace
}  // namespace podium::e2e
