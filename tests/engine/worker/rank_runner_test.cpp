// RankRunner with a scripted process and a recording control plane: the order of reports, the
// upload retry, and the launch failure, without processes or sockets.
#include "engine/worker/rank_runner.h"

#include <signal.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "engine/worker/environment.h"
#include "tests/engine/worker/fakes.h"
#include "tests/engine/worker/temp_dir.h"

namespace podium::worker {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using testing::eventually;
using testing::FakeControlPlane;
using testing::FakeLauncher;
using testing::RecordedCall;

struct RunnerFixture : ::testing::Test {
  testing::TempDir dir;
  SteadyClock clock;
  SpoolBudget budget{1 << 20};
  FakeLauncher launcher;
  FakeControlPlane api;

  std::unique_ptr<RankRunner> make(Assignment a, std::chrono::milliseconds batch_age = 20ms) {
    RankContext ctx;
    ctx.api = &api;
    ctx.launcher = &launcher;
    ctx.clock = &clock;
    ctx.budget = &budget;
    ctx.agent_workdir = dir.path();
    ctx.base_env = {"HOME=/home/x", "RANK=7"};
    ctx.timings.backoff_initial = 10ms;
    ctx.timings.backoff_max = 40ms;
    ctx.timings.exit_linger = 100ms;
    ctx.spool.batch_age = batch_age;
    return std::make_unique<RankRunner>(std::move(a), std::move(ctx));
  }

  // A context whose launcher runs the environment probe (python3 -c ...) for real.
  RankContext probing_context(ProcessLauncher& probing) {
    RankContext ctx;
    ctx.api = &api;
    ctx.launcher = &probing;
    ctx.clock = &clock;
    ctx.budget = &budget;
    ctx.agent_workdir = dir.path();
    ctx.base_env = current_environment();
    ctx.probe_python = "python3";
    return ctx;
  }

  static Assignment assignment() {
    Assignment a;
    a.attempt_id = "att_1";
    a.rank = 1;
    a.command = {"/bin/train", "--steps=3"};
    a.env = {{"RANK", "1"}};
    a.grace_seconds = 1;
    return a;
  }

  void emit(const std::string& out, const std::string& err = "") {
    std::lock_guard lock(launcher.state->mu);
    if (!out.empty()) launcher.state->output.push_back(OutputChunk{Stream::out, out});
    if (!err.empty()) launcher.state->output.push_back(OutputChunk{Stream::err, err});
  }
  void finish(int code) {
    std::lock_guard lock(launcher.state->mu);
    launcher.state->output_done = true;
    launcher.state->exit = ExitStatus{code, std::nullopt};
  }

  // Every line the recorded log calls carried, by seq, checking that none was skipped.
  std::vector<std::string> uploaded(const std::vector<RecordedCall>& calls, int* posts = nullptr) {
    std::vector<std::string> lines;
    int n = 0;
    for (const auto& c : calls) {
      if (c.path != "attempts/att_1/logs") continue;
      ++n;
      const auto seq = c.body["seq"].get<size_t>();
      EXPECT_LE(seq, lines.size()) << "a gap before seq " << seq;
      for (size_t i = 0; i < c.body["lines"].size(); ++i) {
        const auto line = c.body["lines"][i].get<std::string>();
        if (seq + i < lines.size())
          EXPECT_EQ(lines[seq + i], line) << "seq " << seq + i << " changed on retry";
        else
          lines.push_back(line);
      }
    }
    if (posts != nullptr) *posts = n;
    return lines;
  }
};

TEST_F(RunnerFixture, ReportsRunningThenLinesThenExited) {
  auto runner = make(assignment());
  runner->start();
  emit("one\ntwo\n", "err\n");
  emit("three");  // no newline: a line at EOF
  ASSERT_TRUE(eventually([&] { return runner->pid().has_value(); }));
  finish(3);
  ASSERT_TRUE(runner->wait_finished(10s));
  EXPECT_TRUE(runner->exit_reported());

  ASSERT_EQ(launcher.specs.size(), 1u);
  EXPECT_THAT(launcher.specs[0].argv, ElementsAre("/bin/train", "--steps=3"));
  EXPECT_THAT(launcher.specs[0].env, ElementsAre("HOME=/home/x", "RANK=1"));
  EXPECT_EQ(launcher.specs[0].cwd, dir.path());

  // Statuses and log batches travel on their own threads; the statuses keep their order.
  const auto calls = api.snapshot();
  std::vector<nlohmann::json> statuses;
  for (const auto& c : calls) {
    if (c.path == "attempts/att_1/status") statuses.push_back(c.body);
  }
  EXPECT_THAT(statuses,
              ElementsAre(nlohmann::json::parse(R"({"rank":1,"state":"running","pid":4242})"),
                          nlohmann::json::parse(
                              R"({"rank":1,"state":"exited","exit_code":3,"signal":null})")));
  EXPECT_EQ(calls.back().path, "attempts/att_1/status");  // exited after the last line
  EXPECT_THAT(uploaded(calls), ElementsAre("one", "two", "err", "three"));
  EXPECT_THAT(testing::read_lines(dir.path() / "logs/att_1/rank-1.log"),
              ElementsAre("one", "two", "err", "three"));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "spool"));
}

