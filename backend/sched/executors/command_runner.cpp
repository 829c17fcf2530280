#include "backend/sched/executors/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace podium::sched {

namespace {

class PosixCommandRunner final : public CommandRunner {
 public:
  CommandResult run(const CommandSpec& spec) override {
    CommandResult result;
    if (spec.argv.empty()) {
      result.err = "no command";
      return result;
    }
    int in_pipe[2], out_pipe[2], err_pipe[2];
    if (pipe2(in_pipe, O_CLOEXEC) != 0) {
      result.err = std::strerror(errno);
      return result;
    }
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
      result.err = std::strerror(errno);
      close(in_pipe[0]);
      close(in_pipe[1]);
      return result;
    }
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = spec.argv;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    const pid_t pid = fork();
    if (pid < 0) {
      result.err = std::strerror(errno);
      for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
        close(fd);
      return result;
    }
    if (pid == 0) {
      setpgid(0, 0);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      signal(SIGPIPE, SIG_DFL);
      dup2(in_pipe[0], 0);
      dup2(out_pipe[1], 1);
      dup2(err_pipe[1], 2);
      // execvpe searches the PATH of envp's environment only through the parent's PATH; set it.
      auto path = spec.env.find("PATH");
      if (path != spec.env.end()) setenv("PATH", path->second.c_str(), 1);
      execvpe(argv[0], argv.data(), envp.data());
      const char* msg = "cannot execute ";
      (void)!write(2, msg, std::strlen(msg));
      (void)!write(2, argv[0], std::strlen(argv[0]));
      _exit(127);
    }
    setpgid(pid, pid);
    close(in_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    result.started = true;
    fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
    size_t written = 0;
    int in_fd = in_pipe[1];
    if (spec.stdin_text.empty()) {
      close(in_fd);
      in_fd = -1;
    }
    int out_fd = out_pipe[0], err_fd = err_pipe[0];
    const auto deadline = std::chrono::steady_clock::now() + spec.timeout;
    bool killed = false;
    while (out_fd >= 0 || err_fd >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 && !killed) {
        kill(-pid, SIGKILL);
        result.timed_out = true;
        killed = true;
      }
      pollfd fds[3];
      int n = 0;
      if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
      if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
      if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
      const int wait_ms =
          killed ? 1000 : static_cast<int>(std::max<long>(1, std::min<long>(left.count(), 1000)));
      if (poll(fds, n, wait_ms) < 0 && errno != EINTR) break;
      if (killed && left.count() < -2000) break;  // a grandchild holds the pipes: stop reading
      for (int i = 0; i < n; ++i) {
        if (!fds[i].revents) continue;
        if (fds[i].fd == in_fd) {
          const ssize_t w =
              write(in_fd, spec.stdin_text.data() + written, spec.stdin_text.size() - written);
          if (w > 0) written += static_cast<size_t>(w);
          if (w < 0 && errno != EAGAIN) written = spec.stdin_text.size();
          if (written >= spec.stdin_text.size()) {
            close(in_fd);
            in_fd = -1;
          }
          continue;
        }
        char buf[8192];
        const ssize_t r = read(fds[i].fd, buf, sizeof buf);
        std::string& sink = fds[i].fd == out_fd ? result.out : result.err;
        if (r > 0) {
          if (sink.size() < spec.max_output_bytes)
            sink.append(buf, std::min(static_cast<size_t>(r), spec.max_output_bytes - sink.size()));
        } else if (r == 0 || errno != EAGAIN) {
          if (fds[i].fd == out_fd) {
            close(out_fd);
            out_fd = -1;
          } else {
            close(err_fd);
            err_fd = -1;
          }
        }
      }
    }
    for (int fd : {in_fd, out_fd, err_fd})
      if (fd >= 0) close(fd);
    int status = 0;
    for (;;) {
      const pid_t w = waitpid(pid, &status, killed ? 0 : WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) break;
      if (w == 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
          kill(-pid, SIGKILL);
          result.timed_out = true;
          killed = true;
        } else {
          usleep(10000);
        }
      }
    }
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    return result;
  }
};

}  // namespace

std::string CommandResult::describe(const std::string& program) const {
  std::string what;
  if (!started)
    what = "could not start: " + err;
  else if (timed_out)
    what = "timed out";
  else if (signal)
    what = "killed by signal " + std::to_string(signal);
  else
    what = "exit " + std::to_string(exit_code);
  std::string detail = err.empty() ? out : err;
  while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' ')) detail.pop_back();
  if (detail.size() > 500) detail = detail.substr(0, 500) + "...";
  return program + ": " + what + (detail.empty() || !started ? "" : ": " + detail);
}

std::shared_ptr<CommandRunner> make_posix_command_runner() {
  return std::make_shared<PosixCommandRunner>();
}

}  // namespace podium::sched
