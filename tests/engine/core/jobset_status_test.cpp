#include "engine/core/jobset_status.h"

#include <gtest/gtest.h>

namespace podium::core {
namespace {

using nlohmann::json;
using Phase = EngineObservation::Phase;

json jobset_with(json conditions, bool suspend = false) {
  return {{"metadata", {{"name", "podium-x-1"}}},
          {"spec", {{"suspend", suspend}}},
          {"status", {{"conditions", std::move(conditions)}}}};
}

json condition(const std::string& type, const std::string& reason, const std::string& message) {
  return {{"type", type},
          {"status", "True"},
          {"reason", reason},
          {"message", message},
          {"lastTransitionTime", "2026-11-24T10:00:00Z"}};
}

json pods(json items) {
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
}

json pod(const std::string& name, const std::string& phase, json extra_status = json::object()) {
  json status = {{"phase", phase}};
  for (auto& [k, v] : extra_status.items()) status[k] = v;
  return {{"metadata", {{"name", name}}}, {"status", status}};
}

TEST(JobSetStatus, GoneIsVanished) {
  EXPECT_EQ(observe_jobset(nullptr, pods(json::array())).phase, Phase::vanished);
}

TEST(JobSetStatus, CompletedSucceeds) {
  auto o = observe_jobset(jobset_with(json::array({condition("Completed", "AllJobsCompleted",
                                                             "jobset completed successfully")})),
                          pods(json::array()));
  EXPECT_EQ(o.phase, Phase::finished);
  EXPECT_TRUE(o.succeeded);
}

TEST(JobSetStatus, FailedWithAPreemptedPodIsPreempted) {
  auto o = observe_jobset(
      jobset_with(json::array(
          {condition("Failed", "FailedJobs", "jobset failed due to one or more job failures")})),
      pods(json::array({pod("w-0", "Failed",
                            {{"conditions", json::array({{{"type", "DisruptionTarget"},
                                                          {"status", "True"},
                                                          {"reason", "PreemptionByScheduler"}}})}}),
                        pod("w-1", "Failed")})));
  EXPECT_EQ(o.phase, Phase::finished);
  EXPECT_EQ(o.failure_class, FailureClass::preempted);
  EXPECT_NE(o.reason.find("PreemptionByScheduler"), std::string::npos) << o.reason;
}

TEST(JobSetStatus, FailedWithALostNodeIsHostLost) {
  auto o = observe_jobset(jobset_with(json::array({condition("Failed", "FailedJobs", "")})),
                          pods(json::array({pod("w-0", "Failed", {{"reason", "NodeLost"}})})));
  EXPECT_EQ(o.failure_class, FailureClass::host_lost);
  auto taint = observe_jobset(
      jobset_with(json::array({condition("Failed", "FailedJobs", "")})),
      pods(json::array(
          {pod("w-0", "Failed",
               {{"conditions", json::array({{{"type", "DisruptionTarget"},
                                             {"status", "True"},
                                             {"reason", "DeletionByTaintManager"}}})}})})));
  EXPECT_EQ(taint.failure_class, FailureClass::host_lost);
}

TEST(JobSetStatus, FailedWithAnOomKilledContainerIsOom) {
  auto o = observe_jobset(
      jobset_with(json::array({condition("Failed", "FailedJobs", "")})),
      pods(json::array(
          {pod("w-0", "Failed",
               {{"containerStatuses",
                 json::array(
                     {{{"name", "jax-tpu"},
                       {"state",
                        {{"terminated", {{"reason", "OOMKilled"}, {"exitCode", 137}}}}}}})}})})));
  EXPECT_EQ(o.failure_class, FailureClass::oom);
}

TEST(JobSetStatus, FailedOtherwiseLeavesItToTheRanks) {
  auto o = observe_jobset(
      jobset_with(json::array({condition("Failed", "ReachedMaxRestarts",
                                         "jobset failed due to reaching max number of restarts")})),
      pods(json::array({pod("w-0", "Failed")})));
  EXPECT_EQ(o.phase, Phase::finished);
  EXPECT_FALSE(o.failure_class);
  EXPECT_NE(o.reason.find("ReachedMaxRestarts"), std::string::npos);
}

TEST(JobSetStatus, SuspendedByKueueIsQueued) {
  auto o = observe_jobset(jobset_with(json::array(), true), pods(json::array()));
  EXPECT_EQ(o.phase, Phase::queued);
  EXPECT_NE(o.waiting_reason.find("Kueue"), std::string::npos);
  auto c = observe_jobset(
      jobset_with(json::array({condition("Suspended", "SuspendedJobs", "jobset is suspended")})),
      pods(json::array()));
  EXPECT_EQ(c.phase, Phase::queued);
  EXPECT_NE(c.waiting_reason.find("jobset is suspended"), std::string::npos);
}

TEST(JobSetStatus, RunningAndPendingPods) {
  EXPECT_EQ(observe_jobset(jobset_with(json::array()),
                           pods(json::array({pod("w-0", "Pending"), pod("w-1", "Running")})))
                .phase,
            Phase::running);
  auto pending = observe_jobset(
      jobset_with(json::array()),
      pods(json::array({pod(
          "w-0", "Pending",
          {{"conditions",
            json::array(
                {{{"type", "PodScheduled"},
                  {"status", "False"},
                  {"reason", "Unschedulable"},
                  {"message", "0/4 nodes are available: 4 Insufficient google.com/tpu."}}})}})})));
  EXPECT_EQ(pending.phase, Phase::queued);
  EXPECT_NE(pending.waiting_reason.find("Unschedulable: 0/4 nodes"), std::string::npos)
      << pending.waiting_reason;
}

TEST(JobSetStatus, MalformedInputNeverThrows) {
  for (const json& js : {json(42), json::array(), json{{"status", "x"}},
                         json{{"status", {{"conditions", {1, "a", nullptr}}}}},
                         json{{"spec", {{"suspend", "yes"}}}}})
    for (const json& p :
         {json(nullptr), json("x"), json{{"items", 3}}, json{{"items", {1, json{{"status", 2}}}}}})
      EXPECT_NO_THROW(observe_jobset(js, p));
}

}  // namespace
}  // namespace podium::core
