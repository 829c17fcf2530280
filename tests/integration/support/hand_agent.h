#pragma once
// An agent driven by hand through the agent API, for integration tests that need an attempt to
// exist without a podium-worker process: registered for one host of a cluster, it takes the
// host's assignment and reports rank 0's state and lines one request at a time, as the worker
// would. Every call is set-up: it throws (require_status) unless the server answers 200.
//
//   HandAgent agent(podium(), cluster, {.instance = "lb"});
//   const std::string run_id = podium().submit_run(podium().admin(), cluster)["id"];
//   const std::string attempt = agent.next_attempt();
//   agent.report(attempt, "running");
//   agent.post_lines(attempt, 0, {"completed step: 0, ..."});
//
// OneAttemptTest: a PodiumTest whose SetUp did that much (a cpu-1 cluster, its host's hand
// agent, one command run and its assigned attempt).

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/support/podium.h"

namespace podium::it {

class HandAgent {
 public:
  struct Host {
    int slice = 0;
    int host = 0;
    std::string instance = "hand";
    std::string address;  // sent when not empty
  };
  // POST /api/v1/agent/register with a new worker token of `cluster`.
  HandAgent(Podium& podium, const std::string& cluster, const Host& host);

  const Api& api() const { return api_; }
  const std::string& worker_id() const { return worker_id_; }

  // GET /api/v1/agent/assignment?worker_id=...&wait=10: the assigned attempt's id.
  std::string next_attempt() const;
  // POST /api/v1/agent/attempts/{attempt}/status for rank 0: {"state": state} plus `extra`.
  void report(const std::string& attempt, const std::string& state,
              const nlohmann::json& extra = nlohmann::json::object()) const;
  // POST /api/v1/agent/attempts/{attempt}/logs for rank 0 from `seq`: the answer.
  nlohmann::json post_lines(const std::string& attempt, int seq, const nlohmann::json& lines) const;

 private:
  std::string worker_id_;  // before api_: registering sets it
  Api api_;
};

// Polls GET /api/v1/runs/{id} as admin every 50 ms until its state is `state` or `timeout`
// passes; returns the last state seen.
std::string wait_for_run_state(const Podium& podium, const std::string& run_id,
                               const std::string& state, std::chrono::milliseconds timeout);

class OneAttemptTest : public PodiumTest {
 protected:
  void SetUp() override;
  // POST the lines as rank 0's from `seq` (hand_agent().post_lines).
  nlohmann::json post(int seq, const std::vector<std::string>& lines);
  const HandAgent& hand_agent() const { return *agent_; }

  std::string cluster, run_id, attempt;

 private:
  std::unique_ptr<HandAgent> agent_;
};

}  // namespace podium::it
