#include "engine/worker/run_as.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "engine/worker/process.h"
#include "tests/engine/worker/temp_dir.h"

namespace podium::worker {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uid_t kNobody = 65534;  // Debian's nobody

TEST(RunAs, RootMustSayWhomRanksRunAs) {
  const auto r = resolve_run_as("", 0);
  EXPECT_FALSE(r.account);
  EXPECT_THAT(r.error, HasSubstr("running as root"));
  EXPECT_THAT(r.error, HasSubstr("--run-as"));
  // Saying root keeps root, without a switch at launch.
  const auto root = resolve_run_as("root", 0);
  EXPECT_THAT(root.error, IsEmpty());
  EXPECT_FALSE(root.account);
}

TEST(RunAs, RootSwitchesToTheNamedAccountWithItsGroups) {
  for (const std::string name : {"nobody", "65534"}) {
    const auto r = resolve_run_as(name, 0);
    ASSERT_THAT(r.error, IsEmpty()) << name;
    ASSERT_TRUE(r.account) << name;
    EXPECT_EQ(r.account->name, "nobody");
    EXPECT_EQ(r.account->uid, kNobody);
    EXPECT_FALSE(r.account->groups.empty());
  }
  EXPECT_THAT(resolve_run_as("no-such-account-podium", 0).error, HasSubstr("no such account"));
}

TEST(RunAs, AnAccountThatIsNotRootRunsRanksAsItself) {
  EXPECT_THAT(resolve_run_as("", 1000).error, IsEmpty());
  EXPECT_FALSE(resolve_run_as("", 1000).account);
  EXPECT_THAT(resolve_run_as("nobody", 1000).error, HasSubstr("only an agent running as root"));
  const auto self = resolve_run_as("nobody", kNobody);
  EXPECT_THAT(self.error, IsEmpty());
  EXPECT_FALSE(self.account);
}

TEST(RunAs, TheAccountsHomeAndNameReplaceTheAgents) {
  RunAs a;
  a.name = "trainer";
  a.home = "/home/trainer";
  std::vector<std::string> env = {"HOME=/root", "PATH=/usr/bin", "USER=root"};
  apply_account_environment(a, env);
  EXPECT_EQ(env, (std::vector<std::string>{"HOME=/home/trainer", "PATH=/usr/bin", "USER=trainer",
                                           "LOGNAME=trainer"}));
}

// The real thing: needs root to switch accounts (the CI machine and the demo run as root).
class RunAsProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "switching accounts needs root";
    account_ = resolve_run_as("nobody", 0).account;
    ASSERT_TRUE(account_);
  }

  std::string run(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                  std::optional<int>* exit_code) {
    LaunchSpec spec;
    spec.argv = argv;
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.cwd = cwd;
    spec.run_as = account_;
    auto launched = make_posix_launcher()->launch(spec);
    if (!launched.child) return "launch failed: " + launched.error;
    std::vector<OutputChunk> chunks;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (launched.child->read_output(std::chrono::milliseconds(100), chunks) &&
           std::chrono::steady_clock::now() < deadline) {
    }
    std::optional<ExitStatus> status;
    while (!(status = launched.child->try_wait()) && std::chrono::steady_clock::now() < deadline)
      usleep(10000);
    if (status) *exit_code = status->exit_code;
    std::string out;
    for (const auto& c : chunks) out += c.bytes;
    return out;
  }

  std::optional<RunAs> account_;
};

TEST_F(RunAsProcess, TheRankRunsAsTheAccountAndWritesOnlyWhereItWasGiven) {
  testing::TempDir dir;
  ::chmod(dir.path().c_str(), 0755);  // mkdtemp's 0700 would keep the account out
  const auto given = dir.path() / "given";
  std::filesystem::create_directories(given / "code");
  std::ofstream(given / "code" / "main.py") << "print('hi')\n";
  std::ofstream(dir.path() / "credential") << "secret\n";
  ::chmod((dir.path() / "credential").c_str(), 0600);
  ASSERT_EQ(give_tree(given, *account_), "");
  struct stat st {};
  ASSERT_EQ(::stat((given / "code" / "main.py").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody);

  std::optional<int> code;
  const std::string out =
      run({"/bin/sh", "-c",
           "id -u; id -g; touch code/new && echo wrote; cat ../credential || echo no-credential"},
          given, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("65534\n65534\nwrote\n"));
  EXPECT_THAT(out, HasSubstr("no-credential"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("secret")));
}

TEST_F(RunAsProcess, ADirectoryTheAccountCannotEnterIsALaunchFailureNamingIt) {
  testing::TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  const auto closed = dir.path() / "closed";
  std::filesystem::create_directories(closed);
  ::chmod(closed.c_str(), 0700);  // root's
  LaunchSpec spec;
  spec.argv = {"/bin/true"};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd = closed;
  spec.run_as = account_;
  auto launched = make_posix_launcher()->launch(spec);
  EXPECT_FALSE(launched.child);
  EXPECT_THAT(launched.error, HasSubstr("chdir " + closed.string()));
}

}  // namespace
}  // namespace podium::worker
