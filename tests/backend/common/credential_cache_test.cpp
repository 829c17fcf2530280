// The credential cache answers only what nothing can have changed unseen: no notification since
// the entry was read, the listener up, within its lifetime, not forgotten by a local change.
#include "backend/common/credential_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace podium::http {
namespace {

using namespace std::chrono_literals;
using Clock = CredentialCache::Clock;

// Plays the notification hub: a counter of notifications and whether it listens.
class FakeChanges : public CredentialChanges {
 public:
  bool watching() const override { return watching_; }
  std::uint64_t position() const override { return position_; }
  bool changed_since(std::uint64_t p) const override { return last_change_ > p; }

  void notify() { last_change_ = ++position_; }
  void other_channel() { ++position_; }  // a notification that is not about credentials
  bool watching_ = true;

 private:
  std::uint64_t position_ = 0;
  std::uint64_t last_change_ = 0;
};

Principal user(const std::string& name) {
  Principal p;
  p.user_id = "usr_" + name;
  p.username = name;
  p.role = Role::member;
  p.token_id = "tok_" + name;
  return p;
}

struct CacheFixture : ::testing::Test {
  FakeChanges changes;
  Clock::time_point now = Clock::time_point() + 1h;
  CredentialCache cache{changes, CredentialCacheOptions{10s, 4}, [this] { return now; }};

  void remember(const std::string& key, const std::string& name) {
    cache.store(key, user(name), cache.ticket());
  }
};

TEST_F(CacheFixture, AnswersWhatItStoredUntilItsLifetimeEnds) {
  EXPECT_FALSE(cache.find("bearer:a"));
  remember("bearer:a", "alice");
  auto hit = cache.find("bearer:a");
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->username, "alice");
  EXPECT_EQ(hit->user_id, "usr_alice");
  EXPECT_EQ(hit->role, Role::member);
  EXPECT_FALSE(cache.find("bearer:b"));
  now += 9s;
  EXPECT_TRUE(cache.find("bearer:a"));
  now += 1s;
  EXPECT_FALSE(cache.find("bearer:a")) << "served past its ttl";
  EXPECT_EQ(cache.size(), 0u) << "an expired entry is dropped when found";
}

TEST_F(CacheFixture, ACredentialNotificationEndsEveryEntryReadBeforeIt) {
  remember("bearer:a", "alice");
  remember("session:s", "sam");
  changes.other_channel();  // a run's or a log's notification changes nothing here
  EXPECT_TRUE(cache.find("bearer:a"));
  changes.notify();
  EXPECT_FALSE(cache.find("bearer:a"));
  EXPECT_FALSE(cache.find("session:s"));
  // Read after the notification: served again.
  remember("bearer:a", "alice");
  EXPECT_TRUE(cache.find("bearer:a"));
}

TEST_F(CacheFixture, WhatWasReadBeforeANotificationIsNotStoredAfterIt) {
  // The database was read, then a revocation committed and its notification arrived, then the
  // request came to store what it read: that would serve a revoked token for the whole ttl.
  auto ticket = cache.ticket();
  changes.notify();
  cache.store("bearer:a", user("alice"), ticket);
  EXPECT_FALSE(cache.find("bearer:a"));
  EXPECT_EQ(cache.size(), 0u);
}

TEST_F(CacheFixture, ALocalChangeForgetsEverythingAndRefusesStoresReadBeforeIt) {
  remember("bearer:a", "alice");
  auto in_flight = cache.ticket();
  cache.forget_all();
  EXPECT_FALSE(cache.find("bearer:a")) << "this process's own change must count at once";
  cache.store("bearer:b", user("bob"), in_flight);
  EXPECT_FALSE(cache.find("bearer:b")) << "read before the change, stored after it";
  remember("bearer:b", "bob");
  EXPECT_TRUE(cache.find("bearer:b"));
}

TEST_F(CacheFixture, NothingIsServedOrStoredWhileNotificationsCouldBeMissed) {
  remember("bearer:a", "alice");
  changes.watching_ = false;
  EXPECT_FALSE(cache.find("bearer:a")) << "served while the listener is down";
  remember("bearer:b", "bob");
  changes.watching_ = true;
  EXPECT_FALSE(cache.find("bearer:b")) << "stored while the listener was down";
  // A ticket taken while down is refused even if the listener is back when it stores.
  changes.watching_ = false;
  auto down = cache.ticket();
  changes.watching_ = true;
  cache.store("bearer:c", user("carol"), down);
  EXPECT_FALSE(cache.find("bearer:c"));
}

TEST_F(CacheFixture, ASessionIsNotServedPastItsOwnExpiry) {
  cache.store("session:s", user("sam"), cache.ticket(), std::chrono::seconds(3));
  now += 2s;
  EXPECT_TRUE(cache.find("session:s"));
  now += 1s;
  EXPECT_FALSE(cache.find("session:s"));
  // One already expired is not stored at all.
  cache.store("session:t", user("tom"), cache.ticket(), std::chrono::seconds(0));
  EXPECT_FALSE(cache.find("session:t"));
  // A longer validity does not extend the ttl.
  cache.store("session:u", user("uma"), cache.ticket(), std::chrono::hours(100));
  now += 10s;
  EXPECT_FALSE(cache.find("session:u"));
}

TEST_F(CacheFixture, HoldsAtMostItsBoundOfEntries) {
  for (int i = 0; i < 100; ++i) remember("bearer:" + std::to_string(i), "u" + std::to_string(i));
  EXPECT_LE(cache.size(), 4u);
  EXPECT_TRUE(cache.find("bearer:99")) << "the newest entry is kept";
  // Expired entries make room first: the live ones stay.
  CredentialCache c2{changes, CredentialCacheOptions{10s, 3}, [this] { return now; }};
  c2.store("old", user("old"), c2.ticket(), 1s);
  c2.store("live1", user("l1"), c2.ticket());
  c2.store("live2", user("l2"), c2.ticket());
  now += 2s;
  c2.store("live3", user("l3"), c2.ticket());
  EXPECT_TRUE(c2.find("live1"));
  EXPECT_TRUE(c2.find("live2"));
  EXPECT_TRUE(c2.find("live3"));
}

TEST_F(CacheFixture, AZeroTtlStoresNothing) {
  CredentialCache off{changes, CredentialCacheOptions{0s, 4}, [this] { return now; }};
  off.store("bearer:a", user("alice"), off.ticket());
  EXPECT_FALSE(off.find("bearer:a"));
}

}  // namespace
}  // namespace podium::http
