// Issue 10 acceptance against a real Slurm (scripts/test-slurm.sh: slurmctld and two slurmd, n1
// and n2, on this machine; the test command starts it and exports SLURM_CONF): a 2-node
// reference run through sbatch/srun and `podium-worker attach` succeeds with both ranks' logs and
// every step's metrics in Podium; a node set DOWN mid-run ends the attempt as host_lost and, after
// the node is resumed, the run resumes from its latest checkpoint and succeeds with restarts 0;
// a cancel leaves no Slurm job behind; a run submitted with --code runs its bundle on both
// nodes, and a corrupted bundle fails the rank as a code error (issue 28.3).

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <thread>

#include "engine/bundle/archive.h"
#include "engine/bundle/bundle_files.h"
#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A shell command's standard output (and its exit status in *status).
std::string sh(const std::string& command, int* status = nullptr) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  if (status) *status = rc;
  return out;
}

std::string slurm_jobs_named(const std::string& name) {
  return sh("squeue -h -o '%i %T' -n '" + name + "'");
}

// Brings `nodes` (e.g. "n1,n2") back into service and waits until sinfo shows none of them
// down, drained or failed. Resuming a node that is already up is refused by scontrol ("Invalid
// node state specified"), and a node just resumed shows "idle*" until its slurmd answers, so the
// state is read back instead of trusting one command's exit status. Returns what was seen when
// the nodes did not come back within the deadline, empty on success.
std::string resume_nodes(const std::string& nodes, std::chrono::seconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  std::string seen;
  for (;;) {
    int status = 0;
    seen = sh("sinfo -h -N -o '%N %t' -n " + nodes, &status);
    const bool out_of_service = status != 0 || seen.find("down") != std::string::npos ||
                                seen.find("drain") != std::string::npos ||
                                seen.find("fail") != std::string::npos ||
                                seen.find('*') != std::string::npos;
    if (!out_of_service) return "";
    if (std::chrono::steady_clock::now() > until) return seen;
    for (const char* node : {"n1", "n2"})
      if (nodes.find(node) != std::string::npos &&
          sh("sinfo -h -N -o '%t' -n " + std::string(node)).find("down") != std::string::npos)
        seen += sh("scontrol update nodename=" + std::string(node) + " state=resume");
    std::this_thread::sleep_for(500ms);
  }
}

// Cancels every job in the test partition and waits until the queue is empty: a test that
// failed half-way leaves its run's Slurm job behind (the server that would cancel it is gone),
// and that job would hold the nodes the next test needs.
std::string clear_partition(std::chrono::seconds deadline) {
  sh("scancel -p podium");
  const auto until = std::chrono::steady_clock::now() + deadline;
  std::string left;
  while (!(left = sh("squeue -h -p podium -o '%i %T'")).empty()) {
    if (std::chrono::steady_clock::now() > until) return left;
    std::this_thread::sleep_for(500ms);
  }
  return "";
}

class SlurmExecutor : public E2eTest {
 protected:
  void SetUp() override {
    if (!std::getenv("SLURM_CONF"))
      GTEST_SKIP() << "SLURM_CONF is not set: start the test Slurm with scripts/test-slurm.sh "
                      "start (the README test command does)";
    int status = 0;
    const std::string nodes = sh("sinfo -h -N -o '%N %t' -p podium", &status);
    ASSERT_EQ(status, 0) << "sinfo failed: " << nodes;
    // A previous test may have left a job behind or n2 down: start from an idle partition.
    const std::string left = clear_partition(60s);
    ASSERT_EQ(left, "") << "jobs still in the test partition";
    const std::string down = resume_nodes("n1,n2", 60s);
    ASSERT_EQ(down, "") << "test nodes not back in service";
    E2eTest::SetUp();
  }
  void TearDown() override {
    E2eTest::TearDown();
    if (std::getenv("SLURM_CONF")) {
      clear_partition(60s);
      resume_nodes("n1,n2", 60s);
    }
  }

