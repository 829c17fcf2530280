#pragma once
// Runs a short helper program (a software probe, a deletion tool) to completion with a deadline:
// its output is collected up to a cap, and a program that outlives the deadline is killed with
// its process group, so no helper can hold the agent up.

#include <chrono>
#include <optional>
#include <string>

#include "engine/worker/process.h"

namespace podium::worker {

struct BoundedRun {
  std::string start_error;           // set when the program could not be started
  std::optional<ExitStatus> status;  // nullopt: did not start, or killed at the deadline
  std::string stdout_text;           // stdout, at most max_bytes
  std::string output;                // stdout and stderr as they came, at most max_bytes
  bool started() const { return start_error.empty(); }
  bool timed_out() const { return started() && !status; }
};

BoundedRun run_bounded(ProcessLauncher& launcher, const LaunchSpec& spec,
                       std::chrono::milliseconds timeout, size_t max_bytes);

}  // namespace podium::worker
