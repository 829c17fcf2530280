#include "backend/common/periodic_task.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace podium {
namespace {

using namespace std::chrono_literals;

// Polls `done` for up to 10 s (the task's thread runs on its own schedule).
template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 1000 && !done(); ++i) std::this_thread::sleep_for(10ms);
  return done();
}

TEST(PeriodicTask, RunsOnceAtStartThenWaitsForItsInterval) {
  std::atomic<int> runs{0};
  PeriodicTask task(1h, [&] { ++runs; });
  task.start();
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(runs.load(), 1);  // the next run is an hour away
  task.stop();
}

TEST(PeriodicTask, WakeRunsTheBodyAgainBeforeTheInterval) {
  std::atomic<int> runs{0};
  PeriodicTask task(1h, [&] { ++runs; });
  task.start();
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }));
  task.wake();
  EXPECT_TRUE(eventually([&] { return runs.load() == 2; }));
  task.wake();
  EXPECT_TRUE(eventually([&] { return runs.load() == 3; }));
}

TEST(PeriodicTask, AWakeDuringARunIsNotLost) {
  std::atomic<int> runs{0};
  std::atomic<bool> release{false};
  PeriodicTask task(1h, [&] {
    ++runs;
    while (runs.load() == 1 && !release.load()) std::this_thread::sleep_for(1ms);
  });
  task.start();
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }));
  task.wake();  // while the first run is still going
  release = true;
  EXPECT_TRUE(eventually([&] { return runs.load() == 2; }));
}

TEST(PeriodicTask, RepeatsAtItsIntervalAndSurvivesErrors) {
  std::atomic<int> runs{0};
  std::atomic<int> errors{0};
  std::string last_error;
  PeriodicTask task(
      5ms,
      [&] {
        if (++runs % 2 == 1) throw std::runtime_error("database away");
      },
      [&](const std::exception& e) {
        last_error = e.what();
        ++errors;
      });
  task.start();
  EXPECT_TRUE(eventually([&] { return runs.load() >= 4; }));
  task.stop();
  EXPECT_GE(errors.load(), 2);
  EXPECT_EQ(last_error, "database away");
}

TEST(PeriodicTask, StopReturnsPromptlyAndTwiceIsHarmless) {
  std::atomic<int> runs{0};
  PeriodicTask task(1h, [&] { ++runs; });
  task.start();
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }));
  const auto t0 = std::chrono::steady_clock::now();
  task.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);  // not the hour
  task.stop();
  task.start();  // may be started again
  EXPECT_TRUE(eventually([&] { return runs.load() == 2; }));
}

}  // namespace
}  // namespace podium
