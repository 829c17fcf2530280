#include "engine/core/executors/slurm_job.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace podium::core {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

SlurmJobRequest two_nodes() {
  SlurmJobRequest r;
  r.run_id = "run_42";
  r.attempt_id = "att_7";
  r.attempt_number = 2;
  r.hosts_per_slice = 2;
  r.num_slices = 1;
  r.worker_path = "/opt/podium/bin/podium-worker";
  r.server_url = "http://10.0.0.5:8080";
  r.output_dir = "/shared/podium/slurm";
  r.executor.partition = "a3mega";
  r.executor.account = "llm";
  r.executor.qos = "high";
  r.executor.sbatch_args = {"--time=02:00:00"};
  r.executor.env = {{"NCCL_DEBUG", "INFO"}};
  return r;
}

TEST(SlurmJob, OneTaskPerNodeNoRequeueAndTheUsersOptions) {
  const auto s = build_sbatch(two_nodes());
  EXPECT_EQ(s.argv.front(), "sbatch");
  for (const char* want :
       {"--parsable", "--no-requeue", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
        "--partition=a3mega", "--account=llm", "--qos=high", "--time=02:00:00",
        "--job-name=podium-run_42-2", "--output=/shared/podium/slurm/slurm-%j.out"})
    EXPECT_TRUE(has(s.argv, want)) << want;
  EXPECT_NE(s.script.find("srun --kill-on-bad-exit=1"), std::string::npos);
  EXPECT_NE(s.script.find("'/opt/podium/bin/podium-worker' attach"), std::string::npos);
  EXPECT_EQ(s.env.at("PODIUM_SERVER"), "http://10.0.0.5:8080");
  EXPECT_EQ(s.env.at("PODIUM_ATTEMPT_ID"), "att_7");
  EXPECT_EQ(s.env.at("PODIUM_HOSTS_PER_SLICE"), "2");
  EXPECT_EQ(s.env.at("PODIUM_NUM_SLICES"), "1");
  EXPECT_EQ(s.env.at("NCCL_DEBUG"), "INFO");
  // The token is added at submission, to sbatch's environment only.
  EXPECT_FALSE(s.env.count("PODIUM_ATTACH_TOKEN"));
}

// Code bundles (issue 28.3): the tasks' environment names the run's bundle for the wrapper; a
// cluster's own env cannot replace it.
TEST(SlurmJob, TheRunsCodeBundleIsInTheTasksEnvironment) {
  EXPECT_FALSE(build_sbatch(two_nodes()).env.count("PODIUM_CODE_BUNDLE"));
  auto r = two_nodes();
  r.code_bundle = "sha256:" + std::string(64, 'd');
  r.executor.env["PODIUM_CODE_BUNDLE"] = "sha256:" + std::string(64, 'e');
  EXPECT_EQ(build_sbatch(r).env.at("PODIUM_CODE_BUNDLE"), r.code_bundle);
}

TEST(SlurmJob, GpuNodesAskForTheirGpusUnlessTheUserDid) {
  auto r = two_nodes();
  r.accelerator_kind = "gpu";
  r.gpus_per_node = 8;
  EXPECT_TRUE(has(build_sbatch(r).argv, "--gpus-per-node=8"));
  r.executor.sbatch_args = {"--gres=gpu:8"};
  EXPECT_FALSE(has(build_sbatch(r).argv, "--gpus-per-node=8"));
}

TEST(SlurmJob, WorkerPathIsQuotedForTheShell) {
  auto r = two_nodes();
  r.worker_path = "/opt/it's here/podium-worker";
  EXPECT_NE(build_sbatch(r).script.find("'/opt/it'\\''s here/podium-worker' attach"),
            std::string::npos);
  r.worker_path.clear();
  EXPECT_THROW(build_sbatch(r), std::invalid_argument);
}

TEST(SlurmJob, SbatchJobId) {
  EXPECT_EQ(parse_sbatch_job_id("4711\n"), "4711");
  EXPECT_EQ(parse_sbatch_job_id("4711;cluster\n"), "4711");
  EXPECT_EQ(parse_sbatch_job_id("sbatch: warning: x\n812\n"), "812");
  EXPECT_FALSE(parse_sbatch_job_id("Submitted batch job"));
  EXPECT_FALSE(parse_sbatch_job_id(""));
}

