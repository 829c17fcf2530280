#pragma once
// Classifies how an attempt ended (domain brief §3-§4, API failure classes) from what the workers
// reported per rank, what Podium itself did, and the log signatures seen. Pure: no I/O.
//
// Precedence, first match wins (each rule says why it beats the ones after it):
//  1. The user cancelled the run                  -> cancelled (no failure class): user intent
//                                                    beats whatever the teardown caused.
//  2. A deterministic log signature, in the order a MaxText start-up meets them:
//     config (invalid key/value) > mesh > oom > nan > data_exhausted.
//     They beat everything below because re-running the same spec fails the same way: a host
//     that vanished while the others hit an OOM must not buy the run a free retry.
//  2a. A rank could not get the run's code bundle (signature code_bundle_unusable: fetch refused
//     or given up, digest mismatch, archive unusable)                  -> code_error. The rank
//     never started; the ranks' other ends are its consequence.
//  2b. An external engine's verdict (Slurm NODE_FAIL -> host_lost, PREEMPTED -> preempted, ...):
//     the engine saw the cause; the ranks' exits (SIGTERM on every node) are its consequence.
//  2c. A host of the attempt reported a preemption or termination notice (its metadata server
//     said preempted / TERMINATE_ON_HOST_MAINTENANCE)                    -> preempted. It beats
//     a vanished rank: a preempted host vanishes, which is the notice's consequence, not a
//     second cause, and Podium's own SIGTERM to the gang after the notice.
//  3. A rank vanished (heartbeat deadline, worker gone) -> host_lost. It beats the exit codes of
//     the other ranks, which are the consequence (collectives time out, coordinator unreachable).
//  4. Preemption: MaxText's "Job is preempted." signature, or a SIGTERM (signal 15 or exit code
//     143) that Podium did not send                                       -> preempted.
//  4b. A rank ended badly on its own before the attempt's first training step, and a traceback's
//     exception line named ImportError, ModuleNotFoundError, SyntaxError, TypeError,
//     AttributeError or NameError                                        -> code_error.
//     The code or its environment is wrong: retrying the same code fails the same way. It ranks
//     below the infrastructure rules (2b-4) because its evidence is a generic exception name: a
//     preempted or lost host must keep its free recovery. After the first step such an exception
//     is no proof that the code cannot run (a rare path, a flaky import), so it stays `error`.
//  4c. Podium ended the attempt because it stalled: it logged no step within its bound
//     (backend/sched/dispatch/stall_watch.h)                            -> stalled. The ranks'
//     ends after that stop are its consequence; a rank that had failed on its own would have
//     ended the attempt before any stall.
//  5. Any rank that exited nonzero or by a signal Podium did not send    -> error.
//  6. Every rank exited 0                                                 -> succeeded.
//  7. Ranks stopped only because Podium stopped them, nothing else known  -> error (an attempt
//     torn down without a recorded cause still counts as failed; the reason says so).
// Warnings (tpu_busy, cpu_fallback) never change the class; they are reported alongside.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/logs/maxtext_log.h"

namespace podium::core {

enum class FailureClass {
  oom,
  mesh,
  config,
  data_exhausted,
  nan,
  preempted,
  host_lost,
  error,
  code_error,
  stalled
};
std::string_view to_string(FailureClass c);
std::optional<FailureClass> parse_failure_class(std::string_view name);
// oom, mesh, config, nan, data_exhausted, code_error: retrying the same spec reproduces them.
bool is_deterministic(FailureClass c);
// The failure class a log signature implies, if any (warnings imply none).
std::optional<FailureClass> failure_class_of(FailureSignature signature);

// One rank's end as the worker reported it (or as the reaper concluded).
struct RankOutcome {
  int rank = 0;
  std::optional<int> exit_code;    // process exit status when it exited normally
  std::optional<int> signal;       // terminating signal when killed by one
  bool vanished = false;           // no report before the heartbeat deadline: host or worker lost
  bool stopped_by_podium = false;  // Podium sent this rank a cancel before it ended
};

struct AttemptEvidence {
  std::vector<RankOutcome> ranks;
  bool user_cancelled = false;  // the run is being cancelled by a user
  // What a host's metadata server announced ("preempted", "TERMINATE_ON_HOST_MAINTENANCE"),
  // empty when no host of the attempt reported a notice.
  std::string preemption_notice;
  std::vector<FailureSignature> signatures;  // log signatures seen on any rank
  // The first line a signature was seen on (any rank), where known: a code_error's reason quotes
  // its exception line.
  std::map<FailureSignature, std::string> signature_excerpts;
  // A training step of this attempt completed (its metrics are stored): exceptions after it are
  // not code errors (rule 4b).
  bool completed_a_step = false;
  // What an external engine (Slurm, Kubernetes) said of its job, when it implies a class
  // (engine/core/executors/engine_observation.h).
  std::optional<FailureClass> engine_class;
  std::string engine_reason;
  // Podium ended the attempt because it stalled (rule 4c): why ("no step for 31 s after step
  // 17 (bound 30 s: ...)", the classification's reason); empty otherwise.
  std::string stall_cause;
};

enum class AttemptOutcome { succeeded, failed, cancelled };
std::string_view to_string(AttemptOutcome o);

struct FailureClassification {
  AttemptOutcome outcome = AttemptOutcome::failed;
  std::optional<FailureClass> failure_class;  // set iff outcome == failed
  std::optional<int> deciding_rank;           // the rank whose report decided, when one did
  std::optional<FailureSignature> deciding_signature;
  std::vector<int> exit_codes;             // nonzero exit codes of ranks that ended on their own
  std::vector<FailureSignature> warnings;  // tpu_busy, cpu_fallback
  std::string reason;                      // one sentence for the run page
};

FailureClassification classify_failure(const AttemptEvidence& evidence);

// {"outcome","failure_class"|null,"deciding_rank"|null,"deciding_signature"|null,"exit_codes",
//  "warnings":[...],"reason"}
nlohmann::json to_json(const FailureClassification& c);

}  // namespace podium::core