  std::string slurm_cluster() {
    const std::string name = unique_name("slurm");
    auto r = admin().post("/api/v1/clusters",
                          {{"name", name},
                           {"accelerator", "cpu-2"},
                           {"num_slices", 1},
                           {"executor", {{"kind", "slurm"}, {"partition", "podium"}}}});
    EXPECT_EQ(r.status, 201) << r;
    return name;
  }

  static std::string job_name(const std::string& run_id, int attempt) {
    return "podium-" + run_id + "-" + std::to_string(attempt);
  }
};

TEST_F(SlurmExecutor, TwoNodeReferenceRunSucceedsWithLogsAndMetrics) {
  const auto cluster = slurm_cluster();
  const auto ds = dataset();
  const json run = submit(
      reference_spec(unique_name("slurm-ok"), cluster, ds, {.steps = 30, .checkpoint_period = 10}));
  const std::string id = run["id"];
  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 300s, &done));
  EXPECT_EQ(done.value("restarts", -1), 0);

  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u) << describe_attempts(att) << diagnostics(id);
  const json& a = att[0];
  EXPECT_EQ(a.value("executor", ""), "slurm");
  ASSERT_TRUE(a["engine"].is_object()) << a.dump();
  EXPECT_TRUE(a["engine"]["job_id"].is_string()) << a.dump();
  EXPECT_EQ(a["engine"]["state"], "COMPLETED") << a.dump();
  ASSERT_EQ(a["hosts"].size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    const auto lines = stored_logs(id, a["id"], rank);
    std::vector<std::string> text;
    for (const auto& l : lines) text.push_back(l.value("line", ""));
    EXPECT_EQ(step_lines(text), step_range(0, 30)) << "rank " << rank << " logs";
    for (size_t i = 0; i < lines.size(); ++i)
      EXPECT_EQ(lines[i].value("seq", -1), static_cast<int>(i)) << "rank " << rank;
  }
  EXPECT_TRUE(metrics_steps_are(metrics(id), step_range(0, 30), true));
  EXPECT_EQ(checkpoint_steps(id), (std::vector<int>{10, 20, 30}));

  // The manifest is what was given to sbatch, without the token.
  auto m = admin().get("/api/v1/runs/" + id + "/manifest");
  ASSERT_EQ(m.status, 200) << m;
  EXPECT_EQ(m.json.value("applied", false), true);
  const std::string text = m.json.value("manifest", "");
  EXPECT_NE(text.find("--no-requeue"), std::string::npos) << text;
  EXPECT_NE(text.find("attach"), std::string::npos) << text;
  EXPECT_EQ(text.find("pda_"), std::string::npos) << "the token leaked into the manifest";
  EXPECT_EQ(slurm_jobs_named(job_name(id, 1)), "");
}