// The environment probe runs for real (python3 -c ...) before the rank, which stays scripted.
struct ProbeForReal : ProcessLauncher {
  explicit ProbeForReal(FakeLauncher& f) : fake(f) {}
  LaunchResult launch(const LaunchSpec& spec) override {
    if (spec.argv.size() == 3 && spec.argv[1] == "-c") {
      probes.push_back(spec);
      return real->launch(spec);
    }
    return fake.launch(spec);
  }
  FakeLauncher& fake;
  std::shared_ptr<ProcessLauncher> real = make_posix_launcher();
  std::vector<LaunchSpec> probes;
};

TEST_F(RunnerFixture, TheRunningReportCarriesWhatTheProbeFoundWithTheRanksSpec) {
  ProbeForReal probing(launcher);
  Assignment a = assignment();
  a.command = {"/bin/train", "--steps=3"};  // not a Python: the agent's interpreter probes
  RankRunner runner(std::move(a), probing_context(probing));
  runner.start();
  ASSERT_TRUE(eventually([&] { return runner.pid().has_value(); }, 30s));
  finish(0);
  ASSERT_TRUE(runner.wait_finished(10s));
  ASSERT_EQ(probing.probes.size(), 1u);
  EXPECT_EQ(probing.probes[0].argv[0], "python3");
  EXPECT_EQ(probing.probes[0].cwd, launcher.specs.at(0).cwd);  // the rank's directory
  EXPECT_EQ(probing.probes[0].env, launcher.specs.at(0).env);  // and environment
  nlohmann::json running;
  for (const auto& c : api.snapshot())
    if (c.path == "attempts/att_1/status" && c.body["state"] == "running") running = c.body;
  ASSERT_TRUE(running.contains("environment")) << running;
  EXPECT_EQ(running["environment"]["python"].get<std::string>().rfind("3.", 0), 0u);
}

// The probe runs beside the rank: the rank is launched while the probe has not answered (its
// launch waits here until the rank's has happened, 10 s at most).
struct ProbeHeldUntilTheRankStarted : ProcessLauncher {
  explicit ProbeHeldUntilTheRankStarted(FakeLauncher& f) : fake(f) {}
  LaunchResult launch(const LaunchSpec& spec) override {
    if (spec.argv.size() == 3 && spec.argv[1] == "-c") {
      std::unique_lock lock(mu);
      rank_started_first = changed.wait_for(lock, 10s, [&] { return rank_started; });
      lock.unlock();
      return real->launch(spec);
    }
    {
      std::lock_guard lock(mu);
      rank_started = true;
    }
    changed.notify_all();
    return fake.launch(spec);
  }
  FakeLauncher& fake;
  std::shared_ptr<ProcessLauncher> real = make_posix_launcher();
  std::mutex mu;
  std::condition_variable changed;
  bool rank_started = false;
  bool rank_started_first = false;
};

