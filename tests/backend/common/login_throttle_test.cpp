#include "backend/common/login_throttle.h"

#include <gtest/gtest.h>

namespace podium::http {
namespace {

using namespace std::chrono_literals;

class LoginThrottleTest : public ::testing::Test {
 protected:
  LoginThrottle::Clock::time_point now{std::chrono::hours(1)};
  LoginThrottle throttle{LoginThrottle::Options{}, [this] { return now; }};
};

TEST_F(LoginThrottleTest, FiveFailuresForOneUserRefuseTheSixthUntilTheFirstAgesOut) {
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(throttle.retry_after("alice", "10.0.0.1"), 0s) << "attempt " << i;
    throttle.record_failure("alice", "10.0.0.1");
    now += 1s;
  }
  // First failure at t=0, now t=5: it ages out at t=60.
  EXPECT_EQ(throttle.retry_after("alice", "10.0.0.1"), 55s);
  // The user is refused from any address (a guesser that rotates addresses).
  EXPECT_EQ(throttle.retry_after("alice", "10.0.0.2"), 55s);
  // Others are not.
  EXPECT_EQ(throttle.retry_after("bob", "10.0.0.2"), 0s);
  now += 54s;
  EXPECT_EQ(throttle.retry_after("alice", "10.0.0.2"), 1s);
  now += 1s;
  EXPECT_EQ(throttle.retry_after("alice", "10.0.0.2"), 0s);
}

TEST_F(LoginThrottleTest, OneAddressIsRefusedAfterTwentyFailuresAcrossUsers) {
  for (int i = 0; i < 20; ++i) {
    const std::string user = "user" + std::to_string(i);
    ASSERT_EQ(throttle.retry_after(user, "10.0.0.9"), 0s) << "attempt " << i;
    throttle.record_failure(user, "10.0.0.9");
  }
  EXPECT_EQ(throttle.retry_after("someone-else", "10.0.0.9"), 60s);
  EXPECT_EQ(throttle.retry_after("", "10.0.0.9"), 60s) << "token sign-ins count per address";
  EXPECT_EQ(throttle.retry_after("someone-else", "10.0.0.10"), 0s);
}

TEST_F(LoginThrottleTest, SuccessClearsTheUserButNotTheAddress) {
  for (int i = 0; i < 4; ++i) throttle.record_failure("alice", "10.0.0.1");
  throttle.record_success("alice");
  for (int i = 0; i < 4; ++i) throttle.record_failure("alice", "10.0.0.1");
  EXPECT_EQ(throttle.retry_after("alice", "10.0.0.1"), 0s);
  throttle.record_failure("alice", "10.0.0.1");
  EXPECT_GT(throttle.retry_after("alice", "10.0.0.1"), 0s);
}

TEST_F(LoginThrottleTest, RetryAfterIsRoundedUpAndAtLeastOneSecond) {
  for (int i = 0; i < 5; ++i) throttle.record_failure("alice", "a");
  now += 59s + 500ms;
  EXPECT_EQ(throttle.retry_after("alice", "b"), 1s);
}

TEST_F(LoginThrottleTest, ASprayOverManyUsernamesKeepsMemoryBounded) {
  LoginThrottle small({.per_user = {5, 60s}, .per_address = {20, 60s}, .max_keys = 100},
                      [this] { return now; });
  for (int i = 0; i < 10000; ++i)
    small.record_failure("user" + std::to_string(i), "10.0.0." + std::to_string(i % 7));
  EXPECT_LE(small.tracked_keys(), 100u);
}

TEST_F(LoginThrottleTest, ExpiredKeysAreForgotten) {
  LoginThrottle small({.per_user = {5, 60s}, .per_address = {20, 60s}, .max_keys = 10},
                      [this] { return now; });
  for (int i = 0; i < 5; ++i) small.record_failure("user" + std::to_string(i), "a");
  now += 61s;
  small.record_failure("late", "b");  // room is made from expired keys first
  EXPECT_EQ(small.retry_after("late", "b"), 0s);
  EXPECT_LE(small.tracked_keys(), 10u);
}

}  // namespace
}  // namespace podium::http
