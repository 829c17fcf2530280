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

}  // namespace
}  // namespace podium::worker