// A record as `scontrol show job -o` printed it for a job whose node was set down.
constexpr const char* kNodeFail =
    "JobId=1 JobName=podtest UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901759 "
    "Nice=0 Account=(null) QOS=(null) JobState=NODE_FAIL Reason=NodeDown Dependency=(null) "
    "Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:15 RunTime=00:00:03 "
    "ReqB:S:C:T=0:0:*:* NtasksPerN:B:S:C=1:0:*:* NodeList=n[1-2] BatchHost=n1 NumNodes=2\n";

TEST(SlurmJob, ScontrolRecordParses) {
  auto rec = parse_scontrol_record(kNodeFail);
  EXPECT_EQ(rec.at("JobState"), "NODE_FAIL");
  EXPECT_EQ(rec.at("Reason"), "NodeDown");
  EXPECT_EQ(rec.at("ExitCode"), "0:15");
  EXPECT_EQ(rec.at("NtasksPerN:B:S:C"), "1:0:*:*");
  auto pending = parse_scontrol_record(
      "JobId=3 JobState=PENDING Reason=ReqNodeNotAvail, UnavailableNodes:n2 Dependency=(null)");
  EXPECT_EQ(pending.at("Reason"), "ReqNodeNotAvail, UnavailableNodes:n2");
  EXPECT_EQ(pending.at("Dependency"), "(null)");
}

TEST(SlurmJob, EndStatesMapToFailureClasses) {
  using Phase = EngineObservation::Phase;
  const auto node_fail = observe_scontrol(parse_scontrol_record(kNodeFail), false);
  EXPECT_EQ(node_fail.phase, Phase::finished);
  EXPECT_EQ(node_fail.failure_class, FailureClass::host_lost);
  EXPECT_NE(node_fail.reason.find("NodeDown"), std::string::npos);

  struct Row {
    const char* state;
    std::optional<FailureClass> cls;
    bool succeeded;
  };
  const Row rows[] = {{"COMPLETED", std::nullopt, true},
                      {"BOOT_FAIL", FailureClass::host_lost, false},
                      {"PREEMPTED", FailureClass::preempted, false},
                      {"OUT_OF_MEMORY", FailureClass::oom, false},
                      {"TIMEOUT", FailureClass::error, false},
                      {"DEADLINE", FailureClass::error, false},
                      {"FAILED", std::nullopt, false},
                      {"SPECIAL_EXIT", FailureClass::error, false},
                      {"REVOKED", FailureClass::error, false}};
  for (const auto& row : rows) {
    const auto o = observe_slurm_state(row.state, "None", "1:0", false);
    EXPECT_EQ(o.phase, Phase::finished) << row.state;
    EXPECT_EQ(o.failure_class, row.cls) << row.state;
    EXPECT_EQ(o.succeeded, row.succeeded) << row.state;
    EXPECT_EQ(o.engine_state, row.state);
  }
  EXPECT_EQ(observe_slurm_state("FAILED", "NonZeroExitCode", "3:0", false).exit_code, 3);
  // Podium's own scancel leaves the decision to the ranks; anyone else's is a failure.
  EXPECT_FALSE(observe_slurm_state("CANCELLED", "None", "0:15", true).failure_class);
  EXPECT_EQ(observe_slurm_state("CANCELLED", "None", "0:15", false).failure_class,
            FailureClass::error);
}

TEST(SlurmJob, QueuedAndRunningStates) {
  using Phase = EngineObservation::Phase;
  auto pending = observe_slurm_state("PENDING", "Resources", "0:0", false);
  EXPECT_EQ(pending.phase, Phase::queued);
  EXPECT_EQ(pending.waiting_reason, "Resources");
  EXPECT_EQ(observe_slurm_state("CONFIGURING", "None", "0:0", false).phase, Phase::queued);
  EXPECT_EQ(observe_slurm_state("REQUEUED", "", "", false).phase, Phase::queued);
  EXPECT_EQ(observe_slurm_state("RUNNING", "None", "0:0", false).phase, Phase::running);
  EXPECT_EQ(observe_slurm_state("COMPLETING", "None", "0:0", false).phase, Phase::running);
}

TEST(SlurmJob, SacctLines) {
  auto o = observe_sacct("CANCELLED by 0|0:15|None\n", true);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->engine_state, "CANCELLED");
  EXPECT_FALSE(o->failure_class);
  auto nf = observe_sacct("NODE_FAIL|0:0|NodeDown\n", false);
  ASSERT_TRUE(nf);
  EXPECT_EQ(nf->failure_class, FailureClass::host_lost);
  EXPECT_FALSE(observe_sacct("", false));
  EXPECT_FALSE(observe_sacct("garbage", false));
}

}  // namespace
}  // namespace podium::core
