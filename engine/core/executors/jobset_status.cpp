#include "engine/core/executors/jobset_status.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace podium::core {

namespace {

using nlohmann::json;
using Phase = EngineObservation::Phase;

// j[a][b]... when every step exists with the right type, else a null value.
const json& at(const json& j, std::initializer_list<const char*> path) {
  static const json null_value;
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object()) return null_value;
    auto it = cur->find(key);
    if (it == cur->end()) return null_value;
    cur = &*it;
  }
  return *cur;
}

std::string text(const json& j, std::initializer_list<const char*> path) {
  const json& v = at(j, path);
  return v.is_string() ? v.get<std::string>() : std::string();
}

const json& array_at(const json& j, std::initializer_list<const char*> path) {
  static const json empty = json::array();
  const json& v = at(j, path);
  return v.is_array() ? v : empty;
}

// The condition of `type` whose status is "True", or null.
const json* true_condition(const json& conditions, const char* type) {
  if (!conditions.is_array()) return nullptr;
  for (const auto& c : conditions)
    if (text(c, {"type"}) == type && text(c, {"status"}) == "True") return &c;
  return nullptr;
}

// "Reason: message", "Reason" or "message".
std::string reason_and_message(const json& j) {
  const std::string reason = text(j, {"reason"});
  const std::string message = text(j, {"message"});
  if (reason.empty()) return message;
  return message.empty() ? reason : reason + ": " + message;
}

std::string pod_name(const json& pod) {
  const std::string name = text(pod, {"metadata", "name"});
  return name.empty() ? "(unnamed)" : name;
}

// Both kinds of container status, init containers first.
std::vector<const json*> container_statuses(const json& pod) {
  std::vector<const json*> out;
  for (const char* field : {"initContainerStatuses", "containerStatuses"})
    for (const auto& s : array_at(pod, {"status", field}))
      if (s.is_object()) out.push_back(&s);
  return out;
}

struct PodVerdict {
  std::optional<FailureClass> failure_class;
  std::string why;
};

std::optional<PodVerdict> preempted(const json& pod) {
  const std::string name = pod_name(pod);
  if (const json* d = true_condition(at(pod, {"status", "conditions"}), "DisruptionTarget")) {
    // DeletionByPodGC: the pod's Node object is gone, which is host loss (below).
    if (text(*d, {"reason"}) != "DeletionByPodGC") {
      const std::string detail = reason_and_message(*d);
      return PodVerdict{FailureClass::preempted,
                        "pod " + name + " was disrupted (" +
                            (detail.empty() ? std::string("DisruptionTarget") : detail) + ")"};
    }
  }
  const std::string reason = text(pod, {"status", "reason"});
  if (reason == "Evicted" || reason == "Preempting") {
    const std::string detail = reason_and_message(at(pod, {"status"}));
    return PodVerdict{FailureClass::preempted, "pod " + name + " was evicted (" + detail + ")"};
  }
  return std::nullopt;
}

std::optional<PodVerdict> host_lost(const json& pod) {
  const std::string name = pod_name(pod);
  const std::string reason = text(pod, {"status", "reason"});
  if (reason == "NodeLost" || reason == "UnexpectedAdmissionError" || reason == "Terminated" ||
      reason == "NodeShutdown")
    return PodVerdict{FailureClass::host_lost, "pod " + name + " lost its node (" +
                                                   reason_and_message(at(pod, {"status"})) + ")"};
  if (const json* d = true_condition(at(pod, {"status", "conditions"}), "DisruptionTarget"))
    if (text(*d, {"reason"}) == "DeletionByPodGC")
      return PodVerdict{FailureClass::host_lost,
                        "pod " + name + " lost its node (" + reason_and_message(*d) + ")"};
  return std::nullopt;
}

std::optional<PodVerdict> oom_killed(const json& pod) {
  for (const json* s : container_statuses(pod))
    for (const char* state : {"state", "lastState"})
      if (text(*s, {state, "terminated", "reason"}) == "OOMKilled")
        return PodVerdict{FailureClass::oom, "container " + text(*s, {"name"}) + " of pod " +
                                                 pod_name(pod) +
                                                 " was OOM-killed (host memory, not HBM)"};
  return std::nullopt;
}

