#include "backend/db/process_launcher.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

namespace podium::db {

std::string ProcessOutcome::describe() const {
  if (!started) return "could not start: " + error;
  if (timed_out) return "did not finish in time (killed)";
  if (signal != 0) return std::string("killed by signal ") + strsignal(signal);
  return "exited with status " + std::to_string(exit_code);
}

namespace {

// Everything the child needs, prepared before fork: after fork in a multi-threaded process
// only async-signal-safe calls are allowed (no allocation).
struct Prepared {
  std::vector<std::string> storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

// The child reports a failed setup step through the CLOEXEC pipe: which step and errno.
struct ChildFailure {
  int step;
  int err;
};
constexpr const char* kSteps[] = {"setpgid",   "stdin",  "output", "chdir",
                                  "setgroups", "setgid", "setuid", "exec"};

[[noreturn]] void child_fail(int fd, int step) {
  ChildFailure f{step, errno};
  [[maybe_unused]] ssize_t n = ::write(fd, &f, sizeof f);
  ::_exit(127);
}

void close_inherited_fds(int keep) {
  // The server's sockets (its HTTP listener among them) must not leak into PostgreSQL, which
  // would keep the port bound after podium-server exits. `keep` is the CLOEXEC report pipe.
  bool done = true;
  if (keep > 3) done = ::syscall(SYS_close_range, 3U, static_cast<unsigned>(keep - 1), 0U) == 0;
  if (done && ::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0U, 0U) == 0) return;
  long max = ::sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
  for (int fd = 3; fd < max; ++fd) {
    if (fd != keep) ::close(fd);
  }
}

class PosixProcessLauncher final : public ProcessLauncher {
 public:
  ProcessOutcome run(const ProcessSpec& spec, std::chrono::milliseconds timeout) override {
    ProcessOutcome out;
    if (spec.argv.empty()) {
      out.error = "empty command";
      return out;
    }
    Prepared p;
    p.storage.reserve(spec.argv.size() + spec.env.size());
    for (const auto& a : spec.argv) p.storage.push_back(a);
    for (const auto& e : spec.env) p.storage.push_back(e);
    for (size_t i = 0; i < spec.argv.size(); ++i) p.argv.push_back(p.storage[i].data());
    p.argv.push_back(nullptr);
    for (size_t i = 0; i < spec.env.size(); ++i) {
      p.envp.push_back(p.storage[spec.argv.size() + i].data());
    }
    p.envp.push_back(nullptr);
    const std::string output = spec.output.empty() ? "/dev/null" : spec.output.string();
    const std::string workdir = spec.working_dir.string();

    int out_fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (out_fd < 0) {
      out.error = "cannot open " + output + ": " + std::strerror(errno);
      return out;
    }
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int report[2];
    if (null_fd < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
      out.error = std::string("pipe: ") + std::strerror(errno);
      ::close(out_fd);
      if (null_fd >= 0) ::close(null_fd);
      return out;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      out.error = std::string("fork: ") + std::strerror(errno);
      ::close(out_fd);
      ::close(null_fd);
      ::close(report[0]);
      ::close(report[1]);
      return out;
    }
    if (pid == 0) {
      const int w = report[1];
      // Own process group, so a timeout can kill whatever the program started too.
      if (::setpgid(0, 0) != 0) child_fail(w, 0);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      for (int s = 1; s < NSIG; ++s) ::sigaction(s, &dfl, nullptr);
      if (::dup2(null_fd, 0) < 0) child_fail(w, 1);
      if (::dup2(out_fd, 1) < 0 || ::dup2(out_fd, 2) < 0) child_fail(w, 2);
      if (::chdir(workdir.c_str()) != 0) child_fail(w, 3);
      if (spec.run_as) {
        const gid_t gid = spec.run_as->gid;
        if (::setgroups(1, &gid) != 0) child_fail(w, 4);
        if (::setgid(gid) != 0) child_fail(w, 5);
        if (::setuid(spec.run_as->uid) != 0) child_fail(w, 6);
      }
      close_inherited_fds(w);
      ::execve(p.argv[0], p.argv.data(), p.envp.data());
      child_fail(w, 7);
    }
    ::close(out_fd);
    ::close(null_fd);
    ::close(report[1]);
    ChildFailure failure{};
    ssize_t n;
    do {
      n = ::read(report[0], &failure, sizeof failure);
    } while (n < 0 && errno == EINTR);
    ::close(report[0]);

    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    for (;;) {
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) break;
      if (r < 0 && errno != EINTR) {
        out.error = std::string("waitpid: ") + std::strerror(errno);
        return out;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        out.started = true;
        out.timed_out = true;
        return out;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (n == static_cast<ssize_t>(sizeof failure)) {
      out.error = std::string(kSteps[failure.step]) + " " + spec.argv[0] + ": " +
                  std::strerror(failure.err);
      return out;
    }
    out.started = true;
    if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
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
