#pragma once
// One Podium deployment for a test: a fresh database, a podium-server on it, an admin client,
// and helpers that create users, clusters, worker tokens, datasets and runs through the API.
//
//   class MyTest : public podium::it::PodiumTest {};
//   TEST_F(MyTest, Something) {
//     auto member = podium().create_user("member");
//     auto cluster = podium().create_cluster(podium::it::unique_name("c"), "cpu-1");
//     auto run = podium().submit_run(member.api, cluster["name"]);
//     EXPECT_EQ(member.api.get("/api/v1/runs/" + run["id"].get<std::string>()).status, 200);
//   }
//
// Helpers throw std::runtime_error (the test fails with the reply in the message) when the
// server does not answer as the contract says; they are set-up, not the thing under test.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/support/api.h"
#include "tests/integration/support/env.h"
#include "tests/integration/support/test_database.h"
#include "tests/support/server_process.h"

namespace podium::it {

struct User {
  std::string id;
  std::string username;
  std::string role;
  std::string token;
  Api api;
};

class Podium {
 public:
  struct Options {
    std::vector<std::string> settings;  // --set key=value
    std::string name = "server";
    std::map<std::string, std::string> env = {};  // added to the server's environment
  };
  // Creates the database and starts the server (throws on failure).
  Podium();
  explicit Podium(Options options);
  // The database on a PostgreSQL server of the test's own (PrivatePostgres::url()) rather than
  // the shared one of PODIUM_TEST_DATABASE_URL.
  struct OnServer {
    std::string url;
  };
  Podium(Options options, OnServer database_server);
  ~Podium();
  Podium(const Podium&) = delete;
  Podium& operator=(const Podium&) = delete;

  TestDatabase& db() { return *db_; }
  ServerProcess& server() { return *server_; }
  std::string url() const { return server_->url(); }
  Api admin() const { return Api(server_->url(), server_->admin_token()); }
  Api anonymous() const { return Api(server_->url()); }
  Api as(const std::string& token) const { return Api(server_->url(), token); }

  // Another podium-server on the same database (started).
  std::unique_ptr<ServerProcess> second_server(const std::string& name = "server-b",
                                               std::vector<std::string> settings = {}) const;
  // Stops the server (SIGTERM, or SIGKILL when kill) and starts a new process on the same
  // database; clients must be re-made (the port changes): use admin()/as() again.
  int restart(bool kill = false);

  // POST /api/v1/users as admin; username defaults to a unique "<role>-xxxxxxxx".
  User create_user(const std::string& role,
                   const std::optional<std::string>& password = std::nullopt,
                   std::string username = "");
  // POST /api/v1/clusters as admin, with a launch policy that lets members submit commands
  // (unless `extra` has its own launch_policy).
  nlohmann::json create_cluster(const std::string& name, const std::string& accelerator = "cpu-1",
                                const nlohmann::json& extra = nlohmann::json::object());
  // POST /api/v1/clusters/{cluster}/worker-tokens as admin: the token.
  std::string worker_token(const std::string& cluster);
  // POST /api/v1/datasets as `who` (synthetic unless extra says otherwise).
  nlohmann::json create_dataset(const Api& who, const std::string& name,
                                const nlohmann::json& extra = nlohmann::json::object());
  // POST /api/v1/runs as `who`: workload "command", command ["true"].
  nlohmann::json submit_run(const Api& who, const std::string& cluster,
                            const std::string& name = "",
                            const nlohmann::json& extra = nlohmann::json::object());
  // The minimal valid run spec submit_run sends.
  static nlohmann::json run_spec(const std::string& cluster, const std::string& name);

 private:
  Options options_;
  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<ServerProcess> server_;
};

// Expects `r` to have `status`, else throws with the reply.
const Reply& require_status(const Reply& r, int status);

// A fixture with one Podium per test. Override options() for server settings.
class PodiumTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  virtual Podium::Options options() const { return {}; }
  Podium& podium() { return *podium_; }

 private:
  std::unique_ptr<Podium> podium_;
};

}  // namespace podium::it