TEST_F(RunnerFixture, TheRankStartsWithoutWaitingForTheEnvironmentProbe) {
  ProbeHeldUntilTheRankStarted probing(launcher);
  RankRunner runner(assignment(), probing_context(probing));
  runner.start();
  ASSERT_TRUE(eventually([&] { return runner.pid().has_value(); }, 30s));
  finish(0);
  ASSERT_TRUE(runner.wait_finished(20s));
  {
    std::lock_guard lock(probing.mu);
    EXPECT_TRUE(probing.rank_started_first);
  }
  // The running report still carries what the probe found, and comes before the exit.
  std::vector<std::string> states;
  nlohmann::json running;
  for (const auto& c : api.snapshot()) {
    if (c.path != "attempts/att_1/status") continue;
    states.push_back(c.body["state"]);
    if (c.body["state"] == "running") running = c.body;
  }
  EXPECT_THAT(states, ElementsAre("running", "exited"));
  EXPECT_EQ(running["environment"]["python"].get<std::string>().rfind("3.", 0), 0u) << running;
}

TEST_F(RunnerFixture, FailedUploadsAreRetriedWithTheSameSeqAndExitWaitsForThem) {
  std::atomic<int> failures{2};
  api.answer = [&](const RecordedCall& c) -> std::optional<ApiResult> {
    if (c.path == "attempts/att_1/logs" && failures.fetch_sub(1) > 0) {
      return classify(503, R"({"title":"database unavailable"})");
    }
    return std::nullopt;
  };
  // Only the 500-line rule and the end of output make batches here: their bounds are fixed.
  auto runner = make(assignment(), 60s);
  runner->start();
  std::string text;
  for (int i = 0; i < 1200; ++i) text += "n " + std::to_string(i) + "\n";
  emit(text);
  finish(0);
  ASSERT_TRUE(runner->wait_finished(10s));

  const auto calls = api.snapshot();
  int posts = 0;
  const auto lines = uploaded(calls, &posts);
  ASSERT_EQ(lines.size(), 1200u);
  for (int i = 0; i < 1200; ++i) EXPECT_EQ(lines[static_cast<size_t>(i)], "n " + std::to_string(i));
  EXPECT_EQ(posts, 3 + 2);  // 500 + 500 + 200, the first one twice more
  std::vector<uint64_t> seqs;
  for (const auto& c : calls) {
    if (c.path == "attempts/att_1/logs") seqs.push_back(c.body["seq"].get<uint64_t>());
  }
  EXPECT_THAT(seqs, ElementsAre(0u, 0u, 0u, 500u, 1000u));
  EXPECT_EQ(calls.back().body["state"], "exited");
}

TEST_F(RunnerFixture, ExitedWaitsUntilTheServerTookTheLines) {
  std::atomic<bool> down{true};
  api.answer = [&](const RecordedCall& c) -> std::optional<ApiResult> {
    if (c.path == "attempts/att_1/logs" && down) return ApiResult{};  // unreachable
    return std::nullopt;
  };
  auto runner = make(assignment());
  runner->start();
  emit("last words\n");
  finish(1);
  // Plenty of retries happen, but no exited while the line is not stored.
  ASSERT_TRUE(eventually([&] {
    int posts = 0;
    uploaded(api.snapshot(), &posts);
    return posts >= 3;
  }));
  for (const auto& c : api.snapshot()) EXPECT_NE(c.body.value("state", ""), "exited");
  down = false;
  ASSERT_TRUE(runner->wait_finished(10s));
  EXPECT_EQ(api.snapshot().back().body["exit_code"], 1);
}

TEST_F(RunnerFixture, ALaunchFailureIsExit127WithItsReasonInTheLog) {
  launcher.fail_with = "exec /bin/train: No such file or directory";
  auto runner = make(assignment());
  runner->start();
  ASSERT_TRUE(runner->wait_finished(10s));
  const auto calls = api.snapshot();
  for (const auto& c : calls) EXPECT_NE(c.body.value("state", ""), "running");
  EXPECT_EQ(calls.back().body,
            nlohmann::json::parse(R"({"rank":1,"state":"exited","exit_code":127,"signal":null})"));
  const auto lines = uploaded(calls);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "podium-worker: cannot start the process: exec /bin/train: No such file or directory");
  EXPECT_EQ(lines[1], R"(podium-worker: command: ["/bin/train","--steps=3"])");
}

