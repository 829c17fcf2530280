#pragma once
// What an external engine (Slurm, Kubernetes) says about the job of one attempt, reduced to what
// Podium acts on. Each executor has a pure function from its engine's own status text to this
// (engine/core/slurm_states.h, engine/core/executors/jobset_status.h), so the tables are
// unit-tested without an engine.

#include <optional>
#include <string>

#include "engine/core/logs/failure_classifier.h"

namespace podium::core {

struct EngineObservation {
  enum class Phase {
    queued,    // accepted, not running yet (waiting_reason says why)
    running,   // the engine started the job's tasks
    finished,  // ended: outcome below
    vanished,  // the engine no longer knows the job (purged, deleted by someone else)
  };
  Phase phase = Phase::queued;
  std::string engine_state;    // the engine's own word: "PENDING", "NODE_FAIL", "Suspended", ...
  std::string waiting_reason;  // queued: the engine's reason ("Resources", "Priority", ...)
  // finished: succeeded, or the failure class the engine's end state implies. Unset with a
  // failed job means "no more than the ranks' own exits say" (the ranks report those).
  bool succeeded = false;
  std::optional<FailureClass> failure_class;
  std::optional<int> exit_code;  // the job's exit code when the engine reports one
  std::string reason;            // one sentence for the run page
};

}  // namespace podium::core
