// Exponential backoff with jitter for 24 h (backend/notify/retry_schedule.h).
#include "backend/notify/retry_schedule.h"

#include <gtest/gtest.h>

namespace podium::notify {
namespace {

using namespace std::chrono_literals;

TEST(RetrySchedule, DoublesFromTheFirstDelayUpToTheCap) {
  RetryPolicy p;  // 10 s, capped at 1 h
  EXPECT_EQ(retry_delay(p, 1, 1.0), 10s);
  EXPECT_EQ(retry_delay(p, 2, 1.0), 20s);
  EXPECT_EQ(retry_delay(p, 3, 1.0), 40s);
  EXPECT_EQ(retry_delay(p, 9, 1.0), 2560s);
  EXPECT_EQ(retry_delay(p, 10, 1.0), 3600s);
  EXPECT_EQ(retry_delay(p, 500, 1.0), 3600s);
}

TEST(RetrySchedule, JitterKeepsAtLeastHalfTheStep) {
  RetryPolicy p;
  EXPECT_EQ(retry_delay(p, 1, 0.0), 5s);
  EXPECT_EQ(retry_delay(p, 2, 0.5), 15s);
  EXPECT_EQ(retry_delay(p, 3, 0.25), 25s);
}

TEST(RetrySchedule, GivesUpAfterTheWindow) {
  RetryPolicy p;
  const auto event = std::chrono::system_clock::time_point(1'700'000'000s);
  auto next = next_attempt_time(p, event, event + 1s, 1, 1.0);
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, event + 11s);
  // Just inside the window, and just past it.
  EXPECT_TRUE(next_attempt_time(p, event, event + 23h, 20, 1.0));
  EXPECT_FALSE(next_attempt_time(p, event, event + 23h + 1s, 20, 1.0));
  // A receiver down throughout gets the first attempt, 9 doubling retries (10 s ... 2560 s,
  // 5110 s in all), then one an hour while the rest of the 24 h lasts (81290 s: 22 more).
  int attempts = 1;
  auto now = event;
  while (auto n = next_attempt_time(p, event, now, attempts, 1.0)) {
    now = *n;
    ++attempts;
  }
  EXPECT_EQ(attempts, 1 + 9 + 22);
}

}  // namespace
}  // namespace podium::notify
