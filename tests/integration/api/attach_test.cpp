// The attach protocol of external executors, end to end through the real server with fake Slurm
// commands on its PATH (sbatch records what it was given and prints a job id; scontrol reports
// the state a file holds; scancel writes CANCELLED there). The test plays the two ranks' attach
// calls itself, so every answer can be checked: the join barrier, the rank's assignment, the
// token's scope and lifetime, and that an attempt finishes only on the engine's verdict.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_script(const fs::path& p, const std::string& body) {
  std::ofstream(p) << "#!/bin/sh\n" << body;
  fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
}

// A directory of fake Slurm commands and the files they keep, shared by the test and the server.
class FakeSlurm {
 public:
  FakeSlurm()
      : dir_(fs::temp_directory_path() /
             ("podium-fake-slurm-" + std::to_string(getpid()) + "-" + unique_name("d"))) {
    fs::create_directories(dir_ / "bin");
    // The directory is written into the scripts: the server gives Slurm's commands only PATH,
    // HOME, LANG and SLURM_CONF of its environment.
    const std::string d = "d='" + dir_.string() + "'\n";
    write_script(
        dir_ / "bin" / "sbatch",
        d + "n=$(($(cat \"$d/next\" 2>/dev/null || echo 100) + 1)); echo $n > \"$d/next\"\n"
            "cat > \"$d/script.$n\"; echo \"$@\" > \"$d/args.$n\"\n"
            "env | grep '^PODIUM_' > \"$d/env.$n\"\n"
            "echo PENDING > \"$d/state.$n\"\n"
            "echo $n\n");
    write_script(dir_ / "bin" / "scontrol",
                 d + "id=\"$4\"\n"
                     "[ -f \"$d/state.$id\" ] || { echo 'slurm_load_jobs error: Invalid job id "
                     "specified' >&2; exit 1; }\n"
                     "echo \"JobId=$id JobState=$(cat \"$d/state.$id\") Reason=Resources "
                     "ExitCode=0:0\"\n");
    // As Slurm: a job that already ended keeps its end state.
    write_script(dir_ / "bin" / "scancel",
                 d + "case \"$(cat \"$d/state.$1\")\" in PENDING|RUNNING) echo CANCELLED > "
                     "\"$d/state.$1\";; esac\n");
    write_script(dir_ / "bin" / "sacct", "exit 1\n");
  }
  ~FakeSlurm() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& dir() const { return dir_; }
  std::string path_env() const { return (dir_ / "bin").string() + ":/usr/bin:/bin"; }
  void set_state(const std::string& job, const std::string& state) const {
    std::ofstream(dir_ / ("state." + job)) << state << "\n";
  }
  std::string state(const std::string& job) const {
    auto s = read_file(dir_ / ("state." + job));
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  // PODIUM_* variables sbatch saw for job `job`.
  std::map<std::string, std::string> env(const std::string& job) const {
    std::map<std::string, std::string> out;
    std::istringstream in(read_file(dir_ / ("env." + job)));
    for (std::string line; std::getline(in, line);)
      if (auto eq = line.find('='); eq != std::string::npos)
        out[line.substr(0, eq)] = line.substr(eq + 1);
    return out;
  }

 private:
  fs::path dir_;
};

FakeSlurm& fake() {
  static FakeSlurm f;
  return f;
}

class Attach : public PodiumTest {
 protected:
  Podium::Options options() const override {
    Podium::Options o;
    o.env = {{"PATH", fake().path_env()}};
    return o;
  }

  // A slurm cluster of 2 hosts and a command run on it; returns {run id, job id, token}.
  std::tuple<std::string, std::string, std::string> submitted_run(const std::string& cluster) {
    auto run = podium().submit_run(podium().admin(), cluster);
    const std::string id = run["id"];
    std::string job;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      auto a = podium().admin().get("/api/v1/runs/" + id + "/attempts");
      if (a.status == 200 && !a.json["items"].empty() && a.json["items"][0]["engine"].is_object() &&
          a.json["items"][0]["engine"]["job_id"].is_string()) {
        job = a.json["items"][0]["engine"]["job_id"];
        break;
      }
      std::this_thread::sleep_for(100ms);
    }
    EXPECT_FALSE(job.empty()) << "never submitted to the fake sbatch";
    return {id, job, fake().env(job)["PODIUM_ATTACH_TOKEN"]};
  }

  json wait_run(const std::string& id, const std::function<bool(const json&)>& done) {
    json r;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      r = podium().admin().get("/api/v1/runs/" + id).json;
      if (done(r)) return r;
      std::this_thread::sleep_for(100ms);
    }
    ADD_FAILURE() << "run never reached the expected state: " << r.dump();
    return r;
  }

  std::string slurm_cluster() {
    const std::string name = unique_name("slurm");
    podium().create_cluster(name, "cpu-2",
                            {{"executor", {{"kind", "slurm"}, {"partition", "gpu"}}}});
    return name;
  }
};

