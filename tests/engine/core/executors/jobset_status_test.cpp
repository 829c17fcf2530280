#include "engine/core/executors/jobset_status.h"

#include <gtest/gtest.h>

#include <string>

namespace podium::core {
namespace {

using nlohmann::json;
using Phase = EngineObservation::Phase;

// Condition texts as the JobSet controller (kubernetes-sigs/jobset v0.12.0,
// pkg/constants/constants.go and pkg/controllers/failure_policy.go) writes them.
json condition(const std::string& type, const std::string& status, const std::string& reason,
               const std::string& message) {
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastTransitionTime", "2026-11-24T10:00:00Z"}};
}
json completed() {
  return condition("Completed", "True", "AllJobsCompleted", "jobset completed successfully");
}
json reached_max_restarts() {
  // With failurePolicy {maxRestarts: 0} and no rules, a failed Job takes the default action
  // RestartJobSet, which finds the restarts used up.
  return condition("Failed", "True", "ReachedMaxRestarts",
                   "jobset failed due to reaching max number of restarts (first failed job: "
                   "podium-abc-1-slice-job-1)");
}
json failed_jobs() {
  return condition("Failed", "True", "FailedJobs",
                   "jobset failed due to one or more job failures (first failed job: "
                   "podium-abc-1-slice-job-0)");
}
json suspended_condition() {
  return condition("Suspended", "True", "SuspendedJobs", "jobset is suspended");
}
json resumed_condition() {
  return condition("Suspended", "False", "ResumeJobs", "jobset is resumed");
}

// What `kubectl get jobset podium-abc-1 -o json` prints, trimmed to what matters.
json jobset(json conditions, bool suspend = false) {
  return {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
          {"kind", "JobSet"},
          {"metadata",
           {{"name", "podium-abc-1"},
            {"namespace", "training"},
            {"uid", "5c1f6a8e-0d1b-4c7e-9a43-2f6f1d0c9b11"},
            {"labels", {{"kueue.x-k8s.io/queue-name", "multislice-queue"}}}}},
          {"spec",
           {{"suspend", suspend},
            {"failurePolicy", {{"maxRestarts", 0}}},
            {"replicatedJobs", json::array({{{"name", "slice-job"}, {"replicas", 2}}})}}},
          {"status",
           {{"conditions", std::move(conditions)},
            {"restarts", 0},
            {"replicatedJobsStatus", json::array({{{"name", "slice-job"},
                                                   {"active", 0},
                                                   {"ready", 0},
                                                   {"succeeded", 0},
                                                   {"failed", 0},
                                                   {"suspended", 0}}})}}}};
}

json pod_list(json items) {
  return {{"apiVersion", "v1"},
          {"kind", "List"},
          {"metadata", {{"resourceVersion", ""}}},
          {"items", std::move(items)}};
}

json pod(const std::string& name, const std::string& phase, json status_fields = json::object()) {
  json status = {{"phase", phase}, {"hostIP", "10.0.0.4"}, {"qosClass", "BestEffort"}};
  for (auto& [k, v] : status_fields.items()) status[k] = v;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"labels",
             {{"jobset.sigs.k8s.io/jobset-name", "podium-abc-1"},
              {"jobset.sigs.k8s.io/job-index", "0"},
              {"batch.kubernetes.io/job-completion-index", "0"}}}}},
          {"status", status}};
}

json pod_condition(const std::string& type, const std::string& status, const std::string& reason,
                   const std::string& message) {
  return {{"type", type}, {"status", status}, {"reason", reason}, {"message", message}};
}

json terminated(const std::string& reason, int exit_code) {
  return json::array({{{"name", "jax-tpu"},
                       {"ready", false},
                       {"restartCount", 0},
                       {"state",
                        {{"terminated",
                          {{"reason", reason},
                           {"exitCode", exit_code},
                           {"finishedAt", "2026-11-24T10:00:00Z"}}}}}}});
}

json disrupted_pod(const std::string& name, const std::string& reason, const std::string& message) {
  return pod(
      name, "Failed",
      {{"conditions", json::array({pod_condition("DisruptionTarget", "True", reason, message),
                                   pod_condition("Ready", "False", "PodFailed", "")})},
       {"containerStatuses", terminated("Error", 143)}});
}

// A rank that exited on its own, as the rest of a failed gang does.
json errored_pod(const std::string& name, int exit_code = 1) {
  return pod(name, "Failed", {{"containerStatuses", terminated("Error", exit_code)}});
}

