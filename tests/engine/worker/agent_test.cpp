// The real agent (registration, heartbeat, long poll, real child processes, log upload,
// checkpoints, cancel) against backend/http's HttpServer playing the control plane in memory.
#include "engine/worker/agent.h"

#include <signal.h>
#include <sys/types.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "backend/http/server.h"
#include "tests/engine/worker/fakes.h"
#include "tests/engine/worker/temp_dir.h"

namespace podium::worker {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using testing::eventually;
using testing::TempDir;

constexpr const char* kToken = "pdw_test_token";

// The control plane's side of docs/agent-protocol.md, in memory.
class FakeServer {
 public:
  struct Status {
    std::string attempt;
    nlohmann::json body;
    size_t lines_stored_then = 0;  // lines of that attempt stored when it arrived
  };

  FakeServer() : server_(options(), [this](http::Request& r) { return handle(r); }) {
    server_.start();
  }
  ~FakeServer() { server_.stop(1000ms); }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_.port()); }

  void assign(const nlohmann::json& message) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(message);
    }
    cv_.notify_all();
  }

  // Everything below is read under the lock through these accessors.
  std::vector<nlohmann::json> registrations() {
    std::lock_guard lock(mu_);
    return registrations_;
  }
  std::vector<Status> statuses(const std::string& attempt) {
    std::lock_guard lock(mu_);
    std::vector<Status> out;
    for (const auto& s : statuses_)
      if (s.attempt == attempt) out.push_back(s);
    return out;
  }
  bool exited(const std::string& attempt) {
    for (const auto& s : statuses(attempt))
      if (s.body["state"] == "exited") return true;
    return false;
  }
  // Stored lines by seq; `contiguous` tells whether seqs 0..n-1 are all there.
  std::vector<std::string> lines(const std::string& attempt, bool* contiguous = nullptr) {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    const auto& stored = lines_[attempt];
    bool ok = true;
    for (const auto& [seq, line] : stored) {
      if (seq != out.size()) ok = false;
      out.push_back(line);
    }
    if (contiguous != nullptr) *contiguous = ok;
    return out;
  }
  std::vector<nlohmann::json> checkpoints() {
    std::lock_guard lock(mu_);
    return checkpoints_;
  }
  int heartbeats() {
    std::lock_guard lock(mu_);
    return heartbeats_;
  }
  nlohmann::json last_heartbeat() {
    std::lock_guard lock(mu_);
    return last_heartbeat_;
  }
  int log_posts() {
    std::lock_guard lock(mu_);
    return log_posts_;
  }
  // Next `n` log uploads answer 503.
  void fail_logs(int n) {
    std::lock_guard lock(mu_);
    fail_logs_ = n;
  }
  // The next heartbeat and assignment calls answer 404 until the agent registers again.
  void forget_workers() {
    std::lock_guard lock(mu_);
    known_ = false;
  }
  // Every call but a registration answers 401 until the agent registers again (the server no
  // longer accepts the host's credential, e.g. after it restarted and another instance took it).
  void refuse_credential() {
    std::lock_guard lock(mu_);
    refused_ = true;
  }
  void set_register_status(int status) {
    std::lock_guard lock(mu_);
    register_status_ = status;
  }

 private:
  static http::ServerOptions options() {
    http::ServerOptions o;
    o.port = 0;
    o.handler_threads = 8;
    return o;
  }

  static http::Response problem(int status, const std::string& title) {
    return http::Response::json(status,
                                nlohmann::json{{"title", title}, {"status", status}}.dump());
  }

  http::Response handle(http::Request& r) {
    if (r.header("authorization") !=
        std::optional<std::string_view>(std::string("Bearer ") + kToken)) {
      return problem(401, "bad token");
    }
    const std::string prefix = "/api/v1/agent/";
    if (r.path.rfind(prefix, 0) != 0) return problem(404, "not found");
    const std::string path = r.path.substr(prefix.size());
    nlohmann::json body = nlohmann::json::parse(r.body.empty() ? "null" : r.body, nullptr, false);
    if (body.is_discarded()) return problem(400, "bad json");

    if (r.method == "POST" && path == "register") {
      std::lock_guard lock(mu_);
      registrations_.push_back(body);
      if (register_status_ != 200) return problem(register_status_, "refused");
      known_ = true;
      refused_ = false;
      return http::Response::json(
          200, R"({"worker_id":"wkr_1","heartbeat_seconds":1,"heartbeat_deadline_seconds":15})");
    }
    {
      std::lock_guard lock(mu_);
      if (refused_) return problem(401, "unknown or revoked worker credential");
    }
    if (r.method == "POST" && path == "heartbeat") {
      std::lock_guard lock(mu_);
      if (!known_ || body["worker_id"] != "wkr_1") return problem(404, "unknown worker");
      ++heartbeats_;
      last_heartbeat_ = body;
      return http::Response::json(200, R"({"heartbeat_seconds":1})");
    }
    if (r.method == "GET" && path == "assignment") {
      std::unique_lock lock(mu_);
      if (!known_ || r.query_param("worker_id") != "wkr_1") return problem(404, "unknown worker");
      // A short hold stands for the real 25 s, so that the tests end quickly.
      cv_.wait_for(lock, 200ms, [&] { return !queue_.empty(); });
      if (queue_.empty()) return http::Response::empty(204);
      const auto message = queue_.front();
      queue_.pop_front();
      return http::Response::json(200, message.dump());
    }
    const std::string attempts = "attempts/";
    if (r.method == "POST" && path.rfind(attempts, 0) == 0) {
      const std::string rest = path.substr(attempts.size());
      const size_t slash = rest.find('/');
      if (slash == std::string::npos) return problem(404, "not found");
      const std::string attempt = rest.substr(0, slash);
      const std::string what = rest.substr(slash + 1);
      std::lock_guard lock(mu_);
      if (what == "status") {
        statuses_.push_back(Status{attempt, body, lines_[attempt].size()});
        return http::Response::json(200, R"({"attempt_state":"running","cancel":false})");
      }
      if (what == "logs") {
        ++log_posts_;
        if (fail_logs_ > 0) {
          --fail_logs_;
          return problem(503, "database unavailable");
        }
        const uint64_t seq = body["seq"].get<uint64_t>();
        auto& stored = lines_[attempt];
        for (size_t i = 0; i < body["lines"].size(); ++i) {
          stored.emplace(seq + i, body["lines"][i].get<std::string>());  // idempotent
        }
        return http::Response::json(200, nlohmann::json{{"stored", body["lines"].size()},
                                                        {"next_seq", seq + body["lines"].size()}}
                                             .dump());
      }
      if (what == "checkpoints") {
        checkpoints_.push_back(body);
        return http::Response::json(201, "{}");
      }
    }
    return problem(404, "not found");
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<nlohmann::json> queue_;
  std::vector<nlohmann::json> registrations_;
  std::vector<Status> statuses_;
  std::map<std::string, std::map<uint64_t, std::string>> lines_;
  std::vector<nlohmann::json> checkpoints_;
  nlohmann::json last_heartbeat_;
  int heartbeats_ = 0;
  int log_posts_ = 0;
  int fail_logs_ = 0;
  int register_status_ = 200;
  bool known_ = false;
  bool refused_ = false;
  http::HttpServer server_;  // last: stopped before the state it uses goes away
};

