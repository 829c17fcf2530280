#include "backend/sched/executors/slurm_executor.h"

#include "engine/core/executors/slurm_job.h"

namespace podium::sched {

namespace {

core::SlurmJobRequest sbatch_request_of(const EngineJobSpec& spec) {
  core::SlurmJobRequest r;
  r.run_id = spec.run_id;
  r.attempt_id = spec.attempt_id;
  r.attempt_number = spec.attempt_number;
  r.executor = spec.executor.slurm;
  r.hosts_per_slice = std::max(1, spec.accelerator.hosts_per_slice);
  r.num_slices = spec.num_slices;
  r.worker_path = spec.worker_path;
  r.server_url = spec.server_url;
  r.output_dir = spec.output_dir;
  r.accelerator_kind = std::string(core::kind_name(spec.accelerator.kind));
  r.code_bundle = spec.code_bundle;
  if (spec.accelerator.kind == core::AcceleratorKind::gpu && spec.accelerator.hosts_per_slice > 0)
    r.gpus_per_node = spec.accelerator.chips_per_slice / spec.accelerator.hosts_per_slice;
  return r;
}

std::string render(const core::SlurmSubmission& s) {
  std::string out = "# sbatch command (the script below is its standard input)\n";
  for (size_t i = 0; i < s.argv.size(); ++i) out += (i ? " " : "") + s.argv[i];
  out += "\n# environment given to sbatch and exported to every task\n";
  for (const auto& [k, v] : s.env) out += k + "=" + v + "\n";
  out += "PODIUM_ATTACH_TOKEN=<this attempt's token, minted at submission>\n";
  out += "# script\n" + s.script;
  return out;
}

// Slurm refuses to talk when its controller is down or busy: those answers are worth retrying.
bool transient_slurm_error(const CommandResult& r) {
  if (!r.started || r.timed_out) return true;
  for (const char* s : {"Unable to contact slurm controller", "Socket timed out",
                        "Connection refused", "Slurm temporarily unable", "Zero Bytes were"})
    if (r.err.find(s) != std::string::npos) return true;
  return false;
}

}  // namespace

SlurmEngine::SlurmEngine(std::shared_ptr<CommandRunner> runner,
                         std::map<std::string, std::string> tool_env)
    : runner_(std::move(runner)), tool_env_(std::move(tool_env)) {}

std::string SlurmEngine::manifest(const EngineJobSpec& spec) {
  return render(core::build_sbatch(sbatch_request_of(spec)));
}

SubmitOutcome SlurmEngine::submit(const EngineJobSpec& spec, const std::string& attach_token) {
  SubmitOutcome out;
  core::SlurmSubmission s;
  try {
    s = core::build_sbatch(sbatch_request_of(spec));
  } catch (const std::exception& e) {
    out.error = e.what();
    return out;
  }
  out.manifest = render(s);
  CommandSpec cmd;
  cmd.argv = s.argv;
  cmd.env = tool_env_;
  for (const auto& [k, v] : s.env) cmd.env[k] = v;
  cmd.env["PODIUM_ATTACH_TOKEN"] = attach_token;
  cmd.stdin_text = s.script;
  const auto r = runner_->run(cmd);
  if (!r.ok()) {
    out.error = r.describe("sbatch");
    out.retryable = transient_slurm_error(r);
    return out;
  }
  out.job_id = core::parse_sbatch_job_id(r.out);
  if (!out.job_id) out.error = "sbatch printed no job id: " + r.out.substr(0, 200);
  return out;
}

ObserveOutcome SlurmEngine::observe(const EngineJobSpec&, const std::string& job_id,
                                    bool podium_cancelled) {
  ObserveOutcome out;
  CommandSpec cmd;
  cmd.argv = {"scontrol", "show", "job", "-o", job_id};
  cmd.env = tool_env_;
  cmd.timeout = std::chrono::seconds(15);
  auto r = runner_->run(cmd);
  if (r.ok() && r.out.find("JobState=") != std::string::npos) {
    out.observation = core::observe_scontrol(core::parse_scontrol_record(r.out), podium_cancelled);
    return out;
  }
  if (transient_slurm_error(r)) {
    out.error = r.describe("scontrol");
    return out;
  }
  // scontrol forgets a job MinJobAge after its end: the accounting database still knows it.
  CommandSpec acct;
  acct.argv = {"sacct", "-X", "-n", "-P", "-j", job_id, "-o", "State,ExitCode,Reason"};
  acct.env = tool_env_;
  acct.timeout = std::chrono::seconds(15);
  auto a = runner_->run(acct);
  if (a.ok()) {
    if (auto o = core::observe_sacct(a.out, podium_cancelled)) {
      out.observation = *o;
      return out;
    }
  }
  if (r.started && !r.timed_out && r.err.find("Invalid job id") != std::string::npos) {
    core::EngineObservation gone;
    gone.phase = core::EngineObservation::Phase::vanished;
    gone.engine_state = "UNKNOWN";
    gone.reason = "Slurm no longer knows job " + job_id + " and keeps no accounting record of it";
    out.observation = gone;
    return out;
  }
  out.error = r.describe("scontrol") + "; " + a.describe("sacct");
  return out;
}

std::string SlurmEngine::cancel(const EngineJobSpec& spec, const std::string& job_id) {
  CommandSpec cmd;
  // SIGTERM first, as a user's scancel does; Slurm escalates to SIGKILL after KillWait. Without
  // a job id (a submission whose answer was lost), by the attempt's job name, unique to it.
  if (job_id.empty())
    cmd.argv = {"scancel", "--name=" + core::build_sbatch(sbatch_request_of(spec)).job_name};
  else
    cmd.argv = {"scancel", job_id};
  cmd.env = tool_env_;
  cmd.timeout = std::chrono::seconds(15);
  auto r = runner_->run(cmd);
  if (r.ok()) return "";
  if (r.err.find("Invalid job id") != std::string::npos ||
      r.err.find("already completing or completed") != std::string::npos)
    return "";
  return r.describe("scancel");
}

}  // namespace podium::sched
