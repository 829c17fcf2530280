#pragma once
// Kubernetes (JobSet + Kueue) through kubectl with the cluster's context, as xpk does
// (engine/core/executors/jobset_manifest.h builds the objects,
// engine/core/executors/jobset_status.h reads them): apply a Secret holding the attempt's token and
// the JobSet, follow the JobSet and its pods, delete them to cancel. Podium owns restarts
// (failurePolicy.maxRestarts 0).

#include <memory>

#include "backend/sched/executors/command_runner.h"
#include "backend/sched/executors/engine_executor.h"

namespace podium::sched {

class KubernetesEngine final : public EngineExecutor {
 public:
  KubernetesEngine(std::shared_ptr<CommandRunner> runner,
                   std::map<std::string, std::string> tool_env);
  std::string manifest(const EngineJobSpec& spec) override;
  SubmitOutcome submit(const EngineJobSpec& spec, const std::string& attach_token) override;
  ObserveOutcome observe(const EngineJobSpec& spec, const std::string& job_id,
                         bool podium_cancelled) override;
  std::string cancel(const EngineJobSpec& spec, const std::string& job_id) override;
  void finished(const EngineJobSpec& spec, const std::string& job_id) override;

  // The JobSet's name for an attempt: "podium-<run>-<number>", a DNS label short enough for the
  // pod names JobSet derives from it.
  static std::string jobset_name(const EngineJobSpec& spec);

 private:
  std::vector<std::string> kubectl(const EngineJobSpec& spec) const;
  std::shared_ptr<CommandRunner> runner_;
  std::map<std::string, std::string> tool_env_;
};

}  // namespace podium::sched
