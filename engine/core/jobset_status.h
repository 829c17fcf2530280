#pragma once
// How a JobSet and its pods read as Podium outcomes (docs/executors.md). Pure: the input is what
// `kubectl get jobset NAME -o json` (null when it is gone) and `kubectl get pods -l
// jobset.sigs.k8s.io/jobset-name=NAME -o json` print. Malformed or missing fields count as
// absent; nothing here throws.
//
//   JobSet                                   | pods                          | Podium
//   -----------------------------------------+-------------------------------+------------------
//   gone (null)                              |                               | vanished
//   condition Completed=True                 |                               | succeeded
//   condition Failed=True                    | evicted / DisruptionTarget    | preempted
//                                            | (PreemptionByScheduler,       |
//                                            | TerminationByKubelet,         |
//                                            | EvictionByEvictionAPI,        |
//                                            | DeletionByTaintManager)       |
//                                            | NodeLost, node shutdown       | host_lost
//                                            | container OOMKilled           | oom (host memory)
//                                            | otherwise                     | the ranks' exits
//   spec.suspend or Suspended=True (Kueue)   |                               | queued ("Kueue has
//                                            |                               | not admitted ...")
//   otherwise                                | any Running                   | running
//                                            | otherwise                     | queued, the pods'
//                                            |                               | PodScheduled reason

#include <nlohmann/json.hpp>

#include "engine/core/engine_observation.h"

namespace podium::core {

EngineObservation observe_jobset(const nlohmann::json& jobset, const nlohmann::json& pods);

}  // namespace podium::core