struct AgentFixture : ::testing::Test {
  FakeServer server;
  TempDir dir;
  std::unique_ptr<Agent> agent;
  std::thread thread;
  std::atomic<int> exit_code{-1};
  std::mutex announce_mu;
  std::vector<std::string> announced;

  std::shared_ptr<MetadataSource> metadata;

  void start(const std::string& token = kToken) {
    AgentOptions o;
    o.metadata = metadata;
    o.notice_poll = 50ms;
    o.cluster = "demo";
    o.slice = 0;
    o.host = 1;
    o.workdir = dir.path() / "agent";
    o.hostname = "h1";
    o.address = "10.0.0.7";
    o.devices = 4;
    o.assignment_wait_seconds = 1;
    o.timings.backoff_initial = 50ms;
    o.timings.backoff_max = 200ms;
    o.announce = [this](const std::string& line) {
      std::lock_guard lock(announce_mu);
      announced.push_back(line);
    };
    agent = std::make_unique<Agent>(o, make_http_control_plane(server.url(), token),
                                    make_posix_launcher(), std::make_shared<SteadyClock>());
    thread = std::thread([this] { exit_code = agent->run(); });
  }

  void TearDown() override {
    if (agent) agent->stop();
    if (thread.joinable()) thread.join();
    agent.reset();
  }

