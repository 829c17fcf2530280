#pragma once
// A real podium-server process for integration and e2e tests.
//
//   podium::it::ServerProcess server({.database_url = db.url(),
//                                     .settings = {"limits.read_timeout_seconds=2"}});
//   server.start();                  // spawn, wait for "podium-server listening on http://...",
//                                    // then for GET /readyz to answer 200
//   HttpClient client(server.url(), server.admin_token());
//   ...
//   server.terminate();              // SIGTERM, waits; the destructor does it too (SIGKILL
//                                    // after a deadline)
//
// The process is a PodiumProcess (tests/support/podium_process.h): a log file per start, their
// last lines printed when the test has failed, SIGKILL when the test binary dies, no PODIUM_*
// variables from the test's environment (only those in Options::env).
//
// Two servers on one database: construct two ServerProcess with the same database_url and call
// spawn() on both before wait_ready() on either (start_together() does that).

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/support/env.h"
#include "tests/support/podium_process.h"

namespace podium::it {

inline constexpr const char* kDefaultAdminToken = "pdm_integration_admin_token_0123456789abcdef";

struct ServerOptions {
  // --database-url; empty: the embedded PostgreSQL in data_dir.
  std::string database_url;
  // --data-dir; empty: a directory of the ServerProcess's own.
  std::filesystem::path data_dir;
  std::string admin_token = kDefaultAdminToken;
  // --set key=value each (e.g. "limits.read_timeout_seconds=2").
  std::vector<std::string> settings;
  std::vector<std::string> extra_args;
  // Environment for the child besides PATH, HOME, LANG and friends (PODIUM_* included only
  // when given here).
  std::map<std::string, std::string> env;
  std::string binary = "podium-server";  // under bin_dir()
  std::string name = "server";           // in log file names and messages
  std::chrono::milliseconds ready_timeout{90000};
  std::chrono::milliseconds stop_timeout{20000};  // SIGTERM -> SIGKILL
};

class ServerProcess {
 public:
  explicit ServerProcess(ServerOptions options);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // spawn() + wait_ready(). Throws std::runtime_error (with the log's tail) on failure.
  void start();
  // Starts the process; returns at once.
  void spawn();
  // Waits for the "listening" line (port), then (over http) for GET /readyz to answer 200, both
  // within options.ready_timeout; throws when the process exits first or the deadline passes.
  void wait_ready();
  // Spawns all, then waits for all: servers racing on one database.
  static void start_together(const std::vector<ServerProcess*>& servers);

  // SIGTERM and wait; returns the exit status (code, or 128+signal), -1 when not running.
  // SIGKILL when it does not exit within options.stop_timeout (then returns 128+9).
  int terminate();
  // SIGKILL and reap; returns 128+9 (or the status if it had already exited).
  int kill();
  bool running();

  pid_t pid() const { return process_.pid(); }
  int port() const { return port_; }
  std::string url() const;  // http://127.0.0.1:PORT
  const std::string& admin_token() const { return options_.admin_token; }
  const ServerOptions& options() const { return options_; }
  const std::filesystem::path& log_path() const { return process_.log_path(); }
  std::string log() const;  // the whole log so far
  std::string log_tail(int lines = 40) const;
  std::filesystem::path data_dir() const;
  // Lines of this process's log mentioning text (e.g. "request rejected").
  int count_log_lines(const std::string& text) const;

 private:
  void wait_readyz();

  ServerOptions options_;
  PodiumProcess process_;
  int port_ = 0;
  bool tls_ = false;  // the server said it listens on https://
};

}  // namespace podium::it
