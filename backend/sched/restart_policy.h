#pragma once
// What happens to a run after one of its attempts failed (domain brief §4, **Podium** policy).
// Pure, table-driven: the dispatcher feeds it the classification and the run's budget.
//
//   failure class        | exit code in restart_on_exit_codes | otherwise
//   ---------------------+------------------------------------+----------------------------------
//   preempted, host_lost | recover (no budget spent)          | recover (no budget spent)
//                        | ... until max_recoveries are made, then fail
//   error                | restart while budget, else fail    | restart while budget, else fail
//   oom, mesh, config,   | restart while budget, else fail    | fail at once
//   nan, data_exhausted, |                                    |
//   code_error           |                                    |
//   stalled              | by on_stall: restart -> recover (no budget) until the run's
//                        | stall_limit-th stall or max_recoveries, then fail; fail -> fail at once
//
// restart_on_exit_codes is the user's explicit statement that their workload exits with these
// codes when a retry can help (xpk's convention is 42). Podium's deterministic classes come from
// log text heuristics, so the user's explicit code wins over them; with the default empty list the
// deterministic classes fail at once. Every restart and recovery resumes from the latest finished
// checkpoint (the dispatcher's job).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/logs/failure_classifier.h"

namespace podium::sched {

// A run's on_stall (issue 30): what a stall does. alert only records it (the attempt goes on and
// never ends as stalled); restart stops the gang and resumes from the latest checkpoint as an
// infrastructure recovery; fail ends the run.
enum class StallAction { alert, restart, fail };
std::string_view to_string(StallAction a);
std::optional<StallAction> parse_stall_action(std::string_view name);

enum class RestartAction {
  recover,  // requeue without spending the restart budget (infrastructure's fault)
  restart,  // requeue and spend one restart
  fail,     // finish the run as failed with the attempt's failure class
};
std::string_view to_string(RestartAction a);

struct RestartInput {
  core::FailureClass failure_class = core::FailureClass::error;
  std::vector<int> exit_codes;  // nonzero exit codes of ranks that ended on their own
  int restarts_used = 0;        // restarts already spent (recoveries not counted)
  int max_restarts = 0;
  std::vector<int> restart_on_exit_codes;
  // Infrastructure recoveries already made, and the run spec's max_recoveries (unset: no bound).
  // A cluster that keeps losing hosts under a run ends it as failed instead of looping.
  int recoveries_used = 0;
  std::optional<int> max_recoveries;
  // For failure class stalled: the run's policy, how many stalls it has had (this one
  // included) and how many end it.
  StallAction on_stall = StallAction::restart;
  int stalls = 0;
  int stall_limit = 3;
};

struct RestartDecision {
  RestartAction action = RestartAction::fail;
  bool spends_budget = false;  // true iff action == restart
  std::string reason;
  bool recoveries_exhausted = false;  // failed because max_recoveries was reached
};

RestartDecision decide_restart(const RestartInput& input);

// {"action","spends_budget","reason"}
nlohmann::json to_json(const RestartDecision& d);

}  // namespace podium::sched
