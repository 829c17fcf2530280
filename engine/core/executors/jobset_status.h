#pragma once
// How a JobSet and its pods read as Podium outcomes (docs/executors.md). Pure: the inputs are
// what `kubectl get jobset NAME -o json` prints (null when it is NotFound) and what `kubectl get
// pods -l jobset.sigs.k8s.io/jobset-name=NAME -o json` prints (a List). Missing or mistyped
// fields count as absent; nothing here throws.
//
// First match wins:
//   JobSet                                  | pods                                | Podium
//   ----------------------------------------+-------------------------------------+-------------
//   null                                    |                                     | vanished
//   condition Completed=True (or            |                                     | finished,
//     status.terminalState Completed)       |                                     | succeeded
//   condition Failed=True (or               | any pod evicted (status.reason      | preempted
//     status.terminalState Failed)          | Evicted) or DisruptionTarget=True   |
//                                           | (PreemptionByScheduler,             |
//                                           | TerminationByKubelet,               |
//                                           | EvictionByEvictionAPI,              |
//                                           | DeletionByTaintManager)             |
//                                           | else any pod NodeLost,              | host_lost
//                                           | UnexpectedAdmissionError, node      |
//                                           | shutdown (Terminated, NodeShutdown) |
//                                           | or DisruptionTarget DeletionByPodGC |
//                                           | (its node object is gone)           |
//                                           | else any container OOMKilled        | oom (host
//                                           |                                     | memory)
//                                           | otherwise                           | no class: the
//                                           |                                     | ranks' exits
//   spec.suspend or Suspended=True (Kueue   |                                     | queued: "Kueue
//     has not admitted it, or evicted it)   |                                     | has not
//                                           |                                     | admitted ..."
//   otherwise                               | any pod Running (or already ended)  | running
//                                           | otherwise                           | queued, the
//                                           |                                     | pods' reason
//
// Why the end comes before the suspension: a JobSet that reached Completed or Failed never runs
// again, whatever its suspend flag says afterwards. Why preemption comes before host loss: a
// graceful node shutdown (GKE reclaiming a Spot VM, maintenance) leaves both the reason
// Terminated and DisruptionTarget TerminationByKubelet on the pod, and is a preemption. A
// failed JobSet's observation also carries the first nonzero container exit code in exit_code.
// Queued reasons, most telling first: the PodScheduled=False condition ("Unschedulable: 0/4
// nodes are available: ..."), then a container's waiting reason ("ImagePullBackOff: ...",
// "CreateContainerConfigError: secret ... not found").

#include <nlohmann/json.hpp>

#include "engine/core/executors/engine_observation.h"

namespace podium::core {

EngineObservation observe_jobset(const nlohmann::json& jobset, const nlohmann::json& pods);

}  // namespace podium::core