TEST_F(RunnerFixture, CancelBeforeTheLaunchStopsTheProcessAtOnce) {
  auto runner = make(assignment());
  runner->cancel(0ms);
  runner->start();
  ASSERT_TRUE(runner->wait_finished(10s));
  {
    std::lock_guard lock(launcher.state->mu);
    EXPECT_THAT(launcher.state->signals, ::testing::Contains(SIGKILL));
  }
  EXPECT_EQ(api.snapshot().back().body["signal"], SIGKILL);
}

TEST_F(RunnerFixture, RefusedLinesAreDroppedSoTheExitIsStillReported) {
  api.answer = [&](const RecordedCall& c) -> std::optional<ApiResult> {
    if (c.path == "attempts/att_1/logs") return classify(404, R"({"title":"unknown attempt"})");
    return std::nullopt;
  };
  auto runner = make(assignment());
  runner->start();
  emit("x\n");
  finish(0);
  ASSERT_TRUE(runner->wait_finished(10s));
  EXPECT_EQ(api.snapshot().back().body["state"], "exited");
}

// While the agent registers again (a server restart, a lost heartbeat), the server answers the
// old credential with 401 for a moment: the lines and the exit wait for the new one instead of
// being dropped as refused.
TEST_F(RunnerFixture, ACredentialRefusedForAMomentLosesNoLineAndNoExit) {
  std::atomic<int> logs_refused{3}, exits_refused{2};
  api.answer = [&](const RecordedCall& c) -> std::optional<ApiResult> {
    const auto unauthorized = classify(401, R"({"title":"unknown or revoked worker credential"})");
    if (c.path == "attempts/att_1/logs" && logs_refused.fetch_sub(1) > 0) return unauthorized;
    if (c.body.value("state", "") == "exited" && exits_refused.fetch_sub(1) > 0)
      return unauthorized;
    return std::nullopt;
  };
  auto runner = make(assignment());
  runner->start();
  emit("first\nsecond\n");
  finish(3);
  ASSERT_TRUE(runner->wait_finished(10s));
  int posts = 0;
  EXPECT_THAT(uploaded(api.snapshot(), &posts), ElementsAre("first", "second"));
  EXPECT_GE(posts, 4);
  const auto calls = api.snapshot();
  EXPECT_EQ(
      std::count_if(calls.begin(), calls.end(),
                    [](const RecordedCall& c) { return c.body.value("state", "") == "exited"; }),
      3);
  EXPECT_EQ(calls.back().body["exit_code"], 3);
}

TEST_F(RunnerFixture, ARunningReportRefusedAsAConflictStopsTheProcess) {
  // The server already ended this rank (declared lost, or cancelled before it heard of the
  // start): a process it no longer tracks must not keep running beside the next attempt.
  api.answer = [&](const RecordedCall& c) -> std::optional<ApiResult> {
    if (c.path == "attempts/att_1/status" && c.body["state"] == "running")
      return classify(409, R"({"title":"Conflict","detail":"rank 1 was already declared lost"})");
    return std::nullopt;
  };
  auto runner = make(assignment());
  runner->start();
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(launcher.state->mu);
    return std::find(launcher.state->signals.begin(), launcher.state->signals.end(), SIGTERM) !=
           launcher.state->signals.end();
  }));
  finish(143);
  ASSERT_TRUE(runner->wait_finished(10s));
}

}  // namespace
}  // namespace podium::worker

