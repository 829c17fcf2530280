#include "engine/core/executors/slurm_job.h"

#include <cctype>
#include <stdexcept>

namespace podium::core {

namespace {

// POSIX shell single-quoting of every value, plain or not (provisioning.h's shell_quote leaves
// plain tokens bare): the value can hold anything but NUL.
std::string always_quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string slurm_trim(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return std::string(s);
}

// ExitCode is "<code>:<signal>"; the code when it is a number.
std::optional<int> exit_code_of(std::string_view exit_code) {
  const auto colon = exit_code.find(':');
  const std::string code = slurm_trim(exit_code.substr(0, colon));
  if (code.empty() || code.size() > 3) return std::nullopt;
  for (char c : code)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoi(code);
}

EngineObservation finished(std::string_view state, std::optional<FailureClass> failure_class,
                           std::string reason) {
  EngineObservation o;
  o.phase = EngineObservation::Phase::finished;
  o.engine_state = std::string(state);
  o.failure_class = failure_class;
  o.reason = std::move(reason);
  return o;
}

}  // namespace

SlurmSubmission build_sbatch(const SlurmJobRequest& r) {
  if (r.hosts_per_slice < 1 || r.num_slices < 1)
    throw std::invalid_argument("a Slurm job needs at least one node");
  if (r.worker_path.empty())
    throw std::invalid_argument(
        "executors.worker_path: podium-worker's path on the nodes is unknown");
  if (r.server_url.empty()) throw std::invalid_argument("public_url: the server URL is unknown");
  const int nodes = r.hosts_per_slice * r.num_slices;
  const std::string n = std::to_string(nodes);
  SlurmSubmission s;
  // Slurm shows at most a few dozen characters of a name; the run id is the part that matters.
  s.job_name = "podium-" + r.run_id + "-" + std::to_string(r.attempt_number);
  s.argv = {"sbatch",       "--parsable",    "--no-requeue",        "--job-name=" + s.job_name,
            "--nodes=" + n, "--ntasks=" + n, "--ntasks-per-node=1", "--export=ALL"};
  if (!r.output_dir.empty()) s.argv.push_back("--output=" + r.output_dir + "/slurm-%j.out");
  if (!r.executor.partition.empty()) s.argv.push_back("--partition=" + r.executor.partition);
  if (!r.executor.account.empty()) s.argv.push_back("--account=" + r.executor.account);
  if (!r.executor.qos.empty()) s.argv.push_back("--qos=" + r.executor.qos);
  if (r.accelerator_kind == "gpu" && r.gpus_per_node > 0) {
    bool user_sets_gpus = false;
    for (const auto& a : r.executor.sbatch_args)
      if (a.rfind("--gpus", 0) == 0 || a.rfind("--gres", 0) == 0) user_sets_gpus = true;
    if (!user_sets_gpus) s.argv.push_back("--gpus-per-node=" + std::to_string(r.gpus_per_node));
  }
  for (const auto& a : r.executor.sbatch_args) s.argv.push_back(a);

  s.script = "#!/bin/bash\n";
  s.script += "# Podium run " + r.run_id + ", attempt " + std::to_string(r.attempt_number) + " (" +
              r.attempt_id + "): " + n + " node" + (nodes == 1 ? "" : "s") + " (" +
              std::to_string(r.num_slices) + " slice" + (r.num_slices == 1 ? "" : "s") + " of " +
              std::to_string(r.hosts_per_slice) + " host" + (r.hosts_per_slice == 1 ? "" : "s") +
              "), one task per node.\n";
  s.script +=
      "# Each task runs podium-worker attach: it learns its rank from SLURM_PROCID, fetches the\n"
      "# rank's command and environment from Podium with this attempt's token (in the job's\n"
      "# environment, not here), runs it, and ships its logs, checkpoints and exit to Podium.\n";
  s.script += "# --kill-on-bad-exit: one failed rank ends the step, as a gang must.\n";
  s.script += "exec srun --kill-on-bad-exit=1 --label --nodes=" + n + " --ntasks=" + n +
              " --ntasks-per-node=1 " + always_quoted(r.worker_path) + " attach\n";

  s.env = {{"PODIUM_SERVER", r.server_url},
           {"PODIUM_ATTEMPT_ID", r.attempt_id},
           {"PODIUM_RUN_ID", r.run_id},
           {"PODIUM_ENGINE", "slurm"},
           {"PODIUM_HOSTS_PER_SLICE", std::to_string(r.hosts_per_slice)},
           {"PODIUM_NUM_SLICES", std::to_string(r.num_slices)}};
  if (!r.code_bundle.empty()) s.env.emplace("PODIUM_CODE_BUNDLE", r.code_bundle);
  for (const auto& [k, v] : r.executor.env) s.env.emplace(k, v);
  return s;
}

std::optional<std::string> parse_sbatch_job_id(std::string_view output) {
  std::string line = slurm_trim(output);
  if (auto nl = line.rfind('\n'); nl != std::string::npos) line = slurm_trim(line.substr(nl + 1));
  if (auto semi = line.find(';'); semi != std::string::npos) line = line.substr(0, semi);
  if (line.empty() || line.size() > 20) return std::nullopt;
  for (char c : line)
    if (c < '0' || c > '9') return std::nullopt;
  return line;
}

std::map<std::string, std::string> parse_scontrol_record(std::string_view line) {
  // Tokens split on blanks; a token "Key=..." whose key is a word starts a pair, any other token
  // continues the previous value (Reason=ReqNodeNotAvail, UnavailableNodes:n2).
  auto is_key = [](std::string_view k) {
    if (k.empty() || !std::isalpha(static_cast<unsigned char>(k.front()))) return false;
    for (char c : k)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':' && c != '/')
        return false;
    return true;
  };
  std::map<std::string, std::string> out;
  std::string* current = nullptr;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t end = i;
    while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
    if (end == i) break;
    const std::string_view token = line.substr(i, end - i);
    const size_t eq = token.find('=');
    if (eq != std::string_view::npos && is_key(token.substr(0, eq))) {
      current = &out[std::string(token.substr(0, eq))];
      *current = std::string(token.substr(eq + 1));
    } else if (current) {
      *current += " " + std::string(token);
    }
    i = end;
  }
  return out;
}

