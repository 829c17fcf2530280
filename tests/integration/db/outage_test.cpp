// PostgreSQL going away and coming back, driven by scripts/test-postgres.sh on a private
// cluster: pausing the shared test server would fail whatever else runs in parallel.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "backend/db/database.h"
#include "backend/db/embedded_postgres.h"
#include "backend/db/listener.h"
#include "tests/integration/db/scratch_database.h"

namespace podium::db {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class PrivateCluster {
 public:
  PrivateCluster() : dir_("podium-outage") { url_ = run("start"); }
  ~PrivateCluster() { run("stop"); }
  const std::string& url() const { return url_; }

  // Runs the script; returns its stdout without the trailing newline.
  std::string run(const std::string& command) {
    const std::string script = (testing::repo_root() / "scripts" / "test-postgres.sh").string();
    const std::string line = "PODIUM_TEST_PG_DIR='" + (dir_.path() / "pg").string() + "' '" +
                             script + "' " + command + " 2>>'" +
                             (dir_.path() / "script.log").string() + "'";
    std::string out;
    if (FILE* p = ::popen(line.c_str(), "r")) {
      char buf[512];
      while (std::fgets(buf, sizeof buf, p)) out += buf;
      const int rc = ::pclose(p);
      EXPECT_EQ(rc, 0) << "test-postgres.sh " << command
                       << " failed:" << podium::db::tail_of_file(dir_.path() / "script.log", 20);
    }
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

 private:
  testing::TempDir dir_;
  std::string url_;
};

bool have_postgres() {
  return std::filesystem::exists("/usr/lib/postgresql/15/bin/pg_ctl");
}

DbError::Kind kind_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const DbError& e) {
    return e.kind();
  }
  return DbError::Kind::other;
}

TEST(DbOutage, RequestsFailFastWhileDownAndRecoverWithoutANewDatabaseObject) {
  if (!have_postgres()) GTEST_SKIP() << "PostgreSQL 15 server binaries not installed";
  PrivateCluster pg;
  ASSERT_FALSE(pg.url().empty());
  PoolOptions o;
  o.conninfo = pg.url();
  o.max_connections = 4;
  Database db(o);
  db.transact([](Transaction& tx) {
    tx.exec("CREATE TABLE kv (k text PRIMARY KEY, v text)");
    tx.exec("INSERT INTO kv VALUES ('before', 'outage')");
  });
  Listener listener(pg.url(), {"events"});
  std::string channel, payload;
  EXPECT_FALSE(listener.wait(200ms, &channel, &payload));
  ASSERT_TRUE(listener.connected());
  // Warm the pool so that idle connections exist when the server goes away.
  {
    auto t1 = db.begin();
    auto t2 = db.begin();
  }
  ASSERT_EQ(db.stats().idle, 2);
  auto open_tx = std::make_unique<Transaction>(db.begin());

  pg.run("pause");

  // A transaction that was open when the server went away fails on its next statement.
  EXPECT_EQ(kind_of([&] { open_tx->exec("SELECT 1"); }), DbError::Kind::unavailable);
  open_tx.reset();

  // Every request fails fast with `unavailable`, in parallel too.
  std::vector<std::thread> threads;
  std::atomic<int> fast_unavailable{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      const auto start = Clock::now();
      const auto kind = kind_of([&] {
        auto tx = db.begin();
        tx.exec("SELECT v FROM kv");
      });
      if (kind == DbError::Kind::unavailable && Clock::now() - start < 3s) ++fast_unavailable;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(fast_unavailable.load(), 6);
  const auto ping_start = Clock::now();
  EXPECT_FALSE(db.ping());
  EXPECT_LT(Clock::now() - ping_start, 2s);
  EXPECT_EQ(db.stats().in_use, 0);
  EXPECT_EQ(db.stats().idle, 0);
  EXPECT_FALSE(listener.wait(300ms, &channel, &payload));

  ASSERT_EQ(pg.run("resume"), pg.url());

  // Same Database object: new connections are made by themselves.
  EXPECT_TRUE(db.ping());
  std::string v;
  EXPECT_NO_THROW(v = db.transact([](Transaction& tx) {
    return tx.exec("SELECT v FROM kv WHERE k = 'before'").at(0, "v");
  }));
  EXPECT_EQ(v, "outage");
  // The listener reconnects and reports the gap.
  bool gap = false;
  for (int i = 0; i < 20 && !gap; ++i) {
    gap = listener.wait(500ms, &channel, &payload) && channel.empty();
  }
  EXPECT_TRUE(gap);
  db.transact([](Transaction& tx) { notify(tx, "events", "back"); });
  ASSERT_TRUE(listener.wait(3s, &channel, &payload));
  EXPECT_EQ(payload, "back");
}

TEST(DbOutage, RestartIsInvisibleToTheNextRequest) {
  if (!have_postgres()) GTEST_SKIP() << "PostgreSQL 15 server binaries not installed";
  PrivateCluster pg;
  Database db(PoolOptions{.conninfo = pg.url(), .max_connections = 3});
  for (int i = 0; i < 3; ++i) db.transact([](Transaction& tx) { tx.exec("SELECT 1"); });
  ASSERT_EQ(pg.run("restart"), pg.url());
  // Idle connections died with the old server; begin() notices and reconnects.
  for (int i = 0; i < 5; ++i) {
    EXPECT_NO_THROW(db.transact([](Transaction& tx) { tx.exec("SELECT 1"); })) << i;
  }
}

}  // namespace
}  // namespace podium::db
