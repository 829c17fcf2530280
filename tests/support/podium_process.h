#pragma once
// What every Podium binary a test starts has in common (podium-server, podium-worker): each start
// gets a log file of its own (<name>-1.log, <name>-2.log, ...), readiness is a line the binary
// prints, stopping is SIGTERM with a deadline (then SIGKILL), and when the test has failed, the
// last lines of every start's log are printed. ServerProcess and WorkerProcess are built on it;
// the process itself is a LoggedChild (tests/integration/support/spawn.h: own process group,
// PR_SET_PDEATHSIG, no PODIUM_* variables from the developer's shell).
//
//   PodiumProcess p({.binary = "podium-server", .name = "server"});
//   p.spawn(args, env);
//   std::string port = p.wait_for(find_port_text, "print \"podium-server listening on\"");

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/integration/support/env.h"
#include "tests/integration/support/spawn.h"

namespace podium::it {

struct ProcessOptions {
  std::string binary;  // under bin_dir()
  std::string name;    // in log file names and messages
  std::chrono::milliseconds ready_timeout;
  std::chrono::milliseconds stop_timeout;  // SIGTERM -> SIGKILL
  // The process's own directory is /tmp/<dir_prefix><name>-XXXXXX (tests/e2e/README.md tells
  // where to look after a failure).
  std::string dir_prefix = "podium-it-";
};

class PodiumProcess {
 public:
  explicit PodiumProcess(ProcessOptions options);
  ~PodiumProcess();  // finish()
  PodiumProcess(const PodiumProcess&) = delete;
  PodiumProcess& operator=(const PodiumProcess&) = delete;

  // The binary's path; throws std::runtime_error when it has not been built.
  std::filesystem::path executable() const;
  // Starts args (args[0]: executable()) with its stdout and stderr in the next log file;
  // throws when it is already running.
  void spawn(const std::vector<std::string>& args, const std::map<std::string, std::string>& env);
  // Polls this start's log until found(log) gives a non-empty answer, which it returns. Throws
  // std::runtime_error (with the log's tail) when the process exits first, or kills it and
  // throws when options.ready_timeout passes. `what` completes "... did not <what> within".
  std::string wait_for(const std::function<std::string(const std::string& log)>& found,
                       const std::string& what);
  // Time left of the ready_timeout that started with the last spawn().
  std::chrono::milliseconds ready_time_left() const;

  // SIGTERM and wait: the exit status (code, or 128+signal), -1 when not running. A process
  // still running after options.stop_timeout is a test failure and gets SIGKILL.
  int terminate();
  // SIGKILL and reap: 128+9, or the status when it had already exited.
  int kill();
  bool running();
  // At the end of a test: terminate() (a non-zero status is a test failure unless the test
  // already failed), then, when the test has failed, every start's log tail on stderr.
  // Idempotent.
  void finish();

  pid_t pid() const { return child_.pid(); }
  int exit_status() const { return child_.exit_status(); }
  const ProcessOptions& options() const { return options_; }
  const std::string& name() const { return options_.name; }
  // A directory of this process's own (its logs; the owner may put more there).
  const std::filesystem::path& dir() const { return own_dir_->path(); }
  const std::filesystem::path& log_path() const { return child_.log_path(); }
  std::string log() const;  // this start's log so far
  std::string log_tail(int lines) const;
  int starts() const { return generation_; }

 private:
  ProcessOptions options_;
  std::unique_ptr<TempDir> own_dir_;
  LoggedChild child_;
  int generation_ = 0;
  std::chrono::steady_clock::time_point ready_deadline_{};
  bool finished_ = false;
};

// The text after `marker` up to the end of its line in `log`; "" while the line is absent or
// still being written. ("podium-server listening on " -> "http://127.0.0.1:41234")
std::string text_after(const std::string& log, const std::string& marker);

// A free TCP port on 127.0.0.1 (bound once and released).
int free_port();

}  // namespace podium::it
