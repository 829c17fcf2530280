// engine/process/capture.h against real processes: deadline, size cap, stdin.

#include "engine/process/capture.h"

#include <signal.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "engine/process/spawn.h"

namespace podium::process {
namespace {

using namespace std::chrono_literals;

Child piped(const std::string& script) {
  Spec spec;
  spec.argv = {"sh", "-c", script};
  spec.env = std::vector<std::string>{"PATH=/usr/bin:/bin"};
  spec.in = Stdio::pipe;
  auto s = spawn(spec);
  if (!s.child) throw std::runtime_error(s.error);
  return std::move(*s.child);
}

TEST(ProcessCapture, FeedsStdinAndKeepsBothOutputs) {
  Child child = piped("cat; echo err >&2; exit 3");
  // Larger than a pipe's buffer: stdin is written while output is read.
  const std::string input(300000, 'x');
  const Captured c = capture(child, input, {});
  EXPECT_FALSE(c.timed_out);
  EXPECT_EQ(c.status.exit_code, 3);
  EXPECT_EQ(c.out, input);
  EXPECT_EQ(c.err, "err\n");
}

TEST(ProcessCapture, KillsTheGroupAtTheDeadline) {
  Child child = piped("sleep 30 & sleep 30");
  CaptureLimits limits;
  limits.timeout = 200ms;
  const auto start = std::chrono::steady_clock::now();
  const Captured c = capture(child, "", limits);
  EXPECT_TRUE(c.timed_out);
  EXPECT_EQ(c.status.signal, SIGKILL);
  // The background sleep held the pipes too: it died with the group, so no drain wait.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
}

TEST(ProcessCapture, AProcessThatClosesItsOutputsStillMeetsTheDeadline) {
  Child child = piped("exec >&- 2>&-; sleep 30");
  CaptureLimits limits;
  limits.timeout = 200ms;
  const Captured c = capture(child, "", limits);
  EXPECT_TRUE(c.timed_out);
  EXPECT_EQ(c.status.signal, SIGKILL);
}

TEST(ProcessCapture, CapsEachStream) {
  Child child = piped("head -c 100000 /dev/zero; head -c 50 /dev/zero >&2");
  CaptureLimits limits;
  limits.max_output_bytes = 1000;
  const Captured c = capture(child, "", limits);
  EXPECT_EQ(c.status.exit_code, 0);
  EXPECT_EQ(c.out.size(), 1000U);
  EXPECT_EQ(c.err.size(), 50U);
}

}  // namespace
}  // namespace podium::process
