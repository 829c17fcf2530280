// Deleting what retention chose (engine/worker/checkpoint_deleter.h): local step directories,
// gs:// through the host's own gcloud or gsutil (scripts standing in for them, found on PATH),
// a clear error without either, and nothing outside a checkpoints/<step> directory.
#include "engine/worker/checkpoint_deleter.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "tests/engine/worker/temp_dir.h"

namespace podium::worker {
namespace {

namespace fs = std::filesystem;
using testing::read_lines;
using testing::TempDir;
using testing::write_file;

// An executable script `name` in `bin` that appends its arguments to `log` and runs `then`.
void fake_tool(const fs::path& bin, const std::string& name, const fs::path& log,
               const std::string& then = "exit 0") {
  write_file(bin / name,
             "#!/bin/sh\necho \"" + name + " $*\" >> " + log.string() + "\n" + then + "\n");
  ::chmod((bin / name).c_str(), 0755);
}

struct DeleterFixture : ::testing::Test {
  TempDir dir;
  std::shared_ptr<ProcessLauncher> launcher = make_posix_launcher();
  fs::path bin = dir.path() / "bin";
  fs::path log = dir.path() / "calls.log";

  DeletionContext context(const std::string& path) {
    fs::create_directories(bin);
    DeletionContext c;
    c.launcher = launcher.get();
    c.env = {"PATH=" + path, "HOME=" + dir.path().string()};
    c.checkpoint_dir = (dir.path() / "out/run_1/checkpoints").string();
    c.tool_timeout = std::chrono::seconds(20);
    return c;
  }
};

TEST_F(DeleterFixture, ALocalStepDirectoryIsRemovedAndAMissingOneCountsAsDeleted) {
  const fs::path ckpt = dir.path() / "out/run_1/checkpoints";
  write_file(ckpt / "10/state/a.bin", "abc");
  write_file(ckpt / "20/meta", "{}");
  auto c = context(bin.string());
  auto r = delete_checkpoint((ckpt / "10").string(), c);
  EXPECT_TRUE(r.deleted) << r.error;
  EXPECT_FALSE(fs::exists(ckpt / "10"));
  EXPECT_TRUE(fs::exists(ckpt / "20"));
  r = delete_checkpoint((ckpt / "10").string(), c);  // the retried request
  EXPECT_TRUE(r.deleted) << r.error;
  r = delete_checkpoint("file://" + (ckpt / "20").string(), c);
  EXPECT_TRUE(r.deleted) << r.error;
  EXPECT_FALSE(fs::exists(ckpt / "20"));
}

TEST_F(DeleterFixture, AFileWhereTheStepDirectoryShouldBeIsNotDeleted) {
  const fs::path ckpt = dir.path() / "out/run_1/checkpoints";
  write_file(ckpt / "30", "not a directory");
  auto r = delete_checkpoint((ckpt / "30").string(), context(bin.string()));
  EXPECT_FALSE(r.deleted);
  EXPECT_NE(r.error.find("is not a directory"), std::string::npos) << r.error;
  EXPECT_TRUE(fs::exists(ckpt / "30"));
}

TEST_F(DeleterFixture, NothingButACheckpointStepDirectoryIsEverDeleted) {
  const std::optional<std::string> mine = "/data/out/run_1/checkpoints";
  EXPECT_EQ(deletion_refusal("/data/out/run_1/checkpoints/10", mine), "");
  EXPECT_EQ(deletion_refusal("/data/out/run_1/checkpoints/10/", mine), "");
  EXPECT_EQ(deletion_refusal("gs://b/out/run_1/checkpoints/300", std::nullopt), "");
  for (const char* bad :
       {"/data/out/run_1/checkpoints", "/data/out/run_1/checkpoints/10.orbax-checkpoint-tmp-1",
        "/data/out/run_1/checkpoints/latest", "/data/out/run_2/checkpoints/10",
        "/data/out/run_1/checkpoints/../../../etc/10", "/", "relative/checkpoints/10", "",
        "/etc/10", "gs://b/out/run_1", "gs://b/out/run_1/checkpoints/x"}) {
    EXPECT_NE(deletion_refusal(bad, mine), "") << bad;
  }
  TempDir other;
  write_file(other.path() / "checkpoints/5/keep", "x");
  auto r = delete_checkpoint((other.path() / "checkpoints/5").string(), context(bin.string()));
  EXPECT_FALSE(r.deleted);
  EXPECT_EQ(r.error.rfind("refused: ", 0), 0u) << r.error;
  EXPECT_TRUE(fs::exists(other.path() / "checkpoints/5/keep"));
}

TEST_F(DeleterFixture, GsUrisGoToGcloudStorageFirst) {
  auto c = context(bin.string());
  fake_tool(bin, "gcloud", log);
  fake_tool(bin, "gsutil", log);
  auto r = delete_checkpoint("gs://bucket/out/run_1/checkpoints/20", c);
  EXPECT_TRUE(r.deleted) << r.error;
  EXPECT_EQ(read_lines(log),
            std::vector<std::string>{
                "gcloud storage rm -r --quiet gs://bucket/out/run_1/checkpoints/20"});
}

TEST_F(DeleterFixture, GsutilWhenThereIsNoGcloud) {
  auto c = context("/nonexistent:" + bin.string());
  fake_tool(bin, "gsutil", log);
  auto r = delete_checkpoint("gs://bucket/out/run_1/checkpoints/20", c);
  EXPECT_TRUE(r.deleted) << r.error;
  EXPECT_EQ(read_lines(log),
            std::vector<std::string>{"gsutil -m rm -r gs://bucket/out/run_1/checkpoints/20"});
}

TEST_F(DeleterFixture, WithoutEitherToolTheErrorSaysSo) {
  auto r = delete_checkpoint("gs://bucket/out/run_1/checkpoints/20", context(bin.string()));
  EXPECT_FALSE(r.deleted);
  EXPECT_NE(r.error.find("neither gcloud nor gsutil"), std::string::npos) << r.error;
  r = delete_checkpoint("s3://bucket/out/run_1/checkpoints/20", context(bin.string()));
  EXPECT_FALSE(r.deleted);
  EXPECT_NE(r.error.find("s3://"), std::string::npos) << r.error;
}

TEST_F(DeleterFixture, AFailingToolIsAnErrorWithItsMessageButNothingLeftIsDeleted) {
  auto c = context(bin.string());
  fake_tool(bin, "gcloud", log,
            "echo 'ERROR: 403 caller does not have storage.objects.delete' >&2; exit 1");
  auto r = delete_checkpoint("gs://bucket/out/run_1/checkpoints/20", c);
  EXPECT_FALSE(r.deleted);
  EXPECT_NE(r.error.find("exit code 1"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("storage.objects.delete"), std::string::npos) << r.error;
  fake_tool(
      bin, "gcloud", log,
      "echo 'ERROR: (gcloud.storage.rm) The following URLs matched no objects or files:' >&2; "
      "exit 1");
  r = delete_checkpoint("gs://bucket/out/run_1/checkpoints/20", c);
  EXPECT_TRUE(r.deleted) << r.error;
}

TEST_F(DeleterFixture, FindOnPathNeedsAnExecutableFile) {
  fs::create_directories(bin);
  write_file(bin / "gcloud", "not executable");
  EXPECT_EQ(find_on_path("gcloud", {"PATH=" + bin.string()}), "");
  ::chmod((bin / "gcloud").c_str(), 0755);
  EXPECT_EQ(find_on_path("gcloud", {"PATH=/nonexistent::" + bin.string()}),
            (bin / "gcloud").string());
  EXPECT_EQ(find_on_path("gcloud", {"HOME=/x"}), "");
}

}  // namespace
}  // namespace podium::worker