  static nlohmann::json start_message(const std::string& attempt, std::vector<std::string> argv,
                                      int grace = 10) {
    return {{"attempt_id", attempt},  {"run_id", "run_1"},
            {"run_name", "demo-run"}, {"rank", 0},
            {"command", argv},        {"env", {{"PODIUM_X", "from-server"}}},
            {"workdir", ""},          {"checkpoint_dir", nullptr},
            {"grace_seconds", grace}};
  }

  std::filesystem::path local_copy(const std::string& attempt) {
    return dir.path() / "agent" / "logs" / attempt / "rank-0.log";
  }
};

bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  // A zombie waiting for a parent that does not reap (pid 1 of a container) is gone too.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

TEST_F(AgentFixture, RegistersRunsAProcessAndReportsItsLinesAndExit) {
  start();
  ASSERT_TRUE(eventually([&] { return !server.registrations().empty(); }));
  const auto reg = server.registrations().front();
  EXPECT_EQ(reg["cluster"], "demo");
  EXPECT_EQ(reg["slice"], 0);
  EXPECT_EQ(reg["host"], 1);
  EXPECT_EQ(reg["hostname"], "h1");
  EXPECT_EQ(reg["address"], "10.0.0.7");
  EXPECT_EQ(reg["devices"], 4);
  EXPECT_TRUE(reg["version"].is_string());
  EXPECT_EQ(reg["instance"].get<std::string>().size(), 32u);
  EXPECT_EQ(reg["instance"], agent->instance());
  EXPECT_EQ(reg["running"], nlohmann::json::array());
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(announce_mu);
    return !announced.empty();
  }));
  EXPECT_THAT(announced,
              ElementsAre("podium-worker registered as wkr_1 (cluster demo slice 0 host 1)"));

  const auto message = start_message(
      "att_1",
      {"/bin/sh", "-c", "for i in 1 2 3; do echo line $i; done; echo \"$PODIUM_X\"; exit 3"});
  server.assign(message);
  server.assign(message);  // delivered twice: must run once
  ASSERT_TRUE(eventually([&] { return server.exited("att_1"); }));

  const auto statuses = server.statuses("att_1");
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_EQ(statuses[0].body["state"], "running");
  EXPECT_EQ(statuses[0].body["rank"], 0);
  EXPECT_GT(statuses[0].body["pid"].get<int>(), 0);
  EXPECT_EQ(statuses[1].body,
            nlohmann::json::parse(R"({"rank":0,"state":"exited","exit_code":3,"signal":null})"));
  bool contiguous = false;
  const auto lines = server.lines("att_1", &contiguous);
  EXPECT_TRUE(contiguous);
  EXPECT_THAT(lines, ElementsAre("line 1", "line 2", "line 3", "from-server"));
  EXPECT_EQ(statuses[1].lines_stored_then, 4u);  // exited only after every line was stored
  EXPECT_EQ(testing::read_lines(local_copy("att_1")), lines);
  EXPECT_TRUE(eventually([&] { return server.heartbeats() >= 1; }, 5s));
}

// The host's metadata server, settable by the test.
class SettableMetadata final : public MetadataSource {
 public:
  std::optional<MetadataReading> read() override {
    std::lock_guard lock(mu_);
    return reading_;
  }
  const std::string& url() const override { return url_; }
  void set(std::optional<MetadataReading> r) {
    std::lock_guard lock(mu_);
    reading_ = std::move(r);
  }

 private:
  std::mutex mu_;
  std::optional<MetadataReading> reading_;
  std::string url_ = "test-metadata";
};

