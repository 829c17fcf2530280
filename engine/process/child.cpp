#include "engine/process/child.h"

#include "engine/process/fd.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <thread>
#include <utility>

namespace podium::process {

int ExitStatus::shell_code() const {
  if (exit_code) return *exit_code;
  if (signal) return 128 + *signal;
  return -1;
}

using detail::close_fd;

namespace {

ExitStatus decode(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) s.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) s.signal = WTERMSIG(status);
  return s;
}

}  // namespace

Child::Child(pid_t pid, bool leads_group, int in_fd, int out_fd, int err_fd)
    : pid_(pid), leads_group_(leads_group), fds_{in_fd, out_fd, err_fd} {}

Child::Child(Child&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      leads_group_(other.leads_group_),
      reaped_(other.reaped_),
      status_(other.status_),
      fds_{std::exchange(other.fds_[0], -1), std::exchange(other.fds_[1], -1),
           std::exchange(other.fds_[2], -1)} {}

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    Child gone(std::move(*this));
    pid_ = std::exchange(other.pid_, -1);
    leads_group_ = other.leads_group_;
    reaped_ = other.reaped_;
    status_ = other.status_;
    for (int i = 0; i < 3; ++i) fds_[i] = std::exchange(other.fds_[i], -1);
  }
  return *this;
}

Child::~Child() {
  close_all();
  if (pid_ > 0 && !reaped_) {
    if (leads_group_) ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    wait();
  }
}

std::optional<ExitStatus> Child::try_wait() {
  if (reaped_) return status_;
  if (pid_ <= 0) return std::nullopt;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    status_ = decode(status);
  } else if (r < 0 && errno == ECHILD) {
    status_ = ExitStatus{};  // reaped elsewhere (a SIGCHLD handler): nothing to report
  } else {
    return std::nullopt;
  }
  reaped_ = true;
  return status_;
}

std::optional<ExitStatus> Child::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto s = try_wait()) return s;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

ExitStatus Child::wait() {
  if (reaped_ || pid_ <= 0) return status_;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  status_ = r == pid_ ? decode(status) : ExitStatus{};
  reaped_ = true;
  return status_;
}

void Child::signal(int sig) const {
  if (pid_ > 0 && !reaped_) ::kill(pid_, sig);
}

void Child::signal_group(int sig) const {
  if (pid_ <= 0) return;
  // Once the group is empty, ESRCH is fine.
  if (leads_group_) ::kill(-pid_, sig);
  signal(sig);
}

void Child::close_stdin() {
  close_fd(fds_[0]);
}

bool Child::read_output(std::chrono::milliseconds timeout, std::vector<OutputChunk>& out) {
  std::array<pollfd, 2> p{};
  std::array<int, 2> which{};
  nfds_t n = 0;
  for (int i = 1; i <= 2; ++i) {
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
      out.push_back(OutputChunk{i == 1 ? Stream::out : Stream::err,
                                std::string(buf, static_cast<size_t>(got))});
    } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
      close_fd(fds_[i]);
    }
  }
  return fds_[1] >= 0 || fds_[2] >= 0;
}

void Child::close_output() {
  close_fd(fds_[1]);
  close_fd(fds_[2]);
}

pid_t Child::release() {
  close_all();
  reaped_ = true;
  return std::exchange(pid_, -1);
}

void Child::close_all() {
  for (int& fd : fds_) close_fd(fd);
}

}  // namespace podium::process
