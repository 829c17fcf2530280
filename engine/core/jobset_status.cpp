#include "engine/core/jobset_status.h"

namespace podium::core {

namespace {

using nlohmann::json;

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

// The condition of `type` whose status is "True", or null.
const json* true_condition(const json& conditions, const std::string& type) {
  if (!conditions.is_array()) return nullptr;
  for (const auto& c : conditions)
    if (c.is_object() && text(c, {"type"}) == type && text(c, {"status"}) == "True") return &c;
  return nullptr;
}

const json& pod_items(const json& pods) {
  static const json empty = json::array();
  const json& items = at(pods, {"items"});
  return items.is_array() ? items : empty;
}

bool any_container_terminated_with(const json& pod, const std::string& reason) {
  for (const char* field : {"containerStatuses", "initContainerStatuses"}) {
    const json& statuses = at(pod, {"status", field});
    if (!statuses.is_array()) continue;
    for (const auto& s : statuses) {
      if (text(s, {"state", "terminated", "reason"}) == reason) return true;
      if (text(s, {"lastState", "terminated", "reason"}) == reason) return true;
    }
  }
  return false;
}

// What the pods say about a failed JobSet: the most telling cause first.
std::pair<std::optional<FailureClass>, std::string> pod_failure(const json& pods) {
  for (const auto& pod : pod_items(pods)) {
    const std::string name = text(pod, {"metadata", "name"});
    const std::string reason = text(pod, {"status", "reason"});
    if (reason == "NodeLost" || reason == "Terminated" || reason == "NodeShutdown" ||
        reason == "UnexpectedAdmissionError")
      return {FailureClass::host_lost, "pod " + name + " lost its node (" + reason + ")"};
    if (const json* d = true_condition(at(pod, {"status", "conditions"}), "DisruptionTarget")) {
      const std::string why = text(*d, {"reason"});
      if (why == "DeletionByTaintManager")
        return {FailureClass::host_lost, "pod " + name + " was deleted from a failing node"};
      return {FailureClass::preempted,
              "pod " + name + " was disrupted (" + (why.empty() ? "DisruptionTarget" : why) + ")"};
    }
    if (reason == "Evicted" || reason == "Preempting")
      return {FailureClass::preempted, "pod " + name + " was evicted"};
  }
  for (const auto& pod : pod_items(pods))
    if (any_container_terminated_with(pod, "OOMKilled"))
      return {FailureClass::oom,
              "pod " + text(pod, {"metadata", "name"}) + " was OOM-killed (host memory)"};
  return {std::nullopt, ""};
}

}  // namespace

EngineObservation observe_jobset(const json& jobset, const json& pods) {
  EngineObservation o;
  if (!jobset.is_object()) {
    o.phase = EngineObservation::Phase::vanished;
    o.engine_state = "NotFound";
    o.reason = "the JobSet no longer exists";
    return o;
  }
  const json& conditions = at(jobset, {"status", "conditions"});
  if (const json* done = true_condition(conditions, "Completed")) {
    o.phase = EngineObservation::Phase::finished;
    o.engine_state = "Completed";
    o.succeeded = true;
    o.reason = "JobSet completed" +
               (text(*done, {"message"}).empty() ? "" : ": " + text(*done, {"message"}));
    return o;
  }
  if (const json* failed = true_condition(conditions, "Failed")) {
    o.phase = EngineObservation::Phase::finished;
    o.engine_state = "Failed";
    auto [cls, why] = pod_failure(pods);
    o.failure_class = cls;
    const std::string message = text(*failed, {"message"});
    const std::string reason = text(*failed, {"reason"});
    o.reason = !why.empty() ? "JobSet failed: " + why
                            : "JobSet failed" + (reason.empty() ? "" : " (" + reason + ")") +
                                  (message.empty() ? "" : ": " + message);
    return o;
  }
  const json& suspend = at(jobset, {"spec", "suspend"});
  const json* suspended = true_condition(conditions, "Suspended");
  if ((suspend.is_boolean() && suspend.get<bool>()) || suspended) {
    o.phase = EngineObservation::Phase::queued;
    o.engine_state = "Suspended";
    o.waiting_reason = "Kueue has not admitted the workload";
    if (suspended && !text(*suspended, {"message"}).empty())
      o.waiting_reason += " (" + text(*suspended, {"message"}) + ")";
    return o;
  }
  std::string pending_reason;
  for (const auto& pod : pod_items(pods)) {
    if (text(pod, {"status", "phase"}) == "Running") {
      o.phase = EngineObservation::Phase::running;
      o.engine_state = "Running";
      return o;
    }
    const json& pc = at(pod, {"status", "conditions"});
    if (pending_reason.empty() && pc.is_array())
      for (const auto& c : pc)
        if (text(c, {"type"}) == "PodScheduled" && text(c, {"status"}) == "False")
          pending_reason = text(c, {"reason"}) +
                           (text(c, {"message"}).empty() ? "" : ": " + text(c, {"message"}));
  }
  o.phase = EngineObservation::Phase::queued;
  o.engine_state = "Pending";
  o.waiting_reason = pending_reason.empty() ? "pods not running yet" : pending_reason;
  return o;
}

}  // namespace podium::core
