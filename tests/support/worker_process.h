#pragma once
// A real podium-worker process for the e2e tests (the counterpart of ServerProcess).
//
//   podium::it::WorkerProcess w({.server_url = podium.url(), .token = token, .cluster = "c1",
//                                 .slice = 0, .host = 1, .workdir = dir / "w01"});
//   w.start();                       // spawn + wait for "podium-worker registered as wkr_..."
//   w.worker_id();                   // the id it printed
//   w.rank_lines(attempt_id, 1);     // <workdir>/logs/<attempt>/rank-1.log, line by line
//   w.kill();                        // SIGKILL (a lost host); start() again restarts it
//   w.terminate();                   // SIGTERM and wait: the agent stops its ranks, exits 0
//
// The process is a PodiumProcess (tests/support/podium_process.h): a log file per start, their
// last lines printed when the test has failed, SIGKILL when the test binary dies, no PODIUM_*
// variables from the test's environment; Options::env is added (the rank processes the agent
// starts inherit it, which the e2e fixture uses to find them).

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/podium_process.h"

namespace podium::it {

struct WorkerOptions {
  std::string server_url;
  std::string token;
  std::string cluster;
  int slice = 0;
  int host = 0;
  std::filesystem::path workdir;  // --workdir (created when missing)
  std::string address = "127.0.0.1";
  std::map<std::string, std::string> env;
  std::vector<std::string> extra_args;
  std::string run_as;                    // --run-as; default: the account running the tests
  std::string binary = "podium-worker";  // under bin_dir()
  std::string name;                      // default "worker-s<slice>h<host>"
  std::chrono::milliseconds ready_timeout{60000};
  std::chrono::milliseconds stop_timeout{40000};  // SIGTERM -> SIGKILL
};

class WorkerProcess {
 public:
  explicit WorkerProcess(WorkerOptions options);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // spawn() + wait_registered(). Throws std::runtime_error (with the log's tail) on failure.
  void start();
  void spawn();
  // Waits for "podium-worker registered as <id>" in this start's log; throws when the process
  // exits first or options.ready_timeout passes.
  void wait_registered();

  // SIGTERM and wait; the exit status (code, or 128+signal), -1 when not running. SIGKILL (and a
  // test failure) when it does not exit within options.stop_timeout.
  int terminate();
  // SIGKILL and reap: 128+9 (or the status if it had already exited).
  int kill();
  bool running();

  // Where the agent should reach the server (takes effect at the next start()).
  void set_server_url(std::string url) { options_.server_url = std::move(url); }

  pid_t pid() const { return process_.pid(); }
  const std::string& worker_id() const { return worker_id_; }
  const WorkerOptions& options() const { return options_; }
  const std::string& name() const { return options_.name; }
  int slice() const { return options_.slice; }
  int host() const { return options_.host; }
  int exit_status() const { return process_.exit_status(); }

  const std::filesystem::path& log_path() const { return process_.log_path(); }
  std::string log() const;
  std::string log_tail(int lines = 30) const;

  // <workdir>/logs/<attempt_id>/rank-<rank>.log: what the agent read from that rank's process.
  std::filesystem::path rank_log_path(const std::string& attempt_id, int rank) const;
  // Its lines without the '\n'; empty when the file does not exist.
  std::vector<std::string> rank_lines(const std::string& attempt_id, int rank) const;

 private:
  WorkerOptions options_;
  PodiumProcess process_;
  std::string worker_id_;
};

// The worker id in a "podium-worker registered as <id> (...)" line of `log`, "" when absent.
std::string find_registered_id(const std::string& log);

}  // namespace podium::it
