#pragma once
// Slurm through its own commands (engine/core/executors/slurm_job.h has the script and the state
// table): sbatch to submit, scontrol show job to follow (sacct once scontrol has forgotten the
// job), scancel to stop. The commands come from PATH and honour SLURM_CONF.

#include <memory>

#include "backend/sched/executors/command_runner.h"
#include "backend/sched/executors/engine_executor.h"

namespace podium::sched {

class SlurmEngine final : public EngineExecutor {
 public:
  SlurmEngine(std::shared_ptr<CommandRunner> runner, std::map<std::string, std::string> tool_env);
  std::string manifest(const EngineJobSpec& spec) override;
  SubmitOutcome submit(const EngineJobSpec& spec, const std::string& attach_token) override;
  ObserveOutcome observe(const EngineJobSpec& spec, const std::string& job_id,
                         bool podium_cancelled) override;
  std::string cancel(const EngineJobSpec& spec, const std::string& job_id) override;

 private:
  std::shared_ptr<CommandRunner> runner_;
  std::map<std::string, std::string> tool_env_;
};

}  // namespace podium::sched
