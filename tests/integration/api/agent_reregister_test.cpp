// An agent registers again whenever it lost touch with the server (a server restart): its
// ranks' uploads already in flight carry the credential it held, so registering again must not
// make that credential invalid. Found by the crash soak (bench/reliability): a log batch sent
// just before the agent's new registration came back 401, and the agent dropped its lines.
#include <gtest/gtest.h>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

TEST(AgentReregister, TheSameAgentProcessKeepsItsCredentialAndANewOneGetsAFreshOne) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p;
  const std::string cluster = unique_name("rereg");
  p.create_cluster(cluster, "cpu-1");
  Api registrar = p.as(p.worker_token(cluster));
  auto register_as = [&](const std::string& instance, const std::string& credential) {
    json body = {{"cluster", cluster}, {"slice", 0}, {"host", 0}, {"instance", instance}};
    if (!credential.empty()) body["credential"] = credential;
    return require_status(registrar.post("/api/v1/agent/register", body), 200);
  };
  auto first = register_as("process-1", "");
  const std::string worker_id = first.json["worker_id"];
  const std::string credential = first.json["credential"];
  Api host = p.as(credential);
  require_status(host.post("/api/v1/agent/heartbeat", {{"worker_id", worker_id}}), 200);

  // The same process again, with its credential: the credential it holds keeps working.
  auto again = register_as("process-1", credential);
  EXPECT_EQ(again.json["worker_id"], worker_id);
  EXPECT_EQ(again.json["credential"], credential);
  require_status(host.post("/api/v1/agent/heartbeat", {{"worker_id", worker_id}}), 200);

  // Without its credential the same instance name proves nothing: a fresh one, the old dead.
  auto unproven = register_as("process-1", "");
  EXPECT_NE(unproven.json["credential"], credential);
  EXPECT_EQ(host.post("/api/v1/agent/heartbeat", {{"worker_id", worker_id}}).status, 401);
  const std::string second = unproven.json["credential"];

  // A new agent process of the same host (its credential from the workdir): a fresh one.
  auto restarted = register_as("process-2", second);
  EXPECT_NE(restarted.json["credential"], second);
  EXPECT_EQ(p.as(second).post("/api/v1/agent/heartbeat", {{"worker_id", worker_id}}).status, 401);
  require_status(p.as(restarted.json["credential"].get<std::string>())
                     .post("/api/v1/agent/heartbeat", {{"worker_id", worker_id}}),
                 200);
}

}  // namespace
}  // namespace podium::it