TEST_F(AgentFixture, HeartbeatsCarryTheHostsNoticeAsSoonAsItIsAnnounced) {
  auto source = std::make_shared<SettableMetadata>();
  source->set(MetadataReading{"FALSE", "NONE"});
  metadata = source;
  start();
  ASSERT_TRUE(eventually([&] { return server.heartbeats() >= 1; }, 5s));
  auto hb = server.last_heartbeat();
  ASSERT_TRUE(hb.contains("notice"));
  EXPECT_TRUE(hb["notice"].is_null());

  const int before = server.heartbeats();
  source->set(MetadataReading{"TRUE", "NONE"});
  // At once, not at the next interval: the platform gives about 30 s.
  ASSERT_TRUE(eventually(
      [&] { return server.last_heartbeat().value("notice", nlohmann::json()) == "preempted"; },
      3s));
  EXPECT_LE(server.heartbeats(), before + 2);

  // An unreachable metadata server changes nothing: the last notice stands.
  source->set(std::nullopt);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(server.last_heartbeat()["notice"], "preempted");

  source->set(MetadataReading{"FALSE", "NONE"});
  ASSERT_TRUE(eventually([&] { return server.last_heartbeat()["notice"].is_null(); }, 3s));
}

TEST_F(AgentFixture, WithoutAMetadataServerHeartbeatsSayNothingOfNotices) {
  start();
  ASSERT_TRUE(eventually([&] { return server.heartbeats() >= 1; }, 5s));
  EXPECT_FALSE(server.last_heartbeat().contains("notice"));
}

TEST_F(AgentFixture, LogBatchesFailingWithServiceUnavailableAreRetriedWithoutGapsOrDuplicates) {
  server.fail_logs(2);
  start();
  server.assign(start_message(
      "att_2", {"/bin/sh", "-c", "i=0; while [ $i -lt 1200 ]; do echo n $i; i=$((i+1)); done"}));
  ASSERT_TRUE(eventually([&] { return server.exited("att_2"); }, 20s));
  bool contiguous = false;
  const auto lines = server.lines("att_2", &contiguous);
  EXPECT_TRUE(contiguous);
  ASSERT_EQ(lines.size(), 1200u);
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i], "n " + std::to_string(i));
  EXPECT_GE(server.log_posts(), 3 + 2);
  EXPECT_EQ(server.statuses("att_2").back().body["exit_code"], 0);
  EXPECT_EQ(server.statuses("att_2").back().lines_stored_then, 1200u);
  EXPECT_EQ(testing::read_lines(local_copy("att_2")), lines);
}

TEST_F(AgentFixture, CancelKillsTheWholeProcessGroupWithinTheGrace) {
  start();
  // The shell ignores SIGTERM (and so does its background child): only SIGKILL ends them.
  server.assign(start_message(
      "att_3", {"/bin/sh", "-c", "trap '' TERM; sleep 1000 & echo grandchild $!; wait; wait"}, 1));
  ASSERT_TRUE(eventually([&] { return server.lines("att_3").size() == 1; }));
  const auto line = server.lines("att_3").front();
  ASSERT_EQ(line.rfind("grandchild ", 0), 0u) << line;
  const pid_t grandchild = std::stoi(line.substr(11));
  const pid_t child = server.statuses("att_3").front().body["pid"].get<pid_t>();
  EXPECT_FALSE(process_gone(grandchild));

  const auto cancelled_at = std::chrono::steady_clock::now();
  server.assign({{"cancel", {"att_3"}}, {"grace_seconds", 1}});
  ASSERT_TRUE(eventually([&] { return server.exited("att_3"); }));
  const auto took = std::chrono::steady_clock::now() - cancelled_at;
  EXPECT_GE(took, 900ms);  // SIGTERM was ignored: SIGKILL waited for the grace
  EXPECT_LT(took, 5s);
  EXPECT_EQ(server.statuses("att_3").back().body,
            nlohmann::json::parse(R"({"rank":0,"state":"exited","exit_code":null,"signal":9})"));
  EXPECT_TRUE(eventually([&] { return process_gone(grandchild) && process_gone(child); }, 3s));
}

TEST_F(AgentFixture, PlainSigtermEndsACooperativeProcess) {
  start();
  server.assign(start_message("att_4", {"/bin/sh", "-c", "echo up; exec sleep 1000"}, 30));
  ASSERT_TRUE(eventually([&] { return server.lines("att_4").size() == 1; }));
  server.assign({{"cancel", {"att_4"}}, {"grace_seconds", 30}});
  ASSERT_TRUE(eventually([&] { return server.exited("att_4"); }));
  EXPECT_EQ(server.statuses("att_4").back().body["signal"], SIGTERM);
}

