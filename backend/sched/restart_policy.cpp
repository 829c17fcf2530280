#include "backend/sched/restart_policy.h"

#include <algorithm>
#include <string>

namespace podium::sched {
namespace {

using core::FailureClass;

enum class Rule { recover, restart_with_budget, fail_unless_listed_code, stall_policy };

// The table of the header, one row per class.
Rule rule_for(FailureClass c) {
  switch (c) {
    case FailureClass::preempted:
    case FailureClass::host_lost:
      return Rule::recover;
    case FailureClass::error:
      return Rule::restart_with_budget;
    case FailureClass::oom:
    case FailureClass::mesh:
    case FailureClass::config:
    case FailureClass::nan:
    case FailureClass::data_exhausted:
    case FailureClass::code_error:
      return Rule::fail_unless_listed_code;
    case FailureClass::stalled:
      return Rule::stall_policy;
  }
  return Rule::restart_with_budget;
}

RestartDecision decide(RestartAction action, std::string reason) {
  RestartDecision d;
  d.action = action;
  d.spends_budget = action == RestartAction::restart;
  d.reason = std::move(reason);
  return d;
}

RestartDecision restart_or_fail(const RestartInput& in, const std::string& why) {
  const int used = std::max(0, in.restarts_used);
  const int budget = std::max(0, in.max_restarts);
  if (used < budget) {
    return decide(RestartAction::restart,
                  why + "; restart " + std::to_string(used + 1) + " of " + std::to_string(budget));
  }
  return decide(RestartAction::fail,
                why + "; restart budget exhausted (" + std::to_string(budget) + " allowed)");
}

// Podium stopped the attempt for a stall: the run's on_stall and stall limit decide, never the
// restart budget (a hung collective is the infrastructure's fault until it keeps happening).
RestartDecision decide_stall(const RestartInput& in) {
  const std::string count = std::to_string(std::max(1, in.stalls));
  const std::string limit = std::to_string(std::max(1, in.stall_limit));
  if (in.on_stall == StallAction::fail)
    return decide(RestartAction::fail, "stalled: on_stall is fail");
  if (in.stalls >= std::max(1, in.stall_limit))
    return decide(RestartAction::fail,
                  "stalled: stall " + count + " of this run, the limit is " + limit);
  // Its recovery counts as one: a run that keeps stalling on a flapping cluster is bounded too.
  if (in.max_recoveries && std::max(0, in.recoveries_used) >= std::max(0, *in.max_recoveries)) {
    RestartDecision d = decide(RestartAction::fail,
                               "stalled: max_recoveries reached (" +
                                   std::to_string(std::max(0, in.recoveries_used)) + " made, " +
                                   std::to_string(std::max(0, *in.max_recoveries)) + " allowed)");
    d.recoveries_exhausted = true;
    return d;
  }
  return decide(RestartAction::recover, "stalled: stall " + count + " of " + limit +
                                            " allowed; resumed from the latest checkpoint "
                                            "without spending the restart budget");
}

}  // namespace

std::string_view to_string(StallAction a) {
  switch (a) {
    case StallAction::alert:
      return "alert";
    case StallAction::restart:
      return "restart";
    case StallAction::fail:
      return "fail";
  }
  return "restart";
}

std::optional<StallAction> parse_stall_action(std::string_view name) {
  if (name == "alert") return StallAction::alert;
  if (name == "restart") return StallAction::restart;
  if (name == "fail") return StallAction::fail;
  return std::nullopt;
}

std::string_view to_string(RestartAction a) {
  switch (a) {
    case RestartAction::recover:
      return "recover";
    case RestartAction::restart:
      return "restart";
    case RestartAction::fail:
      return "fail";
  }
  return "fail";
}

RestartDecision decide_restart(const RestartInput& in) {
  const std::string cls(core::to_string(in.failure_class));
  const Rule rule = rule_for(in.failure_class);
  if (rule == Rule::stall_policy) return decide_stall(in);
  if (rule == Rule::recover) {
    if (in.max_recoveries && std::max(0, in.recoveries_used) >= std::max(0, *in.max_recoveries)) {
      RestartDecision d =
          decide(RestartAction::fail, cls + ": max_recoveries reached (" +
                                          std::to_string(std::max(0, in.recoveries_used)) +
                                          " infrastructure recoveries made, " +
                                          std::to_string(std::max(0, *in.max_recoveries)) +
                                          " allowed): the cluster keeps failing under this run");
      d.recoveries_exhausted = true;
      return d;
    }
    return decide(RestartAction::recover, cls + ": recovered without spending the restart budget");
  }
  auto listed = std::find_if(in.exit_codes.begin(), in.exit_codes.end(), [&](int code) {
    return std::find(in.restart_on_exit_codes.begin(), in.restart_on_exit_codes.end(), code) !=
           in.restart_on_exit_codes.end();
  });
  if (listed != in.exit_codes.end()) {
    return restart_or_fail(
        in, cls + ": exit code " + std::to_string(*listed) + " is in restart_on_exit_codes");
  }
  if (rule == Rule::restart_with_budget) return restart_or_fail(in, cls);
  return decide(RestartAction::fail, cls + ": deterministic, a retry would fail the same way");
}

nlohmann::json to_json(const RestartDecision& d) {
  return {{"action", std::string(to_string(d.action))},
          {"spends_budget", d.spends_budget},
          {"reason", d.reason}};
}

}  // namespace podium::sched
