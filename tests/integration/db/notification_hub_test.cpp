// The notification hub: one LISTEN connection fanned out to waiting threads.
#include "backend/db/notification_hub.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "backend/db/listener.h"
#include "tests/integration/db/scratch_database.h"

namespace podium::db {
namespace {

using namespace std::chrono_literals;

TEST(NotificationHub, WaitersSeeOnlyTheirKeyOrABroadcast) {
  // No start(): publish() stands in for NOTIFY, so this needs no database.
  NotificationHub hub("host=/nonexistent", {"podium_agents"});
  auto since = hub.generation();
  hub.publish("podium_agents", "wkr_a");
  EXPECT_TRUE(hub.wait("podium_agents", "wkr_a", since, 10ms));
  EXPECT_FALSE(hub.wait("podium_agents", "wkr_b", since, 10ms));
  EXPECT_FALSE(hub.wait("podium_logs", "wkr_a", since, 10ms));
  EXPECT_TRUE(hub.wait_any("podium_agents", since, 10ms));
  // A notification from before `since` does not count: no lost wakeup, no stale one either.
  since = hub.generation();
  EXPECT_FALSE(hub.wait("podium_agents", "wkr_a", since, 10ms));
  hub.publish("podium_agents", "*");
  EXPECT_TRUE(hub.wait("podium_agents", "wkr_b", since, 10ms));
  // A reconnect (empty channel) wakes everyone: notifications may have been missed.
  since = hub.generation();
  hub.publish("", "");
  EXPECT_TRUE(hub.wait("podium_logs", "run_1", since, 10ms));
}

TEST(NotificationHub, StopReleasesWaitersPromptly) {
  NotificationHub hub("host=/nonexistent", {"podium_agents"});
  std::atomic<bool> returned{false};
  const auto since = hub.generation();
  std::thread waiter([&] {
    EXPECT_FALSE(hub.wait("podium_agents", "wkr_a", since, 30s));
    returned = true;
  });
  std::this_thread::sleep_for(50ms);
  const auto t0 = std::chrono::steady_clock::now();
  hub.stop();
  waiter.join();
  EXPECT_TRUE(returned);
  EXPECT_TRUE(hub.stopping());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(NotificationHub, CommittedNotifyWakesTheMatchingWaiter) {
  PODIUM_REQUIRE_TEST_DATABASE();
  testing::ScratchDatabase scratch;
  Database db(PoolOptions{.conninfo = scratch.conninfo()});
  NotificationHub hub(scratch.conninfo(), {"podium_agents", "podium_logs"});
  hub.start();
  // Let the hub connect and LISTEN before notifying (a reconnect would wake everyone anyway).
  for (int i = 0; i < 50; ++i) {
    const auto since = hub.generation();
    db.transact([](Transaction& tx) { notify(tx, "podium_logs", "probe"); });
    if (hub.wait("podium_logs", "probe", since, 200ms)) break;
  }
  auto since = hub.generation();
  std::atomic<bool> woke{false};
  std::thread waiter([&] { woke = hub.wait("podium_agents", "wkr_7", since, 10s); });
  {
    auto tx = db.begin();
    notify(tx, "podium_agents", "wkr_7");
    // Rolled back: nothing delivered.
  }
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(woke);
  db.transact([](Transaction& tx) { notify(tx, "podium_agents", "wkr_7"); });
  waiter.join();
  EXPECT_TRUE(woke);
  hub.stop();
}

// What the credential cache relies on: listening() is false while no notification could arrive,
// fired_any() sees a notification on the channel and any reconnect, and nothing else.
TEST(NotificationHub, ListeningAndAnyNotificationOnAChannelIncludingAReconnect) {
  NotificationHub unreachable("host=/nonexistent connect_timeout=1", {"podium_auth"});
  EXPECT_FALSE(unreachable.listening()) << "listening before start()";
  unreachable.start();
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(unreachable.listening()) << "listening without a database";
  unreachable.stop();

  PODIUM_REQUIRE_TEST_DATABASE();
  testing::ScratchDatabase scratch;
  Database db(PoolOptions{.conninfo = scratch.conninfo()});
  NotificationHub hub(scratch.conninfo(), {"podium_auth", "podium_logs"});
  hub.start();
  for (int i = 0; i < 250 && !hub.listening(); ++i) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(hub.listening());

  auto since = hub.generation();
  db.transact([](Transaction& tx) { notify(tx, "podium_logs", "run_1"); });
  ASSERT_TRUE(hub.wait_any("podium_logs", since, 5s));
  EXPECT_FALSE(hub.fired_any("podium_auth", since)) << "another channel's notification counted";
  db.transact([](Transaction& tx) { notify(tx, "podium_auth"); });
  ASSERT_TRUE(hub.wait_any("podium_auth", since, 5s));
  EXPECT_TRUE(hub.fired_any("podium_auth", since));

  // The connection dies: notifications sent meanwhile are lost, so the reconnect counts as a
  // change on every channel, and listening() is true again only after it was published.
  since = hub.generation();
  testing::admin_exec(
      scratch.conninfo(),
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
      " WHERE application_name = 'podium-listener' AND datname = current_database()");
  for (int i = 0; i < 250 && !hub.fired_any("podium_auth", since); ++i)
    std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(hub.fired_any("podium_auth", since)) << "the reconnect was not published";
  for (int i = 0; i < 250 && !hub.listening(); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(hub.listening());
  hub.stop();
  EXPECT_TRUE(hub.fired_any("podium_auth", hub.generation())) << "a stopped hub hears nothing";
}

}  // namespace
}  // namespace podium::db
