// Server life cycle: two servers migrating one database at once, data surviving SIGTERM and
// SIGKILL, and the embedded PostgreSQL (no --database-url) surviving a killed server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "backend/db/migrations.h"
#include "tests/integration/support/podium.h"
#include "tests/support/proc_table.h"

namespace podium::it {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

TEST(Startup, TwoServersMigratingOneEmptyDatabaseAtOnce) {
  PODIUM_IT_REQUIRE_DATABASE();
  std::set<int> versions;
  for (const auto& m : db::embedded_migrations()) versions.insert(m.version);
  ASSERT_FALSE(versions.empty());

  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    TestDatabase database;
    ServerOptions o;
    o.database_url = database.url();
    o.name = "server-a";
    ServerProcess a(o);
    o.name = "server-b";
    ServerProcess b(o);
    ASSERT_NO_THROW(ServerProcess::start_together({&a, &b}));

    for (ServerProcess* s : {&a, &b}) {
      Api api(s->url(), s->admin_token());
      EXPECT_EQ(api.get("/readyz").status, 200) << s->options().name;
      auto me = api.get("/api/v1/auth/me");
      EXPECT_EQ(me.status, 200) << s->options().name << ": " << me;
      EXPECT_EQ(me.json["username"], "admin");
    }
    auto dup = database.query(
        "SELECT version, count(*) AS n FROM schema_migrations GROUP BY version HAVING count(*) <> "
        "1");
    EXPECT_TRUE(dup.empty()) << "a migration version is recorded more than once";
    auto rows = database.query("SELECT version FROM schema_migrations ORDER BY version");
    std::set<int> applied;
    for (size_t i = 0; i < rows.size(); ++i)
      applied.insert(static_cast<int>(rows.int64(i, "version")));
    EXPECT_EQ(applied, versions);
    EXPECT_EQ(database.scalar("SELECT count(*) FROM schema_migrations"),
              std::to_string(versions.size()));
    EXPECT_EQ(database.scalar("SELECT count(*) FROM users"), "1");
    EXPECT_EQ(
        database.scalar("SELECT count(*) FROM users WHERE role = 'admin' AND username = 'admin'"),
        "1");
    EXPECT_EQ(database.scalar("SELECT count(*) FROM settings WHERE key = 'cursor_key'"), "1");

    // One cursor key: a page cursor from one server works on the other.
    Api on_a(a.url(), a.admin_token()), on_b(b.url(), b.admin_token());
    for (int i = 0; i < 3; ++i)
      require_status(on_a.post("/api/v1/clusters",
                               {{"name", "c" + std::to_string(i)}, {"accelerator", "cpu-1"}}),
                     201);
    auto page = on_a.get("/api/v1/clusters?limit=1");
    ASSERT_TRUE(page.json["next_cursor"].is_string()) << page;
    auto next = on_b.get("/api/v1/clusters?limit=1&cursor=" +
                         enc(page.json["next_cursor"].get<std::string>()));
    EXPECT_EQ(next.status, 200) << next;
    EXPECT_EQ(on_b.get("/api/v1/clusters").json, on_a.get("/api/v1/clusters").json);
  }
}

// SIGTERM, SIGINT and SIGHUP reach the server's sigwait only if every thread blocks them: a
// thread started before they were blocked (the log's flusher once was) takes one itself, and
// the default action ends the process (status 143 on SIGTERM, a SIGHUP reload ending the server).
TEST(Startup, EveryServerThreadLeavesTheStopAndReloadSignalsToTheSignalWait) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium podium;
  const fs::path tasks = "/proc/" + std::to_string(podium.server().pid()) + "/task";
  int threads = 0;
  for (const auto& task : fs::directory_iterator(tasks)) {
    // The main thread is the one in sigwait, which unblocks the signals it waits for while it
    // waits.
    if (task.path().filename() == std::to_string(podium.server().pid())) continue;
    std::ifstream status(task.path() / "status");
    std::string line, name, blocked;
    while (std::getline(status, line)) {
      if (line.rfind("Name:", 0) == 0) name = line.substr(5);
      if (line.rfind("SigBlk:", 0) == 0) blocked = line.substr(7);
    }
    ASSERT_FALSE(blocked.empty()) << task.path();
    const unsigned long long mask = std::stoull(blocked, nullptr, 16);
    for (const int sig : {SIGHUP, SIGINT, SIGTERM})
      EXPECT_TRUE(mask & (1ULL << (sig - 1)))
          << "thread " << task.path().filename() << name << " does not block signal " << sig;
    ++threads;
  }
  EXPECT_GT(threads, 3);  // I/O, handler, liveness, dispatcher, ... threads
}

// Everything a client can list, for before/after comparisons.
json everything(const Api& admin) {
  json out;
  for (const char* p :
       {"/api/v1/clusters?limit=500", "/api/v1/datasets?limit=500", "/api/v1/runs?limit=500",
        "/api/v1/users?limit=500", "/api/v1/tokens?limit=500"}) {
    auto r = admin.get(p);
    EXPECT_EQ(r.status, 200) << r;
    // last_used_at moves with use (at most once a minute), and waiting_reason is the
    // scheduler's commentary on a queued run, written on its own clock: not data the test
    // stored.
    if (r.json.contains("items"))
      for (auto& item : r.json["items"]) {
        item.erase("last_used_at");
        item.erase("waiting_reason");
      }
    out[p] = r.json;
  }
  return out;
}

