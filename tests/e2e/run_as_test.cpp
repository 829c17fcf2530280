// Issue 13.5 (who may run what on hosts): an agent started as root must be told whom its ranks
// run as, and with --run-as nobody a command run's process is nobody's, works in a directory the
// agent gave it, and cannot read the agent's credential.

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "tests/e2e/support/e2e.h"
#include "tests/integration/support/env.h"
#include "tests/integration/support/spawn.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

class RunAs : public E2eTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "switching accounts needs an agent running as root";
    E2eTest::SetUp();
    // The test's directory (mkdtemp: 0700) holds the agents' workdirs: let other accounts pass.
    ::chmod(dir().c_str(), 0755);
  }
};

TEST_F(RunAs, ACommandRunsAsTheNamedAccountAndCannotReadTheAgentsCredential) {
  const auto cluster = create_cluster("cpu-1", 1);
  auto& agent = start_worker(cluster, 0, 0, "nobody");
  const json run = submit({{"name", unique_name("runas")},
                           {"cluster", cluster},
                           {"workload", "command"},
                           {"command",
                            "echo uid=$(id -u) gid=$(id -g) home=$HOME; touch mine && echo wrote; "
                            "cat ../credential 2>/dev/null || echo credential-unreadable"}});
  const std::string id = run["id"];
  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 120s, &done)) << diagnostics(id);
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u);
  std::string text;
  for (const auto& l : stored_logs(id, att[0]["id"], 0)) text += l.value("line", "") + "\n";
  EXPECT_NE(text.find("uid=65534 gid=65534 home=/nonexistent"), std::string::npos) << text;
  EXPECT_NE(text.find("wrote"), std::string::npos) << text;
  EXPECT_NE(text.find("credential-unreadable"), std::string::npos) << text;
  EXPECT_EQ(text.find("pdh_"), std::string::npos) << "the rank read the agent's credential";
  // The rank worked in the directory the agent gave the account.
  struct stat st {};
  ASSERT_EQ(::stat((agent.options().workdir / "ranks" / "mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
}

TEST_F(RunAs, AnAgentRunningAsRootWithoutRunAsRefusesToStart) {
  const auto cluster = create_cluster("cpu-1", 1);
  // Run the binary directly: the fixture's workers always pass --run-as.
  it::LoggedChild agent;
  agent.start({it::binary("podium-worker").string(), "--server", podium().url(), "--cluster",
               cluster, "--slice", "0", "--host", "0", "--workdir", (dir() / "refused").string()},
              {{"PODIUM_TOKEN", podium().worker_token(cluster)}}, dir() / "refused.log");
  EXPECT_EQ(agent.reap(30s), 2) << agent.log();
  EXPECT_NE(agent.log().find("--run-as"), std::string::npos) << agent.log();
  EXPECT_NE(agent.log().find("running as root"), std::string::npos) << agent.log();
  // Nothing registered in its name.
  auto workers = admin().get("/api/v1/clusters/" + cluster + "/workers");
  ASSERT_EQ(workers.status, 200) << workers;
  EXPECT_TRUE(workers.json["items"].empty()) << workers;
}

}  // namespace
}  // namespace podium::e2e
