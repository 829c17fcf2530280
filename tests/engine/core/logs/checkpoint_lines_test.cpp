#include "engine/core/logs/checkpoint_lines.h"

#include <gtest/gtest.h>

#include "engine/core/logs/maxtext_log.h"

namespace podium::core {
namespace {

std::optional<CheckpointLine> parse(std::string_view raw) {
  return parse_checkpoint_line(clean_log_line(raw).message);
}

TEST(CheckpointLines, SavesAsMaxTextAndTheReferenceWorkloadPrintThem) {
  auto s = parse("I1121 16:46:01.000000 140 checkpointing.py:390] saved a checkpoint at step 100");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, CheckpointLine::Kind::saved);
  EXPECT_EQ(*s->step, 100);
  s = parse("Saved a checkpoint at step 25.");
  ASSERT_TRUE(s);
  EXPECT_EQ(*s->step, 25);
  s = parse("Finished saving checkpoint to `gs://team/run_1/checkpoints/300`.");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->path, "gs://team/run_1/checkpoints/300");
  EXPECT_EQ(*s->step, 300);
  // A temporary (unfinished) directory name is no step.
  s = parse(
      "Finished saving checkpoint to `gs://team/run_1/checkpoints/300.orbax-checkpoint-tmp`.");
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->step);
}

TEST(CheckpointLines, Restores) {
  auto r = parse("restoring from this run's directory step 75");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, CheckpointLine::Kind::restored);
  EXPECT_EQ(*r->step, 75);
  r = parse("INFO:absl:Restoring checkpoint from step 1200.");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r->step, 1200);
  EXPECT_FALSE(parse("No existing checkpoints found, not restoring checkpoint."));
  EXPECT_FALSE(parse("checkpoint manager exists so trying to load this run's existing checkpoint"));
  EXPECT_FALSE(parse("completed step: 3, seconds: 1.0"));
}

TEST(CheckpointLines, RemoteOutputs) {
  EXPECT_TRUE(is_remote_output("gs://bucket/runs"));
  EXPECT_TRUE(is_remote_output("s3://bucket/runs"));
  EXPECT_FALSE(is_remote_output("file:///data/runs"));
  EXPECT_FALSE(is_remote_output("/data/runs"));
  EXPECT_FALSE(is_remote_output("://x"));
}

}  // namespace
}  // namespace podium::core