EngineObservation failed_with(json pods) {
  return observe_jobset(jobset(json::array({reached_max_restarts()})), pod_list(std::move(pods)));
}

TEST(JobSetStatus, NotFoundIsVanished) {
  const auto o = observe_jobset(nullptr, pod_list(json::array()));
  EXPECT_EQ(o.phase, Phase::vanished);
  EXPECT_EQ(o.engine_state, "NotFound");
  EXPECT_FALSE(o.reason.empty());
}

TEST(JobSetStatus, CompletedSucceeds) {
  const auto o = observe_jobset(jobset(json::array({resumed_condition(), completed()})),
                                pod_list(json::array({pod("w-0", "Succeeded")})));
  EXPECT_EQ(o.phase, Phase::finished);
  EXPECT_TRUE(o.succeeded);
  EXPECT_FALSE(o.failure_class);
  EXPECT_EQ(o.engine_state, "Completed");
  EXPECT_NE(o.reason.find("AllJobsCompleted"), std::string::npos) << o.reason;
}

TEST(JobSetStatus, TerminalStateAloneIsEnough) {
  json js = jobset(json::array());
  js["status"]["terminalState"] = "Completed";
  EXPECT_TRUE(observe_jobset(js, pod_list(json::array())).succeeded);
  js["status"]["terminalState"] = "Failed";
  const auto o = observe_jobset(js, pod_list(json::array()));
  EXPECT_EQ(o.phase, Phase::finished);
  EXPECT_FALSE(o.succeeded);
}

TEST(JobSetStatus, AFinishedJobSetStaysFinishedWhenSuspended) {
  const auto o = observe_jobset(jobset(json::array({completed()}), true), pod_list(json::array()));
  EXPECT_EQ(o.phase, Phase::finished);
  EXPECT_TRUE(o.succeeded);
}

TEST(JobSetStatus, PreemptedPodsMakeItPreempted) {
  struct Row {
    const char* reason;
    const char* message;
  };
  for (const Row& row : {
           Row{"PreemptionByScheduler", "podium-other-0 on node gke-tpu-1 preempted it"},
           Row{"TerminationByKubelet", "Pod was terminated in response to imminent node shutdown."},
           Row{"EvictionByEvictionAPI", "Eviction API: evicting"},
           Row{"DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint"},
       }) {
    SCOPED_TRACE(row.reason);
    // The preempted pod is listed last: the others' failures are its consequence.
    const auto o = failed_with(json::array(
        {errored_pod("podium-abc-1-slice-job-0-0-x"), errored_pod("podium-abc-1-slice-job-0-1-y"),
         disrupted_pod("podium-abc-1-slice-job-1-0-z", row.reason, row.message)}));
    EXPECT_EQ(o.phase, Phase::finished);
    EXPECT_FALSE(o.succeeded);
    EXPECT_EQ(o.engine_state, "Failed");
    EXPECT_EQ(o.failure_class, FailureClass::preempted);
    EXPECT_NE(o.reason.find(row.reason), std::string::npos) << o.reason;
    EXPECT_NE(o.reason.find("podium-abc-1-slice-job-1-0-z"), std::string::npos) << o.reason;
  }
}

TEST(JobSetStatus, EvictedPodIsPreempted) {
  const auto o = failed_with(json::array(
      {pod("w-0", "Failed",
           {{"reason", "Evicted"},
            {"message", "The node was low on resource: memory. Threshold quantity: 100Mi."}})}));
  EXPECT_EQ(o.failure_class, FailureClass::preempted);
  EXPECT_NE(o.reason.find("low on resource"), std::string::npos) << o.reason;
}

TEST(JobSetStatus, GracefulNodeShutdownIsAPreemption) {
  // What the kubelet leaves on a pod when GKE reclaims a Spot VM: both the node-shutdown
  // reason and the DisruptionTarget condition.
  const auto o = failed_with(json::array({pod(
      "w-0", "Failed",
      {{"reason", "Terminated"},
       {"message", "Pod was terminated in response to imminent node shutdown."},
       {"conditions", json::array({pod_condition("DisruptionTarget", "True", "TerminationByKubelet",
                                                 "Pod was terminated in response to imminent node "
                                                 "shutdown.")})}})}));
  EXPECT_EQ(o.failure_class, FailureClass::preempted);
}

