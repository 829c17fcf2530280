#include "engine/worker/software_probe.h"

#include <fstream>

#include <gtest/gtest.h>

#include "engine/worker/environment.h"
#include "tests/engine/worker/temp_dir.h"

namespace podium::worker {
namespace {

using nlohmann::json;

TEST(SoftwareProbe, TheReportKeepsKnownStringFieldsOfTheLastLine) {
  const auto report = parse_software_report(
      "a package printed this\n"
      R"({"python":"3.11.7","jax":"0.10.2","libtpu":"0.0.42.1","maxtext":"0.2.0",)"
      R"("maxtext_layout":"package","extra":"x","jaxlib":7})"
      "\n\n");
  EXPECT_EQ(report, (json{{"python", "3.11.7"},
                          {"jax", "0.10.2"},
                          {"libtpu", "0.0.42.1"},
                          {"maxtext", "0.2.0"},
                          {"maxtext_layout", "package"}}));
  EXPECT_TRUE(parse_software_report("").is_null());
  EXPECT_TRUE(parse_software_report("Traceback (most recent call last):\n").is_null());
  EXPECT_TRUE(parse_software_report("[1,2]").is_null());
  EXPECT_TRUE(parse_software_report(R"({"python": 3})").is_null());
  // An unknown layout is not passed on; an oversized value neither.
  EXPECT_EQ(parse_software_report(R"({"python":"3.12.1","maxtext_layout":"other"})"),
            (json{{"python", "3.12.1"}}));
  EXPECT_EQ(parse_software_report(R"({"python":")" + std::string(200, 'x') + R"("})"),
            json(nullptr));
}

// The real probe program under a real interpreter: what a host without jax reports.
TEST(SoftwareProbe, TheProgramRunsUnderPythonAndReportsItsVersion) {
  auto launcher = make_posix_launcher();
  testing::TempDir dir;
  std::string error;
  const auto report = probe_software(*launcher, "python3", current_environment(),
                                     dir.path().string(), std::chrono::seconds(30), &error);
  ASSERT_TRUE(report.is_object()) << error;
  ASSERT_TRUE(report.contains("python"));
  EXPECT_EQ(report["python"].get<std::string>().rfind("3.", 0), 0u);
}

TEST(SoftwareProbe, AMissingOrSilentInterpreterGivesNoReport) {
  auto launcher = make_posix_launcher();
  testing::TempDir dir;
  std::string error;
  EXPECT_TRUE(probe_software(*launcher, "/nonexistent/python", current_environment(),
                             dir.path().string(), std::chrono::seconds(5), &error)
                  .is_null());
  EXPECT_FALSE(error.empty());
  // An "interpreter" that never answers is killed at the deadline.
  const auto slow = dir.path() / "slow";
  std::ofstream(slow) << "#!/bin/sh\nsleep 30\n";
  std::filesystem::permissions(slow, std::filesystem::perms::owner_all);
  error.clear();
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(probe_software(*launcher, slow.string(), current_environment(), dir.path().string(),
                             std::chrono::milliseconds(500), &error)
                  .is_null());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_NE(error.find("did not answer"), std::string::npos) << error;
}

TEST(SoftwareProbe, TheRankReportKeepsVersionsAndHexCommits) {
  const auto report = parse_environment_report(
      R"({"python":"3.11.7","jax":"0.10.2","maxtext_layout":"package","git_commit":)"
      R"("0123456789abcdef0123456789abcdef01234567","maxtext_commit":"HEAD~1"})");
  EXPECT_EQ(report, (json{{"python", "3.11.7"},
                          {"jax", "0.10.2"},
                          {"git_commit", "0123456789abcdef0123456789abcdef01234567"}}));
  EXPECT_TRUE(parse_environment_report("no json").is_null());
}

// The rank probe under a real interpreter, in a working directory that is a git checkout (the
// files git writes, made by hand: HEAD naming a branch whose commit is in packed-refs), with the
// rank's environment.
TEST(SoftwareProbe, TheRankProbeFindsTheCheckoutsCommit) {
  auto launcher = make_posix_launcher();
  testing::TempDir dir;
  const auto repo = dir.path() / "repo";
  std::filesystem::create_directories(repo / ".git" / "refs" / "heads");
  std::filesystem::create_directories(repo / "sub");
  std::ofstream(repo / ".git" / "HEAD") << "ref: refs/heads/main\n";
  const std::string commit = "89abcdef0123456789abcdef0123456789abcdef";
  std::ofstream(repo / ".git" / "packed-refs") << "# pack-refs\n" << commit << " refs/heads/main\n";
  LaunchSpec rank;
  rank.argv = {"train.sh"};
  rank.env = current_environment();
  rank.cwd = (repo / "sub").string();
  std::string error;
  auto report =
      probe_rank_environment(*launcher, rank, "python3", std::chrono::seconds(30), &error);
  ASSERT_TRUE(report.is_object()) << error;
  EXPECT_EQ(report["python"].get<std::string>().rfind("3.", 0), 0u);
  EXPECT_EQ(report.value("git_commit", ""), commit);
  // A loose ref wins over packed-refs, as in git.
  const std::string loose = "0123456789abcdef0123456789abcdef01234567";
  std::ofstream(repo / ".git" / "refs" / "heads" / "main") << loose << "\n";
  report = probe_rank_environment(*launcher, rank, "python3", std::chrono::seconds(30), &error);
  EXPECT_EQ(report.value("git_commit", ""), loose);
  // Outside a checkout: no commit.
  rank.cwd = dir.path().string();
  report = probe_rank_environment(*launcher, rank, "python3", std::chrono::seconds(30), &error);
  ASSERT_TRUE(report.is_object()) << error;
  EXPECT_FALSE(report.contains("git_commit"));
}

}  // namespace
}  // namespace podium::worker
