// Issue 13 acceptance (per-host identity): with two real agents training a reference run, host
// 1's own credential (the one its agent keeps in its workdir) cannot report rank 0's exit: 403,
// and the run goes on to succeed untouched.

#include <fstream>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

class WorkerIdentity : public E2eTest {};

TEST_F(WorkerIdentity, AForgedStatusReportForAnotherWorkersRankIs403AndChangesNothing) {
  const auto cluster = create_cluster("cpu-2", 1);
  WorkerProcess& host1 = *start_workers(cluster, 1, 2).at(1);
  const json run = submit(reference_spec(unique_name("ident"), cluster, dataset(), {.steps = 30}));
  const std::string id = run["id"];
  ASSERT_TRUE(wait_for_state(id, "running", 180s));
  const std::string attempt = attempts(id).at(0)["id"];

  std::string credential;
  std::ifstream(host1.options().workdir / "credential") >> credential;
  ASSERT_EQ(credential.rfind("pdh_", 0), 0u) << "host 1's agent keeps its credential";
  it::Api forger(podium().url(), credential);
  auto forged = forger.post("/api/v1/agent/attempts/" + attempt + "/status",
                            {{"rank", 0}, {"state", "exited"}, {"exit_code", 1}});
  EXPECT_EQ(forged.status, 403) << forged;
  EXPECT_NE(forged.body.find("belongs to another worker"), std::string::npos) << forged;
  // The cluster's worker token, which every host holds, cannot either.
  it::Api cluster_token(podium().url(), podium().worker_token(cluster));
  EXPECT_EQ(cluster_token
                .post("/api/v1/agent/attempts/" + attempt + "/status",
                      {{"rank", 0}, {"state", "exited"}, {"exit_code", 1}})
                .status,
            403);

  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 240s, &done));
  EXPECT_EQ(done.value("restarts", -1), 0);
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u) << describe_attempts(att);
  for (const auto& h : att[0]["hosts"]) EXPECT_EQ(h["exit_code"], 0) << att[0].dump();
}

}  // namespace
}  // namespace podium::e2e