TEST(Durability, AcknowledgedDataSurvivesSigtermAndSigkill) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium podium;
  auto member = podium.create_user("member");
  podium.create_cluster("durable", "tpu7x-64", {{"labels", {{"k", "v"}}}});
  podium.create_dataset(member.api, "durable-ds");
  const std::string run_id = podium.submit_run(member.api, "durable", "durable-run")["id"];
  const std::string cancelled_id = podium.submit_run(member.api, "durable", "cancelled-run")["id"];
  require_status(member.api.post("/api/v1/runs/" + cancelled_id + "/cancel"), 200);
  const std::string token =
      require_status(member.api.post("/api/v1/tokens", {{"name", "kept"}}), 201).json["token"];
  const json before = everything(podium.admin());

  // SIGTERM: a clean stop (exit 0), then a new process on the same database.
  EXPECT_EQ(podium.restart(/*kill=*/false), 0) << "SIGTERM did not stop the server cleanly";
  EXPECT_EQ(everything(podium.admin()), before);
  EXPECT_EQ(podium.as(token).get("/api/v1/auth/me").status, 200)
      << "tokens do not survive a restart";
  EXPECT_EQ(podium.as(member.token).get("/api/v1/runs/" + run_id).json["state"], "queued");

  // SIGKILL right after the last acknowledgement: everything acknowledged is there.
  std::vector<std::string> acked;
  for (int i = 0; i < 15; ++i) {
    auto r = podium.admin().post(
        "/api/v1/clusters", {{"name", "after-" + std::to_string(i)}, {"accelerator", "cpu-1"}});
    ASSERT_EQ(r.status, 201) << r;
    acked.push_back(r.json["id"].get<std::string>());
  }
  const std::string last_run =
      podium.submit_run(podium.as(member.token), "durable", "last-run")["id"];
  EXPECT_EQ(podium.restart(/*kill=*/true), 128 + 9);
  const json after = everything(podium.admin());
  std::set<std::string> ids, expected_ids(acked.begin(), acked.end());
  for (const auto& c : before["/api/v1/clusters?limit=500"]["items"])
    expected_ids.insert(c["id"].get<std::string>());
  for (const auto& c : after["/api/v1/clusters?limit=500"]["items"])
    ids.insert(c["id"].get<std::string>());
  EXPECT_EQ(ids, expected_ids) << "acknowledged clusters are missing (or unknown ones appeared)";
  EXPECT_EQ(after["/api/v1/datasets?limit=500"], before["/api/v1/datasets?limit=500"]);
  EXPECT_EQ(after["/api/v1/users?limit=500"], before["/api/v1/users?limit=500"]);
  ASSERT_EQ(after["/api/v1/runs?limit=500"]["items"].size(), 3u) << after;
  EXPECT_EQ(after["/api/v1/runs?limit=500"]["items"][0]["id"], last_run);
  EXPECT_EQ(podium.as(member.token).get("/api/v1/runs/" + last_run).status, 200);
  // The restarted server takes writes.
  EXPECT_EQ(podium.admin()
                .post("/api/v1/clusters", {{"name", "after-restart"}, {"accelerator", "cpu-1"}})
                .status,
            201);
}

TEST(Durability, EmbeddedPostgresSurvivesAKilledServerAndStopsWithIt) {
  PODIUM_IT_REQUIRE_POSTGRES_BINARIES();
  TempDir dir("podium-it-embedded");
  const fs::path data = dir.path() / "var";
  ServerOptions o;
  o.database_url = "";  // the embedded default
  o.data_dir = data;
  o.name = "embedded";
  o.ready_timeout = 180s;  // initdb on a busy machine
  o.settings = {"limits.shutdown_grace_seconds=2"};
  ServerProcess server(o);
  ASSERT_NO_THROW(server.start());
  {
    Api admin(server.url(), server.admin_token());
    EXPECT_EQ(admin.get("/readyz").status, 200);
    require_status(
        admin.post("/api/v1/clusters", {{"name", "embedded-c"}, {"accelerator", "cpu-1"}}), 201);
  }
  EXPECT_EQ(server.kill(), 128 + 9);
  // Whatever the killed server left (a running orphaned postmaster, a stale postmaster.pid),
  // the next start copes.
  ASSERT_NO_THROW(server.start());
  {
    Api admin(server.url(), server.admin_token());
    EXPECT_EQ(admin.get("/readyz").status, 200);
    auto c = admin.get("/api/v1/clusters/embedded-c");
    EXPECT_EQ(c.status, 200) << c;
    auto users = admin.get("/api/v1/users");
    EXPECT_EQ(users.json["items"].size(), 1u) << "the admin was created twice: " << users;
  }
  EXPECT_EQ(server.terminate(), 0) << "SIGTERM did not stop the server cleanly";
  // No PostgreSQL is left running on that data directory.
  std::vector<pid_t> left;
  for (int i = 0; i < 50; ++i) {
    left = processes_matching((data / "postgres").string());
    if (left.empty()) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(left.empty()) << left.size() << " process(es) still use " << (data / "postgres")
                            << ", e.g. pid " << (left.empty() ? 0 : left[0]);
  EXPECT_FALSE(fs::exists(data / "postgres" / "postmaster.pid"));
}

}  // namespace
}  // namespace podium::it
