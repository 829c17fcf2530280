#include "tests/integration/support/hand_agent.h"

#include <thread>

namespace podium::it {

using nlohmann::json;

namespace {

Api registered(Podium& podium, const std::string& cluster, const HandAgent::Host& host,
               std::string* worker_id) {
  json body = {{"cluster", cluster},
               {"slice", host.slice},
               {"host", host.host},
               {"instance", host.instance}};
  if (!host.address.empty()) body["address"] = host.address;
  const Api registrar = podium.as(podium.worker_token(cluster));
  const auto reg = require_status(registrar.post("/api/v1/agent/register", body), 200);
  *worker_id = reg.json["worker_id"].get<std::string>();
  return podium.as(reg.json["credential"].get<std::string>());
}

}  // namespace

HandAgent::HandAgent(Podium& podium, const std::string& cluster, const Host& host)
    : api_(registered(podium, cluster, host, &worker_id_)) {}

std::string HandAgent::next_attempt() const {
  return require_status(api_.get("/api/v1/agent/assignment?worker_id=" + worker_id_ + "&wait=10"),
                        200)
      .json["attempt_id"]
      .get<std::string>();
}

void HandAgent::report(const std::string& attempt, const std::string& state,
                       const json& extra) const {
  json body = {{"rank", 0}, {"state", state}};
  body.update(extra);
  require_status(api_.post("/api/v1/agent/attempts/" + attempt + "/status", body), 200);
}

json HandAgent::post_lines(const std::string& attempt, int seq, const json& lines) const {
  return require_status(api_.post("/api/v1/agent/attempts/" + attempt + "/logs",
                                  {{"rank", 0}, {"seq", seq}, {"lines", lines}}),
                        200)
      .json;
}

std::string wait_for_run_state(const Podium& podium, const std::string& run_id,
                               const std::string& state, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const std::string now =
        require_status(podium.admin().get("/api/v1/runs/" + run_id), 200).json.value("state", "");
    if (now == state || std::chrono::steady_clock::now() >= deadline) return now;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void OneAttemptTest::SetUp() {
  PodiumTest::SetUp();
  if (IsSkipped()) return;  // no test database
  cluster = unique_name("one");
  podium().create_cluster(cluster, "cpu-1");
  agent_ = std::make_unique<HandAgent>(podium(), cluster, HandAgent::Host{});
  run_id = podium().submit_run(podium().admin(), cluster)["id"];
  attempt = agent_->next_attempt();
}

json OneAttemptTest::post(int seq, const std::vector<std::string>& lines) {
  return agent_->post_lines(attempt, seq, lines);
}

}  // namespace podium::it