TEST(JobSetStatus, LostNodesMakeItHostLost) {
  for (const char* reason :
       {"NodeLost", "UnexpectedAdmissionError", "Terminated", "NodeShutdown"}) {
    SCOPED_TRACE(reason);
    const auto o = failed_with(
        json::array({errored_pod("w-0"),
                     pod("w-1", "Failed",
                         {{"reason", reason}, {"message", "Node gke-tpu-3 is unresponsive"}})}));
    EXPECT_EQ(o.failure_class, FailureClass::host_lost);
    EXPECT_NE(o.reason.find(reason), std::string::npos) << o.reason;
    EXPECT_NE(o.reason.find("w-1"), std::string::npos) << o.reason;
  }
  const auto gc = failed_with(json::array(
      {pod("w-0", "Failed",
           {{"conditions", json::array({pod_condition("DisruptionTarget", "True", "DeletionByPodGC",
                                                      "PodGC: node no longer exists")})}})}));
  EXPECT_EQ(gc.failure_class, FailureClass::host_lost);
}

TEST(JobSetStatus, OomKilledContainerIsOom) {
  const auto o = failed_with(
      json::array({errored_pod("w-0", 143),
                   pod("w-1", "Failed", {{"containerStatuses", terminated("OOMKilled", 137)}})}));
  EXPECT_EQ(o.failure_class, FailureClass::oom);
  EXPECT_NE(o.reason.find("host memory"), std::string::npos) << o.reason;
  EXPECT_EQ(o.exit_code, 143);  // the first nonzero exit in the list
}

TEST(JobSetStatus, PreemptionBeatsHostLossBeatsOom) {
  const json oom = pod("w-0", "Failed", {{"containerStatuses", terminated("OOMKilled", 137)}});
  const json lost = pod("w-1", "Failed", {{"reason", "NodeLost"}});
  const json preempted = disrupted_pod("w-2", "PreemptionByScheduler", "");
  EXPECT_EQ(failed_with(json::array({oom, lost, preempted})).failure_class,
            FailureClass::preempted);
  EXPECT_EQ(failed_with(json::array({oom, lost})).failure_class, FailureClass::host_lost);
  EXPECT_EQ(failed_with(json::array({lost, oom})).failure_class, FailureClass::host_lost);
}

TEST(JobSetStatus, OtherwiseTheRanksDecide) {
  const auto o = failed_with(json::array({errored_pod("w-0", 3), pod("w-1", "Failed")}));
  EXPECT_EQ(o.phase, Phase::finished);
  EXPECT_FALSE(o.succeeded);
  EXPECT_FALSE(o.failure_class);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_NE(o.reason.find("ReachedMaxRestarts"), std::string::npos) << o.reason;
  EXPECT_NE(o.reason.find("first failed job: podium-abc-1-slice-job-1"), std::string::npos)
      << o.reason;

  const auto plain = observe_jobset(jobset(json::array({failed_jobs()})), pod_list(json::array()));
  EXPECT_EQ(plain.phase, Phase::finished);
  EXPECT_FALSE(plain.failure_class);
  EXPECT_FALSE(plain.exit_code);
  EXPECT_NE(plain.reason.find("FailedJobs"), std::string::npos) << plain.reason;
}

TEST(JobSetStatus, SuspendedByKueueIsQueued) {
  // Kueue's webhook creates the JobSet suspended; the controller has not written conditions yet.
  const auto created = observe_jobset(jobset(json::array(), true), pod_list(json::array()));
  EXPECT_EQ(created.phase, Phase::queued);
  EXPECT_EQ(created.engine_state, "Suspended");
  EXPECT_EQ(created.waiting_reason, "Kueue has not admitted the workload");

  const auto condition_only =
      observe_jobset(jobset(json::array({suspended_condition()})), pod_list(json::array()));
  EXPECT_EQ(condition_only.phase, Phase::queued);
  EXPECT_EQ(condition_only.waiting_reason,
            "Kueue has not admitted the workload (jobset is suspended)");
}

TEST(JobSetStatus, RunningPodsAreRunning) {
  const auto o =
      observe_jobset(jobset(json::array({resumed_condition()})),
                     pod_list(json::array({pod("w-0", "Pending"), pod("w-1", "Running")})));
  EXPECT_EQ(o.phase, Phase::running);
  EXPECT_EQ(o.engine_state, "Running");
  // Pods that already ended belong to a gang that ran; the JobSet's verdict comes next.
  EXPECT_EQ(observe_jobset(jobset(json::array()),
                           pod_list(json::array({pod("w-0", "Succeeded"), pod("w-1", "Pending")})))
                .phase,
            Phase::running);
}