EngineObservation observe_slurm_state(std::string_view state_text, std::string_view reason,
                                      std::string_view exit_code, bool podium_cancelled) {
  // sacct writes "CANCELLED by 0"; scontrol writes the bare word.
  std::string state = slurm_trim(state_text.substr(0, state_text.find(' ')));
  const std::string why = slurm_trim(reason);
  const auto code = exit_code_of(exit_code);
  EngineObservation o;
  o.engine_state = state;
  if (state == "PENDING" || state == "CONFIGURING" || state == "REQUEUED" ||
      state == "REQUEUE_HOLD" || state == "REQUEUE_FED" || state == "SUSPENDED") {
    o.phase = EngineObservation::Phase::queued;
    o.waiting_reason = state == "PENDING"
                           ? (why.empty() || why == "None" ? "pending" : why)
                           : (state == "CONFIGURING" ? "nodes are being configured" : state);
    return o;
  }
  if (state == "RUNNING" || state == "COMPLETING" || state == "RESIZING" || state == "STOPPED" ||
      state == "SIGNALING" || state == "STAGE_OUT") {
    o.phase = EngineObservation::Phase::running;
    return o;
  }
  EngineObservation f;
  if (state == "COMPLETED") {
    f = finished(state, std::nullopt, "Slurm job completed");
    f.succeeded = true;
  } else if (state == "NODE_FAIL") {
    f = finished(state, FailureClass::host_lost,
                 "Slurm: a node of the job failed or was set down (NODE_FAIL" +
                     (why.empty() || why == "None" ? std::string() : ", " + why) + ")");
  } else if (state == "BOOT_FAIL") {
    f = finished(state, FailureClass::host_lost, "Slurm: a node of the job failed to boot");
  } else if (state == "PREEMPTED") {
    f = finished(state, FailureClass::preempted, "Slurm preempted the job");
  } else if (state == "OUT_OF_MEMORY") {
    f = finished(state, FailureClass::oom, "Slurm: a task ran out of host memory");
  } else if (state == "TIMEOUT" || state == "DEADLINE") {
    f = finished(state, FailureClass::error,
                 "Slurm: the job reached its time limit (" + state + ")");
  } else if (state == "FAILED") {
    f = finished(state, std::nullopt,
                 "Slurm job failed" + (code ? " (exit code " + std::to_string(*code) + ")" : ""));
  } else if (state == "CANCELLED") {
    f = podium_cancelled
            ? finished(state, std::nullopt, "Slurm job cancelled by Podium")
            : finished(state, FailureClass::error, "Slurm job cancelled outside Podium");
  } else if (state.empty()) {
    f = finished("UNKNOWN", FailureClass::error, "Slurm reported no state for the job");
  } else {
    f = finished(state, FailureClass::error, "Slurm job ended in state " + state);
  }
  f.exit_code = code;
  return f;
}

EngineObservation observe_scontrol(const std::map<std::string, std::string>& record,
                                   bool podium_cancelled) {
  auto get = [&](const char* k) {
    auto it = record.find(k);
    return it == record.end() ? std::string() : it->second;
  };
  return observe_slurm_state(get("JobState"), get("Reason"), get("ExitCode"), podium_cancelled);
}

std::optional<EngineObservation> observe_sacct(std::string_view output, bool podium_cancelled) {
  // One line per job (-X: allocations only): State|ExitCode|Reason.
  const std::string line = slurm_trim(output.substr(0, output.find('\n')));
  if (line.empty()) return std::nullopt;
  const auto p1 = line.find('|');
  if (p1 == std::string::npos) return std::nullopt;
  const auto p2 = line.find('|', p1 + 1);
  const std::string state = line.substr(0, p1);
  const std::string exit_code = line.substr(p1 + 1, p2 == std::string::npos ? p2 : p2 - p1 - 1);
  const std::string reason = p2 == std::string::npos ? "" : line.substr(p2 + 1);
  return observe_slurm_state(state, reason, exit_code, podium_cancelled);
}

}  // namespace podium::core