json join(int rank, int slice, int host, const std::string& address) {
  return {{"engine", "slurm"},
          {"rank", rank},
          {"world", 2},
          {"slice", slice},
          {"host", host},
          {"address", address},
          {"hostname", "node" + std::to_string(rank)}};
}

TEST_F(Attach, RanksJoinRunAndFinishOnTheEnginesVerdict) {
  const auto cluster = slurm_cluster();
  auto [run_id, job, token] = submitted_run(cluster);
  ASSERT_FALSE(token.empty());
  ASSERT_EQ(token.rfind("pda_", 0), 0u) << token;
  auto env = fake().env(job);
  EXPECT_EQ(env["PODIUM_HOSTS_PER_SLICE"], "2");
  EXPECT_EQ(env["PODIUM_NUM_SLICES"], "1");
  EXPECT_EQ(env["PODIUM_ENGINE"], "slurm");
  // The token is in sbatch's environment only: not in its arguments or its script.
  const std::string args = read_file(fake().dir() / ("args." + job));
  EXPECT_NE(args.find("--partition=gpu"), std::string::npos) << args;
  EXPECT_NE(args.find("--nodes=2"), std::string::npos) << args;
  EXPECT_EQ(args.find(token), std::string::npos);
  EXPECT_EQ(read_file(fake().dir() / ("script." + job)).find(token), std::string::npos);

  // While Slurm holds it, its reason is the run's.
  auto waiting = wait_run(run_id, [](const json& r) {
    return r.value("waiting_reason", json()).is_string() &&
           r["waiting_reason"].get<std::string>().find("PENDING") != std::string::npos;
  });
  EXPECT_NE(waiting["waiting_reason"].get<std::string>().find("Resources"), std::string::npos)
      << waiting.dump();
  fake().set_state(job, "RUNNING");

  auto rank = podium().as(token);
  auto first = rank.post("/api/v1/agent/attach", join(0, 0, 0, "10.1.0.1"));
  ASSERT_EQ(first.status, 202) << first;
  // A rank whose slice and host disagree with the gang is refused.
  EXPECT_EQ(rank.post("/api/v1/agent/attach", join(1, 0, 0, "10.1.0.2")).status, 422);
  auto second = rank.post("/api/v1/agent/attach", join(1, 0, 1, "10.1.0.2"));
  ASSERT_EQ(second.status, 200) << second;
  EXPECT_EQ(second.json["rank"], 1);
  EXPECT_EQ(second.json["command"], json({"true"}));
  const auto& e = second.json["env"];
  ASSERT_TRUE(e.is_object()) << second;
  // Rank 0's address is the coordinator; the identity is the rank's own.
  EXPECT_EQ(e["JAX_COORDINATOR_ADDRESS"].get<std::string>().rfind("10.1.0.1:", 0), 0u) << e;
  EXPECT_EQ(e["JAX_PROCESS_ID"], "1") << e;
  EXPECT_EQ(e["TPU_WORKER_HOSTNAMES"], "10.1.0.1,10.1.0.2") << e;
  auto again = rank.post("/api/v1/agent/attach", join(0, 0, 0, "10.1.0.1"));
  ASSERT_EQ(again.status, 200) << again;
  EXPECT_EQ(again.json["env"]["JAX_PROCESS_ID"], "0");

  // The token acts for its attempt's ranks, never as an agent or for another attempt.
  const std::string attempt = second.json["attempt_id"];
  EXPECT_EQ(rank.post("/api/v1/agent/heartbeat", {{"worker_id", "wkr_x"}}).status, 403);
  auto [other_run, other_job, other_token] = submitted_run(cluster);
  auto others =
      podium().admin().get("/api/v1/runs/" + other_run + "/attempts").json["items"][0]["id"];
  auto forged = rank.post("/api/v1/agent/attempts/" + others.get<std::string>() + "/status",
                          {{"rank", 0}, {"state", "exited"}, {"exit_code", 1}});
  EXPECT_EQ(forged.status, 403) << forged;
  EXPECT_EQ(podium().admin().get("/api/v1/runs/" + other_run).json["state"], "starting");

  for (int r : {0, 1})
    ASSERT_EQ(rank.post("/api/v1/agent/attempts/" + attempt + "/status",
                        {{"rank", r}, {"state", "running"}, {"pid", 100 + r}})
                  .status,
              200);
  wait_run(run_id, [](const json& r) { return r["state"] == "running"; });
  for (int r : {0, 1})
    ASSERT_EQ(rank.post("/api/v1/agent/attempts/" + attempt + "/status",
                        {{"rank", r}, {"state", "exited"}, {"exit_code", 0}})
                  .status,
              200);
  // Every rank exited, but the engine has not said the job ended: the run is not done yet.
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(podium().admin().get("/api/v1/runs/" + run_id).json["state"], "running");
  fake().set_state(job, "COMPLETED");
  auto done = wait_run(run_id, [](const json& r) { return r["state"] == "succeeded"; });
  EXPECT_EQ(done["state"], "succeeded");
  auto att = podium().admin().get("/api/v1/runs/" + run_id + "/attempts").json["items"][0];
  EXPECT_EQ(att["engine"]["state"], "COMPLETED") << att;
  EXPECT_EQ(att["executor"], "slurm");
  // The attempt is over: its token is dead.
  EXPECT_EQ(rank.post("/api/v1/agent/attach", join(0, 0, 0, "10.1.0.1")).status, 401);

  // The manifest is what sbatch got, the token a placeholder.
  auto m = podium().admin().get("/api/v1/runs/" + run_id + "/manifest");
  ASSERT_EQ(m.status, 200) << m;
  EXPECT_TRUE(m.json["applied"].get<bool>());
  EXPECT_EQ(m.json["job_id"], job);
  EXPECT_EQ(m.json["manifest"].get<std::string>().find(token), std::string::npos);
  EXPECT_NE(m.json["manifest"].get<std::string>().find("srun --kill-on-bad-exit=1"),
            std::string::npos);

  // Cancelling the other run scancels its job.
  ASSERT_EQ(podium().admin().post("/api/v1/runs/" + other_run + "/cancel").status, 200);
  wait_run(other_run, [](const json& r) { return r["state"] == "cancelled"; });
  EXPECT_EQ(fake().state(other_job), "CANCELLED");
}

