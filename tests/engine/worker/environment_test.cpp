#include "engine/worker/environment.h"

#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/worker/assignment.h"
#include "tests/engine/worker/temp_dir.h"

namespace podium::worker {
namespace {

using ::testing::ElementsAre;

TEST(Environment, AssignmentEnvIsAddedAndWinsOnConflicts) {
  const std::vector<std::string> base = {"PATH=/usr/bin", "HOME=/root", "RANK=9",
                                         "BROKEN",        "=nameless",  "HOME=/second"};
  const auto env = merge_environment(
      base,
      {{"RANK", "0"}, {"JAX_PROCESS_COUNT", "4"}, {"EMPTY", ""}, {"BAD=NAME", "x"}, {"", "y"}});
  EXPECT_THAT(
      env, ElementsAre("EMPTY=", "HOME=/root", "JAX_PROCESS_COUNT=4", "PATH=/usr/bin", "RANK=0"));
}

TEST(Environment, ValuesMayContainEqualsSigns) {
  EXPECT_THAT(merge_environment({"A=b=c"}, {{"X", "--flag=1"}}),
              ElementsAre("A=b=c", "X=--flag=1"));
}

TEST(Environment, ProgramIsSearchedInThePathOfTheChildsEnvironment) {
  testing::TempDir dir;
  const auto bin = dir.path() / "bin";
  testing::write_file(bin / "mytool", "#!/bin/sh\n");
  testing::write_file(bin / "notexec", "");
  ::chmod((bin / "mytool").c_str(), 0755);
  const std::vector<std::string> env = {"PATH=/nonexistent:" + bin.string()};
  EXPECT_EQ(resolve_executable("mytool", env), (bin / "mytool").string());
  EXPECT_EQ(resolve_executable("notexec", env), "notexec");
  EXPECT_EQ(resolve_executable("./rel/tool", env), "./rel/tool");
  EXPECT_EQ(resolve_executable("sh", {}), "/usr/bin/sh");
}

TEST(Assignment, ParsesAStartAndACancel) {
  const auto start = parse_assignment(nlohmann::json::parse(R"({
    "attempt_id":"att_1","run_id":"run_1","run_name":"demo","rank":2,
    "command":["python3","-m","train"],"env":{"RANK":"2","N":3},"workdir":"",
    "checkpoint_dir":null,"grace_seconds":7})"));
  const auto* a = std::get_if<Assignment>(&start);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->attempt_id, "att_1");
  EXPECT_EQ(a->rank, 2);
  EXPECT_THAT(a->command, ElementsAre("python3", "-m", "train"));
  EXPECT_EQ(a->env.at("N"), "3");
  EXPECT_FALSE(a->checkpoint_dir);
  EXPECT_EQ(a->grace_seconds, 7);
  EXPECT_TRUE(a->invalid.empty());

  const auto cancel = parse_assignment(nlohmann::json::parse(R"({"cancel":["att_1","att_2"]})"));
  const auto* c = std::get_if<CancelOrder>(&cancel);
  ASSERT_NE(c, nullptr);
  EXPECT_THAT(c->attempt_ids, ElementsAre("att_1", "att_2"));
  EXPECT_EQ(c->grace_seconds, 10);
}

TEST(Assignment, UnusableOnesAreErrorsOrInvalid) {
  EXPECT_TRUE(std::holds_alternative<AssignmentError>(
      parse_assignment(nlohmann::json::parse(R"({"attempt_id":"../x","rank":0})"))));
  EXPECT_TRUE(std::holds_alternative<AssignmentError>(
      parse_assignment(nlohmann::json::parse(R"({"attempt_id":"att_1"})"))));
  const auto bad = parse_assignment(
      nlohmann::json::parse(R"({"attempt_id":"att_1","rank":0,"command":"not a list"})"));
  ASSERT_TRUE(std::holds_alternative<Assignment>(bad));
  EXPECT_FALSE(std::get<Assignment>(bad).invalid.empty());
}

}  // namespace
}  // namespace podium::worker
