#pragma once
// The seam between EmbeddedPostgres's decisions and the operating system: running initdb and
// pg_ctl, and asking what a pid from a postmaster.pid file is. Tests substitute a fake to
// check the decisions (what runs, with which arguments, when a pid file is stale).

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace podium::db {

// An account to run a child as (PostgreSQL refuses to run as root).
struct RunAs {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
};

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0]: absolute path of the program (no PATH search)
  std::vector<std::string> env;   // the child's whole environment, KEY=VALUE
  std::filesystem::path output;   // stdout and stderr appended here; empty: /dev/null
  std::filesystem::path working_dir = "/";
  std::optional<RunAs> run_as;  // setgroups/setgid/setuid in the child before chdir and exec
};

struct ProcessOutcome {
  bool started = false;  // false: fork or exec failed (see error)
  bool timed_out = false;
  int exit_code = -1;  // when it exited normally
  int signal = 0;      // when a signal ended it
  std::string error;
  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  std::string describe() const;
};

struct ProcessInfo {
  std::string name;           // /proc/<pid>/comm, e.g. "postgres"
  std::filesystem::path cwd;  // empty when not readable
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Runs to completion. Past the timeout the child's process group is killed (SIGKILL).
  virtual ProcessOutcome run(const ProcessSpec& spec, std::chrono::milliseconds timeout) = 0;
  // What runs as `pid` now; nullopt when nothing does (zombies count as nothing).
  virtual std::optional<ProcessInfo> inspect(pid_t pid) = 0;
};

// engine/process, never a shell: arguments reach the program exactly as given.
std::shared_ptr<ProcessLauncher> make_posix_process_launcher();

}  // namespace podium::db