TEST_F(Attach, NodeFailureEndsTheAttemptAsHostLostWithoutSpendingRestarts) {
  const auto cluster = slurm_cluster();
  auto [run_id, job, token] = submitted_run(cluster);
  fake().set_state(job, "RUNNING");
  auto rank = podium().as(token);
  ASSERT_EQ(rank.post("/api/v1/agent/attach", join(0, 0, 0, "10.1.0.1")).status, 202);
  auto joined = rank.post("/api/v1/agent/attach", join(1, 0, 1, "10.1.0.2"));
  ASSERT_EQ(joined.status, 200) << joined;
  const std::string attempt = joined.json["attempt_id"];
  for (int r : {0, 1})
    rank.post("/api/v1/agent/attempts/" + attempt + "/status",
              {{"rank", r}, {"state", "running"}, {"pid", 100 + r}});
  // The node fails: Slurm SIGTERMs rank 0 (it reports so), rank 1's node is gone (no report).
  rank.post("/api/v1/agent/attempts/" + attempt + "/status",
            {{"rank", 0}, {"state", "exited"}, {"signal", 15}});
  fake().set_state(job, "NODE_FAIL");
  auto next = wait_run(run_id, [](const json& r) { return r["recoveries"] == 1; });
  EXPECT_EQ(next["restarts"], 0) << next;
  auto items = podium().admin().get("/api/v1/runs/" + run_id + "/attempts").json["items"];
  ASSERT_GE(items.size(), 1u);
  EXPECT_EQ(items[0]["failure_class"], "host_lost") << items[0];
  EXPECT_EQ(items[0]["engine"]["state"], "NODE_FAIL");
}

TEST_F(Attach, ExecutorValidationAnswers422AndChangesNothing) {
  auto admin = podium().admin();
  auto bad =
      admin.post("/api/v1/clusters",
                 {{"name", unique_name("bad")},
                  {"accelerator", "cpu-2"},
                  {"executor",
                   {{"kind", "slurm"}, {"sbatch_args", {"--nodes=9"}}, {"env", {{"RANK", "3"}}}}}});
  ASSERT_EQ(bad.status, 422) << bad;
  const std::string text = bad.body;
  EXPECT_NE(text.find("executor.sbatch_args[0]"), std::string::npos) << text;
  EXPECT_NE(text.find("executor.env.RANK"), std::string::npos) << text;
  EXPECT_EQ(admin
                .post("/api/v1/clusters", {{"name", unique_name("bad")},
                                           {"accelerator", "cpu-2"},
                                           {"executor", {{"kind", "pbs"}}}})
                .status,
            422);
  const auto name = unique_name("c");
  podium().create_cluster(name, "cpu-2");
  EXPECT_EQ(admin.get("/api/v1/clusters/" + name).json["executor"], json({{"kind", "agent"}}));
  auto patched = admin.patch("/api/v1/clusters/" + name,
                             {{"executor", {{"kind", "kubernetes"}, {"namespace", "Bad"}}}});
  EXPECT_EQ(patched.status, 422) << patched;
  EXPECT_EQ(admin.get("/api/v1/clusters/" + name).json["executor"], json({{"kind", "agent"}}));
  auto ok = admin.patch("/api/v1/clusters/" + name,
                        {{"executor", {{"kind", "kubernetes"}, {"queue", "multislice-queue"}}}});
  ASSERT_EQ(ok.status, 200) << ok;
  EXPECT_EQ(ok.json["executor"]["queue"], "multislice-queue");
  EXPECT_EQ(ok.json["executor"]["namespace"], "default");
}

}  // namespace
}  // namespace podium::it