TEST_F(SlurmExecutor, NodeSetDownIsHostLostAndTheRunResumesWithoutSpendingRestarts) {
  const auto cluster = slurm_cluster();
  const auto ds = dataset();
  const json run = submit(reference_spec(unique_name("slurm-down"), cluster, ds,
                                         {.steps = 60,
                                          .per_device_batch_size = 8,
                                          .max_target_length = 128,
                                          .checkpoint_period = 10,
                                          .max_restarts = 0}));
  const std::string id = run["id"];
  // Past checkpoint 10 and before checkpoint 30 (steps are a few tenths of a second).
  ASSERT_TRUE(wait_for_run(
      id, "attempt 1 past checkpoint 10",
      [&](const json& r) {
        if (r.value("state", "") != "running") return false;
        auto steps = checkpoint_steps(id);
        return !steps.empty() && steps.front() == 10;
      },
      240s));
  int status = 0;
  const std::string out = sh("scontrol update nodename=n2 state=down reason=podium-e2e", &status);
  ASSERT_EQ(status, 0) << out;
  std::cout << "n2 set down at checkpoint(s) " << ::testing::PrintToString(checkpoint_steps(id))
            << "\n";

  // The attempt ends as host_lost; the next one waits in Slurm while n2 is down.
  json waiting;
  ASSERT_TRUE(wait_for_run(
      id, "attempt 1 host_lost and attempt 2 waiting in Slurm",
      [&](const json& r) {
        auto att = attempts(id);
        return att.size() == 2 && att[0].value("failure_class", json()) == json("host_lost") &&
               r.value("waiting_reason", json()).is_string() &&
               r["waiting_reason"].get<std::string>().find("PENDING") != std::string::npos;
      },
      90s, &waiting));
  const auto att1 = attempts(id);
  EXPECT_EQ(att1[0]["engine"]["state"], "NODE_FAIL") << describe_attempts(att1);
  EXPECT_EQ(waiting.value("restarts", -1), 0);
  std::cout << "waiting while n2 is down: " << waiting.value("waiting_reason", "") << "\n";
  EXPECT_NE(waiting.value("waiting_reason", "").find("slurm job"), std::string::npos)
      << waiting.dump();
  EXPECT_EQ(waiting.value("state", ""), "starting") << waiting.dump();

  const std::string still_down = resume_nodes("n2", 60s);
  ASSERT_EQ(still_down, "") << "n2 did not come back into service";
  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 300s, &done));
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump();
  EXPECT_EQ(done.value("recoveries", -1), 1) << done.dump();
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 2u) << describe_attempts(att);
  EXPECT_EQ(att[1].value("reason", ""), "recovery");
  const json resumed = att[1].value("resumed_from_step", json());
  ASSERT_TRUE(resumed.is_number_integer()) << describe_attempts(att);
  EXPECT_GE(resumed.get<int>(), 10);
  EXPECT_EQ(att[1].value("first_step", json()), resumed) << describe_attempts(att);
  EXPECT_TRUE(metrics_steps_are(metrics(id), step_range(0, 60), false));
  EXPECT_EQ(slurm_jobs_named(job_name(id, 2)), "");
}

TEST_F(SlurmExecutor, CancelLeavesNoSlurmJob) {
  const auto cluster = slurm_cluster();
  const auto ds = dataset();
  const json run = submit(reference_spec(unique_name("slurm-cancel"), cluster, ds,
                                         {.steps = 1000, .checkpoint_period = 500}));
  const std::string id = run["id"];
  ASSERT_TRUE(wait_for_state(id, "running", 240s));
  ASSERT_NE(slurm_jobs_named(job_name(id, 1)), "");
  auto c = admin().post("/api/v1/runs/" + id + "/cancel");
  ASSERT_TRUE(c.status == 200 || c.status == 202) << c;
  json done;
  ASSERT_TRUE(wait_for_state(id, "cancelled", 60s, &done));
  EXPECT_TRUE(eventually([&] { return slurm_jobs_named(job_name(id, 1)).empty(); }, 30s))
      << slurm_jobs_named(job_name(id, 1));
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u);
  EXPECT_EQ(att[0].value("state", ""), "cancelled") << describe_attempts(att);
}

