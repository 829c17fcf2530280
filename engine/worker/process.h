#pragma once
// The seam between the rank supervisor and the operating system: starting a rank's process and
// reading, signalling and reaping it. posix_process.cpp is the real thing (engine/process: a
// new session, pipes); tests substitute fakes to check the supervisor's decisions without
// processes.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/process/child.h"
#include "engine/worker/run_as.h"

namespace podium::worker {

struct LaunchSpec {
  std::vector<std::string> argv;  // argv[0] is searched in the PATH of `env` when it has no '/'
  std::vector<std::string> env;   // the child's whole environment, KEY=VALUE
  std::filesystem::path cwd;
  // Another account to start the process as (the agent is root and --run-as named it): its
  // groups, group and user are set in the child before chdir and exec.
  std::optional<RunAs> run_as;
};

// The exit status, streams and output chunks of engine/process, which does the real work.
using process::ExitStatus;
using process::OutputChunk;
using process::Stream;

class ChildProcess {
 public:
  virtual ~ChildProcess() = default;
  virtual pid_t pid() const = 0;
  // Non-blocking: the exit status once the process ended (reaped), else nullopt.
  virtual std::optional<ExitStatus> try_wait() = 0;
  // Waits up to `timeout` for output and appends what could be read without blocking further.
  // Returns false once both streams reached end of file (nothing more will ever come).
  virtual bool read_output(std::chrono::milliseconds timeout, std::vector<OutputChunk>& out) = 0;
  // Sends `sig` to the process group the child leads (it and everything it started).
  virtual void signal_group(int sig) = 0;
  // Stops reading: closes the pipes (used when descendants keep them open after the exit).
  virtual void close_output() = 0;
};

struct LaunchResult {
  std::unique_ptr<ChildProcess> child;  // null when the process could not be started
  std::string error;                    // why, e.g. "exec /bin/nope: No such file or directory"
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Starts the process in a new session (own process group), stdin /dev/null, stdout and stderr
  // piped. Returns only once exec succeeded or failed.
  virtual LaunchResult launch(const LaunchSpec& spec) = 0;
};

std::shared_ptr<ProcessLauncher> make_posix_launcher();

}  // namespace podium::worker
