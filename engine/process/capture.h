#pragma once
// Running a program to completion and keeping what it printed, with a deadline and a size cap:
// a tool that hangs or floods cannot stall its caller. At the deadline the child's process group
// is killed (SIGKILL).

#include <chrono>
#include <string>

#include "engine/process/child.h"

namespace podium::process {

struct CaptureLimits {
  std::chrono::milliseconds timeout{30000};
  size_t max_output_bytes = 4 * 1024 * 1024;  // per stream; the rest is read and dropped
  // After the kill, how long to keep reading pipes a surviving descendant may hold open.
  std::chrono::milliseconds drain_after_kill{2000};
};

struct Captured {
  ExitStatus status;
  bool timed_out = false;
  std::string out;
  std::string err;
};

// `child` was spawned with stdin, stdout and stderr as pipes (stdin may be closed already).
// Writes `stdin_text` to it (then closes it), reads both outputs until end of file and reaps it.
Captured capture(Child& child, const std::string& stdin_text, const CaptureLimits& limits);

}  // namespace podium::process
