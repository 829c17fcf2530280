// LISTEN/NOTIFY helper against a real PostgreSQL.
#include "backend/db/listener.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/integration/db/scratch_database.h"

namespace podium::db {
namespace {

using namespace std::chrono_literals;

TEST(DbListener, DeliversCommittedNotificationsOnly) {
  PODIUM_REQUIRE_TEST_DATABASE();
  testing::ScratchDatabase scratch;
  Database db(PoolOptions{.conninfo = scratch.conninfo()});
  Listener listener(scratch.conninfo(), {"runs", "Mixed Case"});
  std::string channel, payload;
  EXPECT_FALSE(listener.wait(200ms, &channel, &payload));  // connects, nothing pending
  EXPECT_TRUE(listener.connected());

  {
    auto tx = db.begin();
    notify(tx, "runs", "rolled back");
  }
  db.transact([](Transaction& tx) { notify(tx, "runs", "run-42"); });
  ASSERT_TRUE(listener.wait(2s, &channel, &payload));
  EXPECT_EQ(channel, "runs");
  EXPECT_EQ(payload, "run-42");

  db.transact([](Transaction& tx) { notify(tx, "Mixed Case", ""); });
  ASSERT_TRUE(listener.wait(2s, &channel, &payload));
  EXPECT_EQ(channel, "Mixed Case");
  EXPECT_EQ(payload, "");
  EXPECT_FALSE(listener.wait(100ms, &channel, &payload));
}

TEST(DbListener, WakeInterruptsAWait) {
  PODIUM_REQUIRE_TEST_DATABASE();
  testing::ScratchDatabase scratch;
  Listener listener(scratch.conninfo(), {"runs"});
  std::string channel, payload;
  std::thread waker([&] {
    std::this_thread::sleep_for(200ms);
    listener.wake();
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(listener.wait(10s, &channel, &payload));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  waker.join();
}

TEST(DbListener, ReconnectsAndSignalsTheGap) {
  PODIUM_REQUIRE_TEST_DATABASE();
  testing::ScratchDatabase scratch;
  Database db(PoolOptions{.conninfo = scratch.conninfo()});
  Listener listener(scratch.conninfo(), {"runs"});
  std::string channel = "x", payload = "y";
  EXPECT_FALSE(listener.wait(200ms, &channel, &payload));
  testing::admin_exec(
      scratch.conninfo(),
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
      " WHERE application_name = 'podium-listener' AND datname = current_database()");
  // The loss is noticed, the connection re-made, and the gap reported as an empty channel.
  ASSERT_TRUE(listener.wait(5s, &channel, &payload));
  EXPECT_EQ(channel, "");
  EXPECT_EQ(payload, "");
  db.transact([](Transaction& tx) { notify(tx, "runs", "after"); });
  ASSERT_TRUE(listener.wait(2s, &channel, &payload));
  EXPECT_EQ(channel, "runs");
  EXPECT_EQ(payload, "after");
}

}  // namespace
}  // namespace podium::db