TEST(JobSetStatus, PendingPodsSayWhy) {
  const auto unschedulable = observe_jobset(
      jobset(json::array({resumed_condition()})),
      pod_list(json::array(
          {pod("w-0", "Pending",
               {{"conditions",
                 json::array({pod_condition("PodScheduled", "False", "Unschedulable",
                                            "0/4 nodes are available: 4 Insufficient "
                                            "google.com/tpu. preemption: 0/4 nodes are "
                                            "available: 4 No preemption victims found.")})}})})));
  EXPECT_EQ(unschedulable.phase, Phase::queued);
  EXPECT_EQ(unschedulable.engine_state, "Pending");
  EXPECT_EQ(unschedulable.waiting_reason.rfind("Unschedulable: 0/4 nodes are available", 0), 0u)
      << unschedulable.waiting_reason;

  const auto pulling = observe_jobset(
      jobset(json::array()),
      pod_list(json::array({pod(
          "w-0", "Pending",
          {{"conditions", json::array({pod_condition("PodScheduled", "True", "", "")})},
           {"containerStatuses",
            json::array(
                {{{"name", "jax-tpu"},
                  {"state",
                   {{"waiting",
                     {{"reason", "ImagePullBackOff"},
                      {"message",
                       "Back-off pulling image \"us-docker.pkg.dev/p/r/maxtext\""}}}}}}})}})})));
  EXPECT_EQ(pulling.phase, Phase::queued);
  EXPECT_EQ(pulling.waiting_reason.rfind("ImagePullBackOff: Back-off pulling image", 0), 0u)
      << pulling.waiting_reason;

  const auto creating = observe_jobset(
      jobset(json::array()),
      pod_list(json::array({pod(
          "w-0", "Pending",
          {{"containerStatuses",
            json::array({{{"name", "jax-tpu"},
                          {"state", {{"waiting", {{"reason", "ContainerCreating"}}}}}}})}})})));
  EXPECT_EQ(creating.waiting_reason, "pods are starting");

  const auto none = observe_jobset(jobset(json::array()), pod_list(json::array()));
  EXPECT_EQ(none.phase, Phase::queued);
  EXPECT_NE(none.waiting_reason.find("not created the pods"), std::string::npos);
}

TEST(JobSetStatus, MalformedInputNeverThrows) {
  const std::vector<json> jobsets = {
      json(42),
      json("x"),
      json::array(),
      json::object(),
      json{{"status", "x"}},
      json{{"status", {{"conditions", {1, "a", nullptr, json::array()}}}}},
      json{{"status", {{"conditions", json::array({{{"type", "Failed"}, {"status", true}}})}}}},
      json{{"status", {{"conditions", json::array({{{"type", 7}, {"status", "True"}}})}}}},
      json{{"status", {{"terminalState", 3}}}},
      json{{"spec", {{"suspend", "yes"}}}},
      json{{"spec", 5}},
      jobset(json::array({reached_max_restarts()})),
  };
  const std::vector<json> pod_lists = {
      json(nullptr),
      json("x"),
      json{{"items", 3}},
      json{{"items", {1, "p", nullptr, json{{"status", 2}}, json{{"metadata", 4}}}}},
      json{{"items",
            json::array({{{"status",
                           {{"phase", 1},
                            {"reason", json::array()},
                            {"conditions", {1, json{{"type", "DisruptionTarget"}}}},
                            {"containerStatuses",
                             {2, json{{"state", {{"terminated", {{"exitCode", "1"}}}}}},
                              json{{"state", {{"terminated", {{"exitCode", 1e300}}}}}},
                              json{{"state", {{"terminated", {{"exitCode", 99999999999}}}}}},
                              json{{"state", 7}}}}}}}})}},
  };
  for (const auto& js : jobsets)
    for (const auto& p : pod_lists) EXPECT_NO_THROW(observe_jobset(js, p)) << js << " " << p;

  // Mistyped fields count as absent: a status that is not "True" is no condition, a suspend
  // that is not a boolean is no suspension.
  EXPECT_NE(observe_jobset(jobsets[6], pod_list(json::array())).phase, Phase::finished);
  EXPECT_EQ(observe_jobset(jobsets[9], pod_list(json::array())).engine_state, "Pending");
  // Only null is NotFound; another non-object is a JobSet with nothing known.
  EXPECT_EQ(observe_jobset(json(42), pod_list(json::array())).phase, Phase::queued);
  // A huge or non-integer exit code is no exit code.
  EXPECT_FALSE(observe_jobset(jobsets.back(), pod_lists.back()).exit_code);
}

}  // namespace
}  // namespace podium::core
