// fork/exec of a rank's process. Everything the child needs is prepared before fork: in a
// multi-threaded parent the child may only make async-signal-safe calls until exec.

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "engine/worker/environment.h"
#include "engine/worker/process.h"

namespace podium::worker {

namespace {

struct ChildFailure {
  int step;
  int err;
};
constexpr const char* kSteps[] = {"setsid", "stdin",     "stdout", "stderr", "chdir",
                                  "exec",   "setgroups", "setgid", "setuid"};

[[noreturn]] void child_fail(int fd, int step) {
  ChildFailure f{step, errno};
  [[maybe_unused]] ssize_t n = ::write(fd, &f, sizeof f);
  ::_exit(127);
}

void close_inherited_fds(int keep) {
  // The agent's sockets and other ranks' pipes must not leak into the process: a leaked pipe
  // end would keep another rank's output open after that rank exited.
  bool done = true;
  if (keep > 3) done = ::syscall(SYS_close_range, 3U, static_cast<unsigned>(keep - 1), 0U) == 0;
  if (done && ::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0U, 0U) == 0) return;
  long max = ::sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
  for (int fd = 3; fd < max; ++fd) {
    if (fd != keep) ::close(fd);
  }
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

class PosixChild final : public ChildProcess {
 public:
  PosixChild(pid_t pid, int out_fd, int err_fd) : pid_(pid), fds_{out_fd, err_fd} {}
  ~PosixChild() override {
    close_output();
    if (!reaped_) {
      // Never leave a zombie or a running orphan behind a destroyed supervisor.
      ::kill(-pid_, SIGKILL);
      int status;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }

  pid_t pid() const override { return pid_; }

  std::optional<ExitStatus> try_wait() override {
    if (reaped_) return status_;
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid_, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r != pid_) return std::nullopt;
    reaped_ = true;
    if (WIFEXITED(status)) status_.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) status_.signal = WTERMSIG(status);
    return status_;
  }

  bool read_output(std::chrono::milliseconds timeout, std::vector<OutputChunk>& out) override {
    std::array<pollfd, 2> p{};
    nfds_t n = 0;
    std::array<int, 2> which{};
    for (int i = 0; i < 2; ++i) {
      if (fds_[i] < 0) continue;
      p[n] = pollfd{fds_[i], POLLIN, 0};
      which[n++] = i;
    }
    if (n == 0) return false;
    const int r = ::poll(p.data(), n, static_cast<int>(timeout.count()));
    if (r <= 0) return true;
    for (nfds_t k = 0; k < n; ++k) {
      if (p[k].revents == 0) continue;
      const int i = which[k];
      char buf[65536];
      const ssize_t got = ::read(fds_[i], buf, sizeof buf);
      if (got > 0) {
        out.push_back(OutputChunk{i == 0 ? Stream::out : Stream::err,
                                  std::string(buf, static_cast<size_t>(got))});
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        close_fd(fds_[i]);
      }
    }
    return fds_[0] >= 0 || fds_[1] >= 0;
  }

  void signal_group(int sig) override {
    // The group outlives its leader while descendants live; once it is empty, ESRCH is fine.
    ::kill(-pid_, sig);
    if (!reaped_) ::kill(pid_, sig);
  }

  void close_output() override {
    close_fd(fds_[0]);
    close_fd(fds_[1]);
  }

 private:
  pid_t pid_;
  std::array<int, 2> fds_;
  bool reaped_ = false;
  ExitStatus status_;
};

class PosixLauncher final : public ProcessLauncher {
 public:
  LaunchResult launch(const LaunchSpec& spec) override {
    LaunchResult result;
    if (spec.argv.empty()) {
      result.error = "the command is empty";
      return result;
    }
    // Resolved with the PATH the process will see, before fork (no allocation after it).
    const std::string program = resolve_executable(spec.argv[0], spec.env);
    std::vector<std::string> storage = spec.argv;
    storage.insert(storage.end(), spec.env.begin(), spec.env.end());
    std::vector<char*> argv;
    std::vector<char*> envp;
    for (size_t i = 0; i < spec.argv.size(); ++i) argv.push_back(storage[i].data());
    argv.push_back(nullptr);
    for (size_t i = spec.argv.size(); i < storage.size(); ++i) envp.push_back(storage[i].data());
    envp.push_back(nullptr);
    const std::string cwd = spec.cwd.string();
    const bool switch_account = spec.run_as.has_value();
    const std::vector<gid_t> groups = switch_account ? spec.run_as->groups : std::vector<gid_t>{};
    const uid_t uid = switch_account ? spec.run_as->uid : 0;
    const gid_t gid = switch_account ? spec.run_as->gid : 0;

    int out_pipe[2] = {-1, -1};
    int err_pipe[2] = {-1, -1};
    int report[2] = {-1, -1};
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const auto cleanup = [&] {
      for (int* fd :
           {&out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1], &report[0], &report[1]}) {
        close_fd(*fd);
      }
      if (null_fd >= 0) ::close(null_fd);
    };
    if (null_fd < 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
        ::pipe2(report, O_CLOEXEC) != 0) {
      result.error = std::string("cannot create pipes: ") + std::strerror(errno);
      cleanup();
      return result;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      result.error = std::string("fork: ") + std::strerror(errno);
      cleanup();
      return result;
    }
    if (pid == 0) {
      const int w = report[1];
      if (::setsid() < 0) child_fail(w, 0);
      // The agent blocks SIGTERM/SIGINT in its threads and ignores SIGPIPE; a fresh process
      // expects the defaults.
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      for (int s = 1; s < NSIG; ++s) ::sigaction(s, &dfl, nullptr);
      if (::dup2(null_fd, 0) < 0) child_fail(w, 1);
      if (::dup2(out_pipe[1], 1) < 0) child_fail(w, 2);
      if (::dup2(err_pipe[1], 2) < 0) child_fail(w, 3);
      if (switch_account) {
        // Groups first: once the uid is dropped the process may not change them any more.
        if (::setgroups(groups.size(), groups.data()) != 0) child_fail(w, 6);
        if (::setgid(gid) != 0) child_fail(w, 7);
        if (::setuid(uid) != 0) child_fail(w, 8);
      }
      if (::chdir(cwd.c_str()) != 0) child_fail(w, 4);
      close_inherited_fds(w);
      ::execve(program.c_str(), argv.data(), envp.data());
      child_fail(w, 5);
    }
    close_fd(out_pipe[1]);
    close_fd(err_pipe[1]);
    close_fd(report[1]);
    ::close(null_fd);
    ChildFailure failure{};
    ssize_t n;
    do {
      n = ::read(report[0], &failure, sizeof failure);
    } while (n < 0 && errno == EINTR);
    close_fd(report[0]);
    if (n == static_cast<ssize_t>(sizeof failure)) {
      int status;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      close_fd(out_pipe[0]);
      close_fd(err_pipe[0]);
      const std::string what = failure.step == 4   ? cwd
                               : failure.step >= 6 ? "to " + spec.run_as->name
                                                   : spec.argv[0];
      result.error =
          std::string(kSteps[failure.step]) + " " + what + ": " + std::strerror(failure.err);
      return result;
    }
    result.child = std::make_unique<PosixChild>(pid, out_pipe[0], err_pipe[0]);
    return result;
  }
};

}  // namespace

std::shared_ptr<ProcessLauncher> make_posix_launcher() {
  return std::make_shared<PosixLauncher>();
}

}  // namespace podium::worker
