#include "backend/db/process_launcher.h"

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "engine/process/spawn.h"

namespace podium::db {

std::string ProcessOutcome::describe() const {
  if (!started) return "could not start: " + error;
  if (timed_out) return "did not finish in time (killed)";
  if (signal != 0) return std::string("killed by signal ") + strsignal(signal);
  return "exited with status " + std::to_string(exit_code);
}

namespace {

class PosixProcessLauncher final : public ProcessLauncher {
 public:
  ProcessOutcome run(const ProcessSpec& spec, std::chrono::milliseconds timeout) override {
    ProcessOutcome out;
    if (spec.argv.empty()) {
      out.error = "empty command";
      return out;
    }
    process::Spec p;
    p.argv = spec.argv;
    p.env = spec.env;
    p.cwd = spec.working_dir;
    // Own process group, so that a timeout kills whatever the program started too.
    p.group = process::Group::own_group;
    if (spec.output.empty()) {
      p.out = p.err = process::Stdio::null;
    } else {
      p.out = p.err = process::Stdio::file;
      p.output_file = spec.output;
      p.output_mode = 0640;
    }
    if (spec.run_as) {
      const auto& a = *spec.run_as;
      p.account = process::Account{a.name, a.uid, a.gid, {a.gid}};
    }
    auto spawned = process::spawn(p);
    if (!spawned.child) {
      out.error = spawned.error;
      return out;
    }
    out.started = true;
    auto status = spawned.child->wait_for(timeout);
    if (!status) {
      spawned.child->signal_group(SIGKILL);
      spawned.child->wait();
      out.timed_out = true;
      return out;
    }
    out.exit_code = status->exit_code.value_or(-1);
    out.signal = status->signal.value_or(0);
    return out;
  }

  std::optional<ProcessInfo> inspect(pid_t pid) override {
    if (pid <= 0) return std::nullopt;
    if (::kill(pid, 0) != 0 && errno == ESRCH) return std::nullopt;
    const std::filesystem::path proc = "/proc/" + std::to_string(pid);
    std::ifstream stat(proc / "stat");
    std::string line;
    if (!stat || !std::getline(stat, line)) return std::nullopt;
    // "pid (comm) S ...": the state letter follows the last ')'. Zombies and dead tasks are
    // gone for our purposes: they hold no data directory.
    const size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) return std::nullopt;
    const char state = line[close + 2];
    if (state == 'Z' || state == 'X' || state == 'x') return std::nullopt;
    ProcessInfo info;
    std::ifstream comm(proc / "comm");
    std::getline(comm, info.name);
    std::error_code ec;
    info.cwd = std::filesystem::read_symlink(proc / "cwd", ec);
    if (ec) info.cwd.clear();
    return info;
  }
};

}  // namespace

std::shared_ptr<ProcessLauncher> make_posix_process_launcher() {
  return std::make_shared<PosixProcessLauncher>();
}

}  // namespace podium::db