TEST_F(AgentFixture, ReportsFinishedCheckpointDirectories) {
  start();
  const auto ckpt = dir.path() / "ckpt";
  auto message = start_message(
      "att_5", {"/bin/sh", "-c",
                "d=\"$CKPT\"; mkdir -p $d/10.tmp $d/20.orbax-checkpoint-tmp-1 && "
                "printf abc > $d/10.tmp/a && printf de > $d/10.tmp/b && mv $d/10.tmp $d/10"});
  message["env"]["CKPT"] = ckpt.string();
  message["checkpoint_dir"] = ckpt.string();
  server.assign(message);
  ASSERT_TRUE(eventually([&] { return server.exited("att_5"); }));
  const auto found = server.checkpoints();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0],
            (nlohmann::json{{"step", 10}, {"uri", (ckpt / "10").string()}, {"bytes", 5}}));
  EXPECT_EQ(server.statuses("att_5").back().body["exit_code"], 0);
}

TEST_F(AgentFixture, AProgramThatCannotStartIsExit127WithTheReason) {
  start();
  server.assign(start_message("att_6", {"/nonexistent/program", "--flag"}));
  ASSERT_TRUE(eventually([&] { return server.exited("att_6"); }));
  const auto statuses = server.statuses("att_6");
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].body["exit_code"], 127);
  const auto lines = server.lines("att_6");
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0], ::testing::HasSubstr("/nonexistent/program: No such file or directory"));
}

TEST_F(AgentFixture, RegistersAgainWhenTheServerForgotTheWorker) {
  start();
  server.assign(start_message("att_7", {"/bin/sh", "-c", "echo up; exec sleep 1000"}, 1));
  ASSERT_TRUE(eventually([&] { return server.lines("att_7").size() == 1; }));
  server.forget_workers();
  ASSERT_TRUE(eventually([&] { return server.registrations().size() >= 2; }));
  const auto again = server.registrations().back();
  EXPECT_EQ(again["instance"], agent->instance());  // same process: nothing is lost
  EXPECT_EQ(again["running"], nlohmann::json::parse(R"([{"attempt_id":"att_7","rank":0}])"));
  // Stopping the agent stops the process and reports it.
  agent->stop();
  thread.join();
  EXPECT_EQ(exit_code, 0);
  EXPECT_TRUE(server.exited("att_7"));
  EXPECT_EQ(server.statuses("att_7").back().body["signal"], SIGTERM);
}

// A heartbeat answered 401 makes the agent register again; meanwhile its rank keeps the lines it
// prints and delivers them under the new registration: none is dropped.
TEST_F(AgentFixture, RegistersAgainWhenTheServerRefusesItsCredentialAndLosesNoLine) {
  start();
  // The second line waits for the test, not for a time: on a busy machine a timed pause let both
  // lines arrive in one batch before the credential was refused (seen in CI).
  const auto go = dir.path() / "go";
  server.assign(start_message("att_8",
                              {"/bin/sh", "-c",
                               "echo before; while [ ! -e '" + go.string() +
                                   "' ]; do sleep 0.02; done; echo during; exec sleep 1000"},
                              1));
  ASSERT_TRUE(eventually([&] { return server.lines("att_8").size() == 1; }));
  server.refuse_credential();
  std::ofstream(go) << "go\n";
  ASSERT_TRUE(eventually([&] { return server.registrations().size() >= 2; }));
  ASSERT_TRUE(eventually([&] { return server.lines("att_8").size() == 2; }));
  EXPECT_THAT(server.lines("att_8"), ::testing::ElementsAre("before", "during"));
  agent->stop();
  thread.join();
  EXPECT_EQ(exit_code, 0);
}

TEST_F(AgentFixture, ARefusedTokenIsFatal) {
  start("pdw_wrong");
  thread.join();
  EXPECT_EQ(exit_code, 1);
  std::lock_guard lock(announce_mu);
  EXPECT_TRUE(announced.empty());
}

TEST_F(AgentFixture, AnUnknownSliceOrHostIsFatal) {
  server.set_register_status(422);
  start();
  thread.join();
  EXPECT_EQ(exit_code, 1);
}

}  // namespace
}  // namespace podium::worker
