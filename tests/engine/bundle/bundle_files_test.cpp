#include "engine/bundle/bundle_files.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>

namespace podium::bundle {
namespace {

namespace fs = std::filesystem;

class BundleFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("podium-bundle-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "src");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& content) {
    fs::create_directories((src() / rel).parent_path());
    std::ofstream(src() / rel, std::ios::binary) << content;
  }
  fs::path src() const { return root_ / "src"; }
  std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::path root_;
};

TEST_F(BundleFilesTest, PacksWhatGitWouldCommitAndUnpacksItExactly) {
  write("train.py", "print('from the bundle')\n");
  write("pkg/model.py", "X = 1\n");
  write("run.sh", "#!/bin/sh\necho hi\n");
  fs::permissions(src() / "run.sh", fs::perms::owner_exec, fs::perm_options::add);
  write(".gitignore", "*.pyc\n/outputs/\nsecrets.env\n");
  write("pkg/.gitignore", "local_*.py\n");
  write(".podiumignore", "data/\n");
  write("pkg/cache.pyc", "junk");
  write("pkg/local_notes.py", "junk");
  write("outputs/ckpt/1", "junk");
  write("data/big.bin", "junk");
  write("secrets.env", "TOKEN=x");
  write(".git/HEAD", "ref: refs/heads/main\n");
  fs::create_directory_symlink("pkg", src() / "pkg_link");

  std::uint64_t last_progress = 0;
  auto packed = pack_directory(src(), {}, [&](std::uint64_t n) { last_progress = n; });
  EXPECT_TRUE(valid_digest(packed.digest)) << packed.digest;
  EXPECT_EQ(packed.digest, bundle_digest(packed.bytes));
  // .gitignore, .podiumignore, pkg/.gitignore, pkg/model.py, the link, run.sh, train.py
  EXPECT_EQ(packed.summary.entries, 7u);
  EXPECT_EQ(last_progress, 7u);
  EXPECT_EQ(packed.excluded, 6u);  // .git, data, outputs, secrets.env, cache.pyc, local_notes.py

  const auto dest = root_ / "attempt" / "code";
  fs::create_directories(dest.parent_path());
  unpack_bundle(packed.bytes, dest, {});
  EXPECT_EQ(read(dest / "train.py"), "print('from the bundle')\n");
  EXPECT_EQ(read(dest / "pkg/model.py"), "X = 1\n");
  EXPECT_TRUE((fs::status(dest / "run.sh").permissions() & fs::perms::owner_exec) !=
              fs::perms::none);
  EXPECT_TRUE(fs::is_symlink(dest / "pkg_link"));
  EXPECT_EQ(read(dest / "pkg_link/model.py"), "X = 1\n");
  for (const char* gone :
       {"secrets.env", "outputs", "data", ".git", "pkg/cache.pyc", "pkg/local_notes.py"})
    EXPECT_FALSE(fs::exists(dest / gone)) << gone;
  // Nothing staged is left beside the destination.
  int siblings = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dest.parent_path())) ++siblings;
  EXPECT_EQ(siblings, 1);
}

TEST_F(BundleFilesTest, TheSameTreeGivesTheSameDigestAndAChangeAnother) {
  write("a.py", "1");
  write("b/c.py", "2");
  const auto first = pack_directory(src(), {});
  EXPECT_EQ(pack_directory(src(), {}).digest, first.digest);
  write("b/c.py", "3");
  EXPECT_NE(pack_directory(src(), {}).digest, first.digest);
}

TEST_F(BundleFilesTest, RefusesLinksLeavingTheTreeLimitsAndEmptyTrees) {
  write("a.py", "1");
  fs::create_symlink("/etc/passwd", src() / "passwd");
  EXPECT_THROW(pack_directory(src(), {}), BundleError);
  fs::remove(src() / "passwd");
  BundleLimits small;
  small.max_uncompressed_bytes = 4;
  write("big.py", "0123456789");
  EXPECT_THROW(pack_directory(src(), small), BundleError);
  write(".podiumignore", "*\n");
  EXPECT_THROW(pack_directory(src(), {}), BundleError);
  EXPECT_THROW(pack_directory(root_ / "missing", {}), BundleError);
}

TEST_F(BundleFilesTest, UnpackingNeverReplacesAnExistingTreeAndCleansUpAfterAFailure) {
  write("a.py", "1");
  auto packed = pack_directory(src(), {});
  const auto dest = root_ / "code";
  unpack_bundle(packed.bytes, dest, {});
  EXPECT_THROW(unpack_bundle(packed.bytes, dest, {}), BundleError);
  const auto broken = root_ / "broken";
  EXPECT_THROW(unpack_bundle(packed.bytes.substr(0, packed.bytes.size() / 2), broken, {}),
               BundleError);
  EXPECT_FALSE(fs::exists(broken));
  for (const auto& e : fs::directory_iterator(root_))
    EXPECT_EQ(e.path().filename().string().find(".partial-"), std::string::npos);
}

TEST(BundleDigest, Form) {
  EXPECT_EQ(bundle_digest(""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_FALSE(valid_digest("sha256:E3B0"));
  EXPECT_FALSE(
      valid_digest("md5:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
}

}  // namespace
}  // namespace podium::bundle

namespace podium::bundle {
namespace {

TEST_F(BundleFilesTest, ASubdirectoryOfAGitWorkTreeHonoursTheGitignoreFilesAboveIt) {
  // src/ is the work tree's top; the bundle is packed from src/app.
  write(".git/HEAD", "ref: refs/heads/main\n");
  write(".gitignore", "*.ckpt\n/app/outputs/\n/top-only.txt\n");
  write("app/.gitignore", "local.cfg\n");
  write("app/train.py", "x\n");
  write("app/model.ckpt", "junk");
  write("app/outputs/1/state", "junk");
  write("app/local.cfg", "junk");
  write("app/top-only.txt", "kept: the rule is anchored to the top, not to app/\n");
  auto packed = pack_directory(src() / "app", {});
  const auto dest = root_ / "out";
  unpack_bundle(packed.bytes, dest, {});
  EXPECT_TRUE(fs::exists(dest / "train.py"));
  EXPECT_TRUE(fs::exists(dest / "top-only.txt"));
  EXPECT_TRUE(fs::exists(dest / ".gitignore"));
  EXPECT_FALSE(fs::exists(dest / "model.ckpt"));
  EXPECT_FALSE(fs::exists(dest / "outputs"));
  EXPECT_FALSE(fs::exists(dest / "local.cfg"));
  EXPECT_EQ(packed.summary.entries, 3u);
}

}  // namespace
}  // namespace podium::bundle