namespace podium::worker {
namespace {

// Retention (issue 30.4): the answer to a checkpoint report names what to delete; the reporter
// deletes it on this host and reports each outcome before anything queued later (the exit).
TEST_F(RunnerFixture, DeletesWhatACheckpointAnswerNamesAndReportsItBeforeTheExit) {
  const auto ckpt = dir.path() / "out/run_1/checkpoints";
  for (const char* step : {"10", "20", "30"}) testing::write_file(ckpt / step / "state", "s");
  testing::TempDir elsewhere;
  testing::write_file(elsewhere.path() / "checkpoints/10/keep", "k");
  api.answer = [&](const RecordedCall& c) -> std::optional<ApiResult> {
    if (c.path != "attempts/att_1/checkpoints" || c.body["step"] != 30) return std::nullopt;
    const nlohmann::json body = {
        {"step", 30},
        {"created", true},
        {"delete",
         {{{"step", 10}, {"uri", (ckpt / "10").string()}},
          {{"step", 20}, {"uri", (ckpt / "20").string()}},
          {{"step", 5}, {"uri", (elsewhere.path() / "checkpoints/10").string()}}}}};
    return classify(200, body.dump());
  };
  Assignment a = assignment();
  a.checkpoint_dir = ckpt.string();
  auto runner = make(a);
  runner->start();
  ASSERT_TRUE(eventually([&] { return runner->pid().has_value(); }));
  finish(0);
  ASSERT_TRUE(runner->wait_finished(10s));

  EXPECT_FALSE(std::filesystem::exists(ckpt / "10"));
  EXPECT_FALSE(std::filesystem::exists(ckpt / "20"));
  EXPECT_TRUE(std::filesystem::exists(ckpt / "30"));
  EXPECT_TRUE(std::filesystem::exists(elsewhere.path() / "checkpoints/10/keep"));
  std::vector<std::string> order;
  std::vector<nlohmann::json> outcomes;
  for (const auto& c : api.snapshot()) {
    if (c.path == "attempts/att_1/logs") continue;
    order.push_back(c.path.substr(c.path.rfind('/') + 1) +
                    (c.body.contains("step") ? " " + c.body["step"].dump() : "") +
                    (c.body.contains("state") ? " " + c.body["state"].get<std::string>() : ""));
    if (c.path == "attempts/att_1/checkpoint-deletions") outcomes.push_back(c.body);
  }
  EXPECT_THAT(order,
              ElementsAre("status running", "checkpoints 10", "checkpoints 20", "checkpoints 30",
                          "checkpoint-deletions 10", "checkpoint-deletions 20",
                          "checkpoint-deletions 5", "status exited"));
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(outcomes[0]["deleted"], true);
  EXPECT_TRUE(outcomes[0]["error"].is_null());
  EXPECT_EQ(outcomes[2]["deleted"], false);
  EXPECT_EQ(outcomes[2]["error"].get<std::string>().rfind("refused: ", 0), 0u) << outcomes[2];
}

}  // namespace
}  // namespace podium::worker

namespace podium::worker {
namespace {

// Deletions answered while later checkpoint reports wait behind: every report still goes out
// once, under its own kind, in order.
TEST_F(RunnerFixture, DeletionsAnsweredMidQueueKeepTheReportsBehindThem) {
  const auto ckpt = dir.path() / "out/run_1/checkpoints";
  for (int step = 10; step <= 60; step += 10)
    testing::write_file(ckpt / std::to_string(step) / "state", "s");
  api.answer = [&](const RecordedCall& c) -> std::optional<ApiResult> {
    if (c.path != "attempts/att_1/checkpoints") return std::nullopt;
    const int step = c.body["step"];
    nlohmann::json del = nlohmann::json::array();
    if (step >= 30)
      del.push_back({{"step", step - 20}, {"uri", (ckpt / std::to_string(step - 20)).string()}});
    return classify(200, nlohmann::json{{"step", step}, {"created", true}, {"delete", del}}.dump());
  };
  Assignment a = assignment();
  a.checkpoint_dir = ckpt.string();
  auto runner = make(a);
  runner->start();
  ASSERT_TRUE(eventually([&] { return runner->pid().has_value(); }));
  finish(0);
  ASSERT_TRUE(runner->wait_finished(10s));
  std::vector<std::string> order;
  for (const auto& c : api.snapshot()) {
    if (c.path == "attempts/att_1/logs") continue;
    order.push_back(c.path.substr(c.path.rfind('/') + 1) +
                    (c.body.contains("step") ? " " + c.body["step"].dump() : ""));
  }
  EXPECT_THAT(order,
              ElementsAre("status", "checkpoints 10", "checkpoints 20", "checkpoints 30",
                          "checkpoint-deletions 10", "checkpoints 40", "checkpoint-deletions 20",
                          "checkpoints 50", "checkpoint-deletions 30", "checkpoints 60",
                          "checkpoint-deletions 40", "status"));
}

}  // namespace
}  // namespace podium::worker