// What the pods say about a failed JobSet, in the table's order across all pods: one preempted
// pod explains the others' failures, whatever order kubectl lists them in.
std::optional<PodVerdict> pod_failure(const json& pods) {
  for (auto rule : {preempted, host_lost, oom_killed})
    for (const auto& pod : array_at(pods, {"items"}))
      if (auto verdict = rule(pod)) return verdict;
  return std::nullopt;
}

std::optional<int> first_failed_exit_code(const json& pods) {
  for (const auto& pod : array_at(pods, {"items"}))
    for (const json* s : container_statuses(pod)) {
      const json& code = at(*s, {"state", "terminated", "exitCode"});
      if (!code.is_number_integer()) continue;
      if (code.is_number_unsigned() && code.get<std::uint64_t>() > INT32_MAX) continue;
      const std::int64_t v = code.get<std::int64_t>();
      if (v != 0 && v >= INT32_MIN && v <= INT32_MAX) return static_cast<int>(v);
    }
  return std::nullopt;
}

// Why no pod runs yet, most telling first; "" when the pods say nothing.
std::string pending_reason(const json& pods) {
  for (const auto& pod : array_at(pods, {"items"}))
    for (const auto& c : array_at(pod, {"status", "conditions"}))
      if (text(c, {"type"}) == "PodScheduled" && text(c, {"status"}) == "False") {
        const std::string r = reason_and_message(c);
        if (!r.empty()) return r;
      }
  for (const auto& pod : array_at(pods, {"items"}))
    for (const json* s : container_statuses(pod)) {
      const json& waiting = at(*s, {"state", "waiting"});
      // ContainerCreating and PodInitializing are the normal way up, not a reason to show.
      const std::string reason = text(waiting, {"reason"});
      if (!reason.empty() && reason != "ContainerCreating" && reason != "PodInitializing")
        return reason_and_message(waiting);
    }
  return "";
}

}  // namespace

EngineObservation observe_jobset(const json& jobset, const json& pods) {
  EngineObservation o;
  if (jobset.is_null()) {
    o.phase = Phase::vanished;
    o.engine_state = "NotFound";
    o.reason = "the JobSet no longer exists";
    return o;
  }
  const json& conditions = at(jobset, {"status", "conditions"});
  const std::string terminal = text(jobset, {"status", "terminalState"});
  const json* completed = true_condition(conditions, "Completed");
  const json* failed = true_condition(conditions, "Failed");
  if (completed || (!failed && terminal == "Completed")) {
    o.phase = Phase::finished;
    o.engine_state = "Completed";
    o.succeeded = true;
    const std::string detail = completed ? reason_and_message(*completed) : std::string();
    o.reason = "JobSet completed" + (detail.empty() ? "" : " (" + detail + ")");
    return o;
  }
  if (failed || terminal == "Failed") {
    o.phase = Phase::finished;
    o.engine_state = "Failed";
    o.exit_code = first_failed_exit_code(pods);
    if (auto verdict = pod_failure(pods)) {
      o.failure_class = verdict->failure_class;
      o.reason = "JobSet failed: " + verdict->why;
    } else {
      const std::string detail = failed ? reason_and_message(*failed) : std::string();
      o.reason = "JobSet failed" + (detail.empty() ? "" : " (" + detail + ")");
    }
    return o;
  }
  const json& suspend = at(jobset, {"spec", "suspend"});
  const json* suspended = true_condition(conditions, "Suspended");
  if ((suspend.is_boolean() && suspend.get<bool>()) || suspended) {
    o.phase = Phase::queued;
    o.engine_state = "Suspended";
    o.waiting_reason = "Kueue has not admitted the workload";
    const std::string message = suspended ? text(*suspended, {"message"}) : std::string();
    if (!message.empty()) o.waiting_reason += " (" + message + ")";
    return o;
  }
  // A pod that already ended belongs to a gang that started; the JobSet's verdict follows.
  for (const auto& pod : array_at(pods, {"items"})) {
    const std::string phase = text(pod, {"status", "phase"});
    if (phase == "Running" || phase == "Succeeded" || phase == "Failed") {
      o.phase = Phase::running;
      o.engine_state = "Running";
      return o;
    }
  }
  o.phase = Phase::queued;
  o.engine_state = "Pending";
  o.waiting_reason = pending_reason(pods);
  if (o.waiting_reason.empty())
    o.waiting_reason = array_at(pods, {"items"}).empty()
                           ? "the JobSet controller has not created the pods yet"
                           : "pods are starting";
  return o;
}

}  // namespace podium::core
