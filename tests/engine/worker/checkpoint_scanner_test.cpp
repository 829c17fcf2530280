#include "engine/worker/checkpoint_scanner.h"

#include <gtest/gtest.h>

#include "tests/engine/worker/temp_dir.h"

namespace podium::worker {
namespace {

using testing::TempDir;
using testing::write_file;

TEST(CheckpointScanner, StepNamesArePlainDecimalNumbers) {
  EXPECT_EQ(parse_step_name("0"), 0);
  EXPECT_EQ(parse_step_name("1200"), 1200);
  EXPECT_EQ(parse_step_name("007"), 7);
  for (const char* bad : {"", "10.orbax-checkpoint-tmp-17", "tmp", "-1", "+3", "1e3", " 5", "5 ",
                          "checkpoint_10", "1234567890123456789"}) {
    EXPECT_EQ(parse_step_name(bad), -1) << bad;
  }
}

TEST(CheckpointScanner, ReportsFinishedStepsOnceWithTheirSize) {
  TempDir dir;
  const auto ckpt = dir.path() / "checkpoints";
  CheckpointScanner scanner(ckpt);
  EXPECT_TRUE(scanner.scan().empty());  // the directory does not exist yet

  write_file(ckpt / "10" / "state" / "a.bin", std::string(100, 'a'));
  write_file(ckpt / "10" / "meta.json", "{}");
  write_file(ckpt / "20.orbax-checkpoint-tmp-99" / "x", "partial");
  write_file(ckpt / "tmp" / "y", "y");
  write_file(ckpt / "30", "a file, not a directory");
  std::filesystem::create_directories(ckpt / "5");
  std::filesystem::create_symlink(ckpt / "10", ckpt / "40");

  auto found = scanner.scan();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].step, 5);
  EXPECT_EQ(found[0].bytes, 0u);
  EXPECT_EQ(found[1].step, 10);
  EXPECT_EQ(found[1].bytes, 102u);
  EXPECT_EQ(found[1].uri, (ckpt / "10").string());
  EXPECT_TRUE(scanner.scan().empty());  // reported once

  // The temporary directory is renamed to its step when complete: now it counts.
  std::filesystem::rename(ckpt / "20.orbax-checkpoint-tmp-99", ckpt / "20");
  found = scanner.scan();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].step, 20);
  EXPECT_EQ(found[0].bytes, 7u);
}

TEST(CheckpointScanner, DirectoryBytesDoesNotFollowSymlinks) {
  TempDir dir;
  write_file(dir.path() / "big" / "f", std::string(1000, 'x'));
  write_file(dir.path() / "s" / "g", "12345");
  std::filesystem::create_symlink(dir.path() / "big" / "f", dir.path() / "s" / "link");
  std::filesystem::create_directory_symlink(dir.path() / "big", dir.path() / "s" / "dirlink");
  EXPECT_EQ(directory_bytes(dir.path() / "s"), 5u);
}

}  // namespace
}  // namespace podium::worker
