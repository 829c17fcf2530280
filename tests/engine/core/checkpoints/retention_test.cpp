// The retention choice (engine/core/checkpoints/retention.h): keep the last N and every K-th
// step, never the latest finished checkpoint nor a protected one. (The policy's parser is the
// run spec's, tested with it.)
#include "engine/core/checkpoints/retention.h"

#include <gtest/gtest.h>

namespace podium::core {
namespace {

using Steps = std::vector<std::int64_t>;

CheckpointRetention policy(std::optional<int> last, std::optional<std::int64_t> every) {
  CheckpointRetention p;
  p.keep_last = last;
  p.keep_every = every;
  return p;
}

Steps every_ten_up_to(std::int64_t last) {
  Steps out;
  for (std::int64_t s = 10; s <= last; s += 10) out.push_back(s);
  return out;
}

TEST(CheckpointRetention, WithoutAPolicyNothingIsDeleted) {
  EXPECT_EQ(checkpoints_to_delete(every_ten_up_to(300), std::nullopt, {}), Steps{});
  EXPECT_EQ(checkpoints_to_delete(every_ten_up_to(300), policy(std::nullopt, std::nullopt), {}),
            Steps{});
}

TEST(CheckpointRetention, KeepsTheLastN) {
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30, 40, 50}, policy(2, std::nullopt), {}),
            (Steps{10, 20, 30}));
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30}, policy(3, std::nullopt), {}), Steps{});
  EXPECT_EQ(checkpoints_to_delete({10, 20}, policy(5, std::nullopt), {}), Steps{});
}

TEST(CheckpointRetention, KeepsEveryKthStep) {
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30, 40, 50, 60}, policy(std::nullopt, 30), {}),
            (Steps{10, 20, 40, 50}));
}

TEST(CheckpointRetention, CombinesLastNAndEveryK) {
  // The 300-step run, a checkpoint every 10 steps: the last 2 and every 100th stay.
  const Steps gone = checkpoints_to_delete(every_ten_up_to(300), policy(2, 100), {});
  Steps expected;
  for (std::int64_t s = 10; s <= 280; s += 10)
    if (s % 100 != 0) expected.push_back(s);
  EXPECT_EQ(gone, expected);
}

TEST(CheckpointRetention, NeverTheLatestFinishedCheckpoint) {
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30}, policy(0, std::nullopt), {}), (Steps{10, 20}));
  EXPECT_EQ(checkpoints_to_delete({10, 20, 35}, policy(std::nullopt, 10), {}), Steps{});
  EXPECT_EQ(checkpoints_to_delete({7}, policy(0, 1000), {}), Steps{});
}

TEST(CheckpointRetention, NeverAProtectedStep) {
  // 20: a live attempt resumed from it; 10: another run's init_from names it.
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30, 40, 50}, policy(1, std::nullopt), {10, 20}),
            (Steps{30, 40}));
  // A protected step that is not (or no longer) a finished checkpoint changes nothing.
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30}, policy(1, std::nullopt), {99}), (Steps{10, 20}));
}

TEST(CheckpointRetention, OrderAndDuplicatesOfTheInputDoNotMatter) {
  EXPECT_EQ(checkpoints_to_delete({50, 10, 40, 20, 30, 20}, policy(2, std::nullopt), {}),
            (Steps{10, 20, 30}));
}

TEST(CheckpointRetention, StepZeroIsAMultipleOfEveryK) {
  EXPECT_EQ(checkpoints_to_delete({0, 5, 10}, policy(1, 7), {}), (Steps{5}));
}

TEST(CheckpointRetention, NoFinishedCheckpointsNothingToDelete) {
  EXPECT_EQ(checkpoints_to_delete({}, policy(1, 1), {1}), Steps{});
}

TEST(CheckpointRetention, TheRunsPolicyReplacesTheClusters) {
  const auto run = policy(5, std::nullopt);
  const auto cluster = policy(1, 100);
  EXPECT_EQ(effective_retention(run, cluster)->keep_last, 5);
  EXPECT_FALSE(effective_retention(run, cluster)->keep_every);
  EXPECT_EQ(effective_retention(std::nullopt, cluster)->keep_every, 100);
  EXPECT_FALSE(effective_retention(std::nullopt, std::nullopt));
}

}  // namespace
}  // namespace podium::core
