#pragma once
// One external engine behind the dispatcher (docs/executors.md): submit an attempt's job, read
// its state, cancel it. Implementations run the engine's own command-line tools through a
// CommandRunner (sbatch/scontrol/scancel, kubectl), as the engine's users do.

#include <map>
#include <optional>
#include <string>

#include "engine/core/executors/engine_observation.h"
#include "engine/core/executors/executor.h"
#include "engine/core/topology/accelerator.h"

namespace podium::sched {

struct EngineJobSpec {
  std::string run_id;
  std::string attempt_id;
  int attempt_number = 1;
  core::Executor executor;
  core::AcceleratorType accelerator;
  int num_slices = 1;
  std::string image;         // container engines: the run's image, else the executor's
  std::string server_url;    // Podium as the engine's hosts reach it
  std::string worker_path;   // podium-worker on the hosts / in the image
  std::string worker_image;  // Kubernetes: image an init container copies podium-worker from
  std::string output_dir;    // Slurm: where slurm-<id>.out goes
  // The run's code bundle ("sha256:<hex>", "" for none): PODIUM_CODE_BUNDLE in the ranks'
  // environment, which `podium-worker attach` fetches, checks and unpacks before it starts.
  std::string code_bundle;
};

struct SubmitOutcome {
  std::optional<std::string> job_id;  // set when the engine accepted the job
  std::string manifest;               // what the engine was given (no secret in it)
  std::string error;                  // when not accepted
  bool retryable = false;  // the engine was unreachable or busy: try again, the spec is fine
};

struct ObserveOutcome {
  std::optional<core::EngineObservation> observation;  // unset: could not ask (error says why)
  std::string error;
};

class EngineExecutor {
 public:
  virtual ~EngineExecutor() = default;
  // What submit() would hand the engine, with a placeholder where the token goes.
  virtual std::string manifest(const EngineJobSpec& spec) = 0;
  virtual SubmitOutcome submit(const EngineJobSpec& spec, const std::string& attach_token) = 0;
  virtual ObserveOutcome observe(const EngineJobSpec& spec, const std::string& job_id,
                                 bool podium_cancelled) = 0;
  // "" when the engine took the cancel (or the job is already gone), else why not. An empty
  // job_id cancels by the attempt's job name (a submission whose job id was never recorded).
  virtual std::string cancel(const EngineJobSpec& spec, const std::string& job_id) = 0;
  // The attempt is over (its verdict recorded): release what the submission left behind.
  virtual void finished(const EngineJobSpec&, const std::string&) {}
};

// PATH, HOME, LANG, SLURM_CONF, KUBECONFIG from the server's own environment: the engines'
// tools need them, and nothing else of the server's environment reaches them.
std::map<std::string, std::string> tool_environment(
    const std::map<std::string, std::string>& server_env);

}  // namespace podium::sched