// Issue 28.3: `podium runs submit --code DIR` on a Slurm cluster. Each node's
// `podium-worker attach` fetches the run's bundle with its attach token, checks its digest and
// runs the rank in its own unpacked copy: both ranks print the bundle's marker file.
TEST_F(SlurmExecutor, ACodeBundleRunsOnEveryNode) {
  const auto cluster = slurm_cluster();
  const fs::path code = dir() / "code";
  fs::create_directories(code / "app");
  const std::string marker = "marker " + unique_name("m");
  std::ofstream(code / "app" / "marker.txt") << marker << "\n";
  std::ofstream(code / "app" / "show.sh") << "echo \"bundle says: $(cat marker.txt)\"\n"
                                             "echo \"bundle rank $RANK in $(pwd)\"\n";
  const std::string name = unique_name("slurm-code");
  const fs::path spec = dir() / "run.yaml";
  std::ofstream(spec) << "name: " << name << "\ncluster: " << cluster
                      << "\nworkload: command\ncommand: [\"/bin/sh\", \"show.sh\"]\n"
                         "workdir: app\nmax_restarts: 0\n";
  const std::string cli = "PODIUM_SERVER='" + podium().url() + "' PODIUM_TOKEN='" +
                          podium().server().admin_token() + "' '" + it::binary("podium").string() +
                          "'";
  int status = 0;
  const std::string out =
      sh(cli + " runs submit -f '" + spec.string() + "' --code '" + code.string() + "'", &status);
  ASSERT_EQ(status, 0) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("(sha256:[0-9a-f]{64})"))) << out;
  const std::string digest = m[1].str();
  ASSERT_TRUE(std::regex_search(out, m, std::regex("submitted run (run_[0-9a-f]+)"))) << out;
  const std::string id = m[1].str();

  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 180s, &done)) << diagnostics(id);
  EXPECT_EQ(done["spec"]["code_bundle"], digest);
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u) << describe_attempts(att);
  const std::string attempt_id = att[0]["id"];
  EXPECT_EQ(att[0].value("executor", ""), "slurm");
  ASSERT_EQ(att[0]["hosts"].size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    std::string joined;
    for (const auto& l : stored_logs(id, attempt_id, rank))
      joined += l["line"].get<std::string>() + "\n";
    SCOPED_TRACE(joined);
    EXPECT_NE(joined.find("bundle says: " + marker), std::string::npos);
    // Its own copy, per attempt and rank, in the relative workdir inside it.
    EXPECT_NE(joined.find("bundle rank " + std::to_string(rank) + " in /"), std::string::npos);
    EXPECT_NE(joined.find("/code/" + attempt_id + "/rank-" + std::to_string(rank) + "/app"),
              std::string::npos);
  }
  // The job carries the bundle's digest for the wrapper, and still no token.
  auto manifest = admin().get("/api/v1/runs/" + id + "/manifest");
  ASSERT_EQ(manifest.status, 200) << manifest;
  const std::string text = manifest.json.value("manifest", "");
  EXPECT_NE(text.find("PODIUM_CODE_BUNDLE=" + digest + "\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("pda_"), std::string::npos) << "the token leaked into the manifest";
}

// A bundle whose stored bytes no longer hash to its name: the wrapper retries a few downloads,
// then fails the rank before anything runs, and the attempt is classified code_error by the
// code_bundle_unusable signature (not run from whatever the nodes hold).
TEST_F(SlurmExecutor, ACorruptedBundleFailsTheRankAsACodeError) {
  const auto cluster = slurm_cluster();
  bundle::BundleWriter w;
  w.add_file("show.sh", false, "echo this must not run\n");
  const std::string bytes = w.finish();
  const std::string digest = bundle::bundle_digest(bytes);
  auto put = admin().raw("PUT", "/api/v1/bundles/" + digest, bytes,
                         {{"Content-Type", "application/gzip"}});
  ASSERT_EQ(put.status, 201) << put;
  // Damage one byte of the stored archive (as a disk or a bad restore would).
  podium().db().query(
      "UPDATE code_bundle_chunks SET bytes = set_byte(bytes, 20, (get_byte(bytes, 20) + 1) % 256) "
      "WHERE digest = $1 AND seq = 0",
      {digest});
  const json run = submit({{"name", unique_name("slurm-corrupt")},
                           {"cluster", cluster},
                           {"workload", "command"},
                           {"command", {"/bin/sh", "show.sh"}},
                           {"code_bundle", digest},
                           {"max_restarts", 0}});
  const std::string id = run["id"];
  json done;
  ASSERT_TRUE(wait_for_state(id, "failed", 180s, &done)) << diagnostics(id);
  EXPECT_EQ(done.value("failure_class", json()), json("code_error")) << diagnostics(id);
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u) << describe_attempts(att);
  const json classification = att[0].value("classification", json());
  EXPECT_EQ(classification.value("deciding_signature", json()), json("code_bundle_unusable"))
      << classification.dump();
  const std::string reason = classification.value("reason", "");
  EXPECT_NE(reason.find("digest is sha256:"), std::string::npos) << reason;
  EXPECT_NE(reason.find("not " + digest), std::string::npos) << reason;
  for (int rank = 0; rank < 2; ++rank) {
    std::string joined;
    for (const auto& l : stored_logs(id, att[0]["id"], rank))
      joined += l["line"].get<std::string>() + "\n";
    EXPECT_EQ(joined.find("this must not run"), std::string::npos) << joined;
  }
}

}  // namespace
}  // namespace podium::e2e
