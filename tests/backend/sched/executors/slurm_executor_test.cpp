#include "backend/sched/executors/slurm_executor.h"

#include <gtest/gtest.h>

#include "tests/backend/sched/executors/fake_command_runner.h"

namespace podium::sched {
namespace {

CommandResult ok(std::string out) {
  return CommandResult{true, false, 0, 0, std::move(out), ""};
}
CommandResult failed(int code, std::string err) {
  return CommandResult{true, false, code, 0, "", std::move(err)};
}

EngineJobSpec spec() {
  EngineJobSpec s;
  s.run_id = "run_1";
  s.attempt_id = "att_1";
  s.attempt_number = 1;
  s.executor.kind = core::ExecutorKind::slurm;
  s.executor.slurm.partition = "podium";
  s.accelerator = *core::parse_accelerator("cpu-2").value;
  s.num_slices = 1;
  s.server_url = "http://127.0.0.1:8080";
  s.worker_path = "/usr/local/bin/podium-worker";
  s.output_dir = "/tmp/out";
  return s;
}

TEST(SlurmEngine, SubmitPutsTheTokenInTheEnvironmentOnly) {
  auto runner = std::make_shared<FakeRunner>();
  runner->answers = {ok("123\n")};
  SlurmEngine engine(runner, {{"PATH", "/usr/bin"}, {"SLURM_CONF", "/etc/x.conf"}});
  auto out = engine.submit(spec(), "pda_secret");
  ASSERT_TRUE(out.job_id) << out.error;
  EXPECT_EQ(*out.job_id, "123");
  ASSERT_EQ(runner->calls.size(), 1u);
  const auto& call = runner->calls[0];
  EXPECT_EQ(call.argv[0], "sbatch");
  EXPECT_EQ(call.env.at("PODIUM_ATTACH_TOKEN"), "pda_secret");
  EXPECT_EQ(call.env.at("SLURM_CONF"), "/etc/x.conf");
  for (const auto& a : call.argv) EXPECT_EQ(a.find("pda_secret"), std::string::npos) << a;
  EXPECT_EQ(call.stdin_text.find("pda_secret"), std::string::npos);
  EXPECT_EQ(out.manifest.find("pda_secret"), std::string::npos);
  EXPECT_NE(out.manifest.find("#!/bin/bash"), std::string::npos);
}

TEST(SlurmEngine, SubmitErrorsSayWhetherToRetry) {
  auto runner = std::make_shared<FakeRunner>();
  runner->answers = {
      failed(1, "sbatch: error: Batch job submission failed: Invalid partition name specified"),
      failed(1,
             "sbatch: error: Batch job submission failed: Unable to contact slurm controller "
             "(connect failure)")};
  SlurmEngine engine(runner, {});
  auto bad = engine.submit(spec(), "t");
  EXPECT_FALSE(bad.job_id);
  EXPECT_FALSE(bad.retryable);
  EXPECT_NE(bad.error.find("Invalid partition"), std::string::npos) << bad.error;
  auto down = engine.submit(spec(), "t");
  EXPECT_TRUE(down.retryable);
}

TEST(SlurmEngine, ObserveFallsBackToSacctThenReportsVanished) {
  auto runner = std::make_shared<FakeRunner>();
  runner->answers = {ok("JobId=5 JobState=RUNNING Reason=None ExitCode=0:0\n")};
  SlurmEngine engine(runner, {});
  auto running = engine.observe(spec(), "5", false);
  ASSERT_TRUE(running.observation);
  EXPECT_EQ(running.observation->phase, core::EngineObservation::Phase::running);
  EXPECT_EQ(runner->calls[0].argv,
            (std::vector<std::string>{"scontrol", "show", "job", "-o", "5"}));

  runner->answers = {failed(1, "slurm_load_jobs error: Invalid job id specified"),
                     ok("PREEMPTED|0:15|None\n")};
  auto preempted = engine.observe(spec(), "5", false);
  ASSERT_TRUE(preempted.observation);
  EXPECT_EQ(preempted.observation->failure_class, core::FailureClass::preempted);

  runner->answers = {failed(1, "slurm_load_jobs error: Invalid job id specified"),
                     failed(1, "sacct: error: Slurm accounting storage is disabled")};
  auto gone = engine.observe(spec(), "5", false);
  ASSERT_TRUE(gone.observation);
  EXPECT_EQ(gone.observation->phase, core::EngineObservation::Phase::vanished);

  runner->answers = {failed(1, "slurm_load_jobs error: Unable to contact slurm controller")};
  auto unknown = engine.observe(spec(), "5", false);
  EXPECT_FALSE(unknown.observation);
  EXPECT_NE(unknown.error.find("Unable to contact"), std::string::npos);
}

TEST(SlurmEngine, CancelIsScancelAndAGoneJobIsFine) {
  auto runner = std::make_shared<FakeRunner>();
  runner->answers = {ok(""),
                     failed(1,
                            "scancel: error: Kill job error on job id 5: Invalid job "
                            "id specified"),
                     failed(1, "scancel: error: Unable to contact slurm controller")};
  SlurmEngine engine(runner, {});
  EXPECT_EQ(engine.cancel(spec(), "5"), "");
  EXPECT_EQ(runner->calls[0].argv, (std::vector<std::string>{"scancel", "5"}));
  EXPECT_EQ(engine.cancel(spec(), "5"), "");
  EXPECT_NE(engine.cancel(spec(), "5"), "");
  // A submission whose job id was never recorded: by the attempt's unique job name.
  EXPECT_EQ(engine.cancel(spec(), ""), "");
  EXPECT_EQ(runner->calls.back().argv,
            (std::vector<std::string>{"scancel", "--name=podium-run_1-1"}));
}

TEST(CommandRunner, CapturesOutputAndHonoursTheDeadline) {
  auto runner = make_posix_command_runner();
  CommandSpec echo;
  echo.argv = {"sh", "-c", "cat; echo err >&2; exit 3"};
  echo.env = {{"PATH", "/usr/bin:/bin"}};
  echo.stdin_text = "hello";
  auto r = runner->run(echo);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "hello");
  EXPECT_EQ(r.err, "err\n");
  CommandSpec slow;
  slow.argv = {"sleep", "30"};
  slow.env = {{"PATH", "/usr/bin:/bin"}};
  slow.timeout = std::chrono::milliseconds(200);
  auto t = runner->run(slow);
  EXPECT_TRUE(t.timed_out);
  EXPECT_FALSE(t.ok());
  CommandSpec missing;
  missing.argv = {"no-such-program-podium"};
  missing.env = {{"PATH", "/usr/bin:/bin"}};
  auto m = runner->run(missing);
  EXPECT_EQ(m.exit_code, 127);
  // Only the listed environment reaches the child.
  CommandSpec env;
  env.argv = {"sh", "-c", "echo \"$PODIUM_DATABASE_URL|$A\""};
  env.env = {{"PATH", "/usr/bin:/bin"}, {"A", "1"}};
  EXPECT_EQ(runner->run(env).out, "|1\n");
}

}  // namespace
}  // namespace podium::sched
