// PostgreSQL going away under a running podium-server and coming back. The test brings its own
// PostgreSQL cluster (scripts/test-postgres.sh with a private directory): stopping the shared test
// server would fail every other test running in parallel.
#include <gtest/gtest.h>

#include <thread>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(DatabaseDown, RequestsAnswer503QuicklyAndTheSameServerRecovers) {
  PODIUM_IT_REQUIRE_POSTGRES_BINARIES();
  PrivatePostgres pg;
  TestDatabase db(pg.url());
  ServerOptions so;
  so.database_url = db.url();
  ServerProcess server(so);
  server.start();
  const pid_t pid = server.pid();
  Api admin(server.url(), server.admin_token());
  Api anon(server.url());

  require_status(
      admin.post("/api/v1/clusters", {{"name", "before-outage"}, {"accelerator", "cpu-1"}}), 201);
  ASSERT_EQ(admin.get("/api/v1/clusters").status, 200);
  ASSERT_EQ(anon.get("/readyz").status, 200);

  pg.pause();
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE("attempt " + std::to_string(i));
    auto list = admin.get("/api/v1/clusters");
    EXPECT_TRUE(is_problem(list, 503)) << list;
    EXPECT_LT(list.elapsed.count(), 5000) << list;
    EXPECT_TRUE(list.header("retry-after").has_value()) << "503 without Retry-After: " << list;
    auto one = admin.get("/api/v1/clusters/before-outage");
    EXPECT_TRUE(is_problem(one, 503)) << one;
    EXPECT_LT(one.elapsed.count(), 5000) << one;
    auto create =
        admin.post("/api/v1/clusters", {{"name", "during-outage"}, {"accelerator", "cpu-1"}});
    EXPECT_TRUE(is_problem(create, 503)) << create;
    EXPECT_LT(create.elapsed.count(), 5000) << create;
    auto ready = anon.get("/readyz");
    EXPECT_EQ(ready.status, 503) << ready;
    EXPECT_LT(ready.elapsed.count(), 5000) << ready;
    // The process itself is fine.
    auto health = anon.get("/healthz");
    EXPECT_EQ(health.status, 200) << health;
    EXPECT_LT(health.elapsed.count(), 2000) << health;
  }

  pg.resume();
  const auto resumed = Clock::now();
  Reply last;
  while (Clock::now() - resumed < 15s) {
    last = admin.get("/api/v1/clusters");
    if (last.status == 200) break;
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_EQ(last.status, 200) << "not recovered within 15 s of the database's return: " << last
                              << "\n"
                              << server.log_tail(20);
  EXPECT_EQ(anon.get("/readyz").status, 200);
  ASSERT_EQ(last.json["items"].size(), 1u) << last;
  EXPECT_EQ(last.json["items"][0]["name"], "before-outage");
  EXPECT_EQ(
      admin.post("/api/v1/clusters", {{"name", "after-outage"}, {"accelerator", "cpu-1"}}).status,
      201);
  EXPECT_TRUE(server.running());
  EXPECT_EQ(server.pid(), pid) << "the server was restarted";
  // A failed request must not have stored anything.
  EXPECT_EQ(db.scalar("SELECT count(*) FROM clusters WHERE name = 'during-outage'"), "0");
}

TEST(DatabaseDown, AServerStartedWhileTheDatabaseIsDownWaitsForIt) {
  PODIUM_IT_REQUIRE_POSTGRES_BINARIES();
  PrivatePostgres pg;
  TestDatabase db(pg.url());
  pg.pause();
  ServerOptions so;
  so.database_url = db.url();
  ServerProcess server(so);
  server.spawn();
  std::this_thread::sleep_for(3s);
  EXPECT_TRUE(server.running()) << "gave up on a database that is down for 3 s:\n"
                                << server.log_tail(20);
  EXPECT_EQ(server.port(), 0);
  pg.resume();
  ASSERT_NO_THROW(server.wait_ready());
  Api admin(server.url(), server.admin_token());
  EXPECT_EQ(admin.get("/readyz").status, 200);
  EXPECT_EQ(admin.get("/api/v1/clusters").status, 200);
  EXPECT_EQ(db.scalar("SELECT count(*) FROM users"), "1");
}

}  // namespace
}  // namespace podium::it
