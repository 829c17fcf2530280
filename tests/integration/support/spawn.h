#pragma once
// A Podium binary run by a test (through engine/process): its own process group, stdin /dev/null,
// stdout and stderr appended to a log file, killed with SIGKILL when the test binary dies
// (PR_SET_PDEATHSIG), and an environment without the developer's PODIUM_* variables (only those the
// test sets), so that a shell cannot change what a test runs. ServerProcess and the e2e
// WorkerProcess are built on it.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/process/child.h"

namespace podium::it {

// args[0] is the executable's path. Throws std::runtime_error when it cannot be started (the log
// cannot be created, fork or exec fails: engine/process says which). The caller reaps the pid.
pid_t spawn_logged(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env,
                   const std::filesystem::path& log_path);

// wait() status -> exit code, or 128 + signal; -1 otherwise.
int decode_wait_status(int status);

class LoggedChild {
 public:
  LoggedChild() = default;
  ~LoggedChild();  // a child still running gets SIGKILL and is reaped
  LoggedChild(const LoggedChild&) = delete;
  LoggedChild& operator=(const LoggedChild&) = delete;

  void start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
             const std::filesystem::path& log_path);
  // Without blocking: false once it exited (its status is then exit_status()).
  bool running();
  // Waits up to `timeout`: the exit status, -1 when there was no child, -2 when still running.
  int reap(std::chrono::milliseconds timeout);
  void signal(int sig) const;
  // SIGKILL and reap: 128 + 9, or the status when it had already exited.
  int kill();
  // SIGTERM and reap: the exit status, -1 when not running. A child still running after
  // `timeout` is a test failure (named `name`, with its log's tail) and gets SIGKILL.
  int terminate(std::chrono::milliseconds timeout, const std::string& name);

  pid_t pid() const;  // -1 when not running
  int exit_status() const { return exit_status_; }
  const std::filesystem::path& log_path() const { return log_path_; }
  std::string log() const;  // the whole log so far
  std::string log_tail(int lines) const;

 private:
  std::filesystem::path log_path_;
  std::optional<process::Child> child_;  // until reaped
  int exit_status_ = -1;
};

}  // namespace podium::it
