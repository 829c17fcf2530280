#pragma once
// The Slurm executor's pure parts: what Podium hands sbatch for one attempt, and how Slurm's job
// states read as Podium outcomes. No I/O: backend/sched/executors/slurm_executor.cpp runs the
// commands.
//
// Submission: `sbatch --parsable --no-requeue --nodes=N --ntasks=N --ntasks-per-node=1 ...` with
// the script on stdin; the script's `srun` starts `podium-worker attach` once per node, which
// asks Podium for its rank's command. Podium owns restarts (--no-requeue: Slurm's default would
// requeue a job whose node failed, behind Podium's back). The attach token travels in sbatch's
// environment (exported to the tasks), never in argv or the script, which are shown to users.
//
// End states (scontrol's JobState, sacct's State):
//   state           | Podium reads it as
//   ----------------+------------------------------------------------------------------------
//   PENDING         | queued, waiting_reason = Slurm's Reason (Resources, Priority, ...)
//   CONFIGURING     | queued (nodes being prepared)
//   REQUEUED, REQUEUE_HOLD, REQUEUE_FED, SUSPENDED | queued (with the state as reason)
//   RUNNING, COMPLETING, RESIZING, STOPPED, SIGNALING, STAGE_OUT | running
//   COMPLETED       | finished, succeeded
//   NODE_FAIL       | finished, host_lost (recovered from the latest checkpoint, no restart spent)
//   BOOT_FAIL       | finished, host_lost (a node never came up: not the run's fault)
//   PREEMPTED       | finished, preempted (recovered, no restart spent)
//   OUT_OF_MEMORY   | finished, oom (host memory: the same spec fails the same way)
//   TIMEOUT, DEADLINE | finished, error (the job's time limit; a restart spends the budget)
//   FAILED          | finished, no class of its own: the ranks' exit codes decide
//   CANCELLED       | finished; Podium's own scancel: the ranks' reports decide (cancelled,
//                   | grow, a failed rank's teardown); anyone else's: error ("cancelled in Slurm
//                   | outside Podium")
//   SPECIAL_EXIT, REVOKED, anything unknown | finished, error, naming the state

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/executors/engine_observation.h"
#include "engine/core/executors/executor.h"

namespace podium::core {

struct SlurmJobRequest {
  std::string run_id;
  std::string attempt_id;
  int attempt_number = 1;
  SlurmExecutor executor;
  int hosts_per_slice = 1;
  int num_slices = 1;
  std::string worker_path;       // podium-worker on the nodes
  std::string server_url;        // PODIUM_SERVER as the nodes reach it
  std::string output_dir;        // where slurm-<job id>.out is written ("" = sbatch's default)
  std::string accelerator_kind;  // "tpu", "gpu", "cpu": GPU nodes ask for their GPUs
  int gpus_per_node = 0;
  // The run's code bundle ("sha256:<hex>", "" for none): PODIUM_CODE_BUNDLE in the tasks'
  // environment; podium-worker attach fetches, checks and unpacks it before the rank starts.
  std::string code_bundle;
};

struct SlurmSubmission {
  std::vector<std::string> argv;           // sbatch and its options; the script is stdin
  std::string script;                      // the batch script
  std::map<std::string, std::string> env;  // added to sbatch's environment (no secret here)
  std::string job_name;
};

// Throws std::invalid_argument on requests that cannot be submitted (no nodes, no worker path).
SlurmSubmission build_sbatch(const SlurmJobRequest& request);

// "sbatch --parsable" prints "<job id>" or "<job id>;<cluster>": the id, or nullopt.
std::optional<std::string> parse_sbatch_job_id(std::string_view output);

// `scontrol show job -o <id>` output (one line of Key=Value pairs) as a map; values may hold
// spaces only for the last keys, which Podium does not read.
std::map<std::string, std::string> parse_scontrol_record(std::string_view line);

// The reading of one job's state. podium_cancelled: Podium sent this job's scancel.
EngineObservation observe_slurm_state(std::string_view state, std::string_view reason,
                                      std::string_view exit_code, bool podium_cancelled);

// From a parsed `scontrol show job -o` record (JobState, Reason, ExitCode).
EngineObservation observe_scontrol(const std::map<std::string, std::string>& record,
                                   bool podium_cancelled);

// From `sacct -X -n -P -j <id> -o State,ExitCode,Reason` (used once scontrol no longer knows
// the job); "CANCELLED by 0" counts as CANCELLED. nullopt when the output has no record.
std::optional<EngineObservation> observe_sacct(std::string_view output, bool podium_cancelled);

}  // namespace podium::core
