// engine/process/spawn.h and child.h against real processes (/bin/sh, sleep).

#include "engine/process/spawn.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::process {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

Spec shell(const std::string& script) {
  Spec spec;
  spec.argv = {"sh", "-c", script};
  spec.env = std::vector<std::string>{"PATH=/usr/bin:/bin"};
  return spec;
}

// Everything the child wrote to its stdout and stderr pipes until both closed.
std::pair<std::string, std::string> drain(Child& child) {
  std::vector<OutputChunk> chunks;
  while (child.read_output(1000ms, chunks)) {
  }
  std::string out, err;
  for (const auto& c : chunks) (c.stream == Stream::out ? out : err) += c.bytes;
  return {out, err};
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ProcessSpawn, PipesBothStreamsAndReportsTheExitCode) {
  auto s = spawn(shell("echo out; echo err >&2; exit 3"));
  ASSERT_TRUE(s.child) << s.error;
  const auto [out, err] = drain(*s.child);
  EXPECT_EQ(out, "out\n");
  EXPECT_EQ(err, "err\n");
  const ExitStatus status = s.child->wait();
  EXPECT_EQ(status.exit_code, 3);
  EXPECT_FALSE(status.signal);
  EXPECT_EQ(status.shell_code(), 3);
}

TEST(ProcessSpawn, TheChildSeesOnlyTheGivenEnvironmentAndDirectory) {
  auto spec = shell("echo \"$A|$HOME|$(pwd)\"");
  spec.env->push_back("A=1");
  spec.cwd = "/tmp";
  auto s = spawn(spec);
  ASSERT_TRUE(s.child) << s.error;
  EXPECT_EQ(drain(*s.child).first, "1||/tmp\n");
}

TEST(ProcessSpawn, ArgumentsReachTheProgramExactlyAsGiven) {
  Spec spec;
  spec.argv = {"/bin/sh", "-c", "printf '%s|' \"$@\"", "sh", "a b", "$HOME", "'q'"};
  spec.env = std::vector<std::string>{};
  auto s = spawn(spec);
  ASSERT_TRUE(s.child) << s.error;
  EXPECT_EQ(drain(*s.child).first, "a b|$HOME|'q'|");
}

TEST(ProcessSpawn, WithoutAnEnvironmentTheChildInheritsOurs) {
  ::setenv("PODIUM_PROCESS_TEST_VAR", "inherited", 1);
  Spec spec;
  spec.argv = {"sh", "-c", "echo $PODIUM_PROCESS_TEST_VAR"};
  auto s = spawn(spec);
  ::unsetenv("PODIUM_PROCESS_TEST_VAR");
  ASSERT_TRUE(s.child) << s.error;
  EXPECT_EQ(drain(*s.child).first, "inherited\n");
}

TEST(ProcessSpawn, SaysWhichStepFailed) {
  Spec missing;
  missing.argv = {"no-such-program-podium"};
  missing.env = std::vector<std::string>{"PATH=/usr/bin:/bin"};
  auto m = spawn(missing);
  EXPECT_FALSE(m.child);
  EXPECT_TRUE(m.exec_failed);
  EXPECT_EQ(m.error, "exec no-such-program-podium: No such file or directory");

  auto spec = shell("true");
  spec.cwd = "/no/such/dir/podium";
  auto c = spawn(spec);
  EXPECT_FALSE(c.child);
  EXPECT_FALSE(c.exec_failed);
  EXPECT_THAT(c.error, HasSubstr("chdir /no/such/dir/podium"));

  EXPECT_EQ(spawn(Spec{}).error, "the command is empty");
}

TEST(ProcessSpawn, StdinPipeAndFileOutput) {
  const auto log = std::filesystem::temp_directory_path() /
                   ("podium-process-" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(log);
  auto spec = shell("cat; echo to-err >&2");
  spec.in = Stdio::pipe;
  spec.out = Stdio::file;
  spec.err = Stdio::file;
  spec.output_file = log;
  for (int round = 0; round < 2; ++round) {
    auto s = spawn(spec);
    ASSERT_TRUE(s.child) << s.error;
    ASSERT_GE(s.child->stdin_fd(), 0);
    EXPECT_EQ(s.child->stdout_fd(), -1);
    ASSERT_EQ(::write(s.child->stdin_fd(), "in\n", 3), 3);
    s.child->close_stdin();
    EXPECT_EQ(s.child->wait().exit_code, 0);
  }
  // Appended, not truncated.
  EXPECT_EQ(slurp(log), "in\nto-err\nin\nto-err\n");
  std::filesystem::remove(log);
}

TEST(ProcessSpawn, SignalsReachTheWholeGroupItLeads) {
  // The shell starts a sleep in the background and waits: killing only the shell would leave
  // the sleep holding the pipe open.
  auto spec = shell("sleep 30 & wait");
  spec.group = Group::own_session;
  auto s = spawn(spec);
  ASSERT_TRUE(s.child) << s.error;
  EXPECT_EQ(::getpgid(s.child->pid()), s.child->pid());
  EXPECT_EQ(::getsid(s.child->pid()), s.child->pid());
  EXPECT_FALSE(s.child->wait_for(100ms));
  s.child->signal_group(SIGTERM);
  const auto status = s.child->wait_for(5s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->signal, SIGTERM);
  EXPECT_EQ(status->shell_code(), 128 + SIGTERM);
  // Both the shell and the sleep are gone: the pipe reaches end of file.
  const auto start = std::chrono::steady_clock::now();
  drain(*s.child);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(ProcessSpawn, AnOwnGroupOrTheParents) {
  auto own = spawn(shell("sleep 30"));
  ASSERT_TRUE(own.child) << own.error;
  EXPECT_EQ(::getpgid(own.child->pid()), own.child->pid());
  EXPECT_NE(::getsid(own.child->pid()), own.child->pid());
  auto spec = shell("sleep 30");
  spec.group = Group::inherit;
  auto same = spawn(spec);
  ASSERT_TRUE(same.child) << same.error;
  EXPECT_EQ(::getpgid(same.child->pid()), ::getpgid(0));
}

TEST(ProcessSpawn, DestroyingAChildKillsAndReapsIt) {
  pid_t pid = -1;
  {
    auto s = spawn(shell("sleep 30"));
    ASSERT_TRUE(s.child) << s.error;
    pid = s.child->pid();
    EXPECT_EQ(::kill(pid, 0), 0);
  }
  // Reaped: the pid no longer names a process (not even a zombie).
  EXPECT_EQ(::kill(pid, 0), -1);
}

TEST(ProcessSpawn, AReleasedChildIsLeftRunning) {
  auto s = spawn(shell("sleep 30"));
  ASSERT_TRUE(s.child) << s.error;
  pid_t pid = s.child->release();
  s.child.reset();
  EXPECT_EQ(::kill(pid, 0), 0);
  Child again(pid, true, -1, -1, -1);
  again.signal(SIGKILL);
  EXPECT_EQ(again.wait().signal, SIGKILL);
}

}  // namespace
}  // namespace podium::process
