#include "engine/process/capture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace podium::process {

namespace {

using Clock = std::chrono::steady_clock;

long ms_until(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
}

// One round of I/O: feeds stdin while it accepts, reads what the outputs have. Returns false
// when poll failed for good.
bool exchange(Child& child, const std::string& stdin_text, size_t& written, int wait_ms, size_t cap,
              Captured& result, bool& out_open, bool& err_open) {
  pollfd fds[3];
  int n = 0;
  if (out_open) fds[n++] = {child.stdout_fd(), POLLIN, 0};
  if (err_open) fds[n++] = {child.stderr_fd(), POLLIN, 0};
  const int in_fd = child.stdin_fd();
  if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
  if (::poll(fds, static_cast<nfds_t>(n), wait_ms) < 0 && errno != EINTR) return false;
  for (int i = 0; i < n; ++i) {
    if (!fds[i].revents) continue;
    if (fds[i].fd == in_fd) {
      const ssize_t w = ::write(in_fd, stdin_text.data() + written, stdin_text.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EAGAIN) written = stdin_text.size();  // the reader is gone
      if (written >= stdin_text.size()) child.close_stdin();
      continue;
    }
    const bool is_out = fds[i].fd == child.stdout_fd();
    char buf[8192];
    const ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
    std::string& sink = is_out ? result.out : result.err;
    if (r > 0) {
      if (sink.size() < cap) {
        sink.append(buf, std::min(static_cast<size_t>(r), cap - sink.size()));
      }
    } else if (r == 0 || errno != EAGAIN) {
      (is_out ? out_open : err_open) = false;
    }
  }
  return true;
}

}  // namespace

Captured capture(Child& child, const std::string& stdin_text, const CaptureLimits& limits) {
  Captured result;
  size_t written = 0;
  if (child.stdin_fd() >= 0) {
    if (stdin_text.empty()) {
      child.close_stdin();
    } else {
      ::fcntl(child.stdin_fd(), F_SETFL, O_NONBLOCK);
    }
  }
  bool out_open = child.stdout_fd() >= 0;
  bool err_open = child.stderr_fd() >= 0;
  const auto deadline = Clock::now() + limits.timeout;
  const auto kill = [&] {
    child.signal_group(SIGKILL);
    result.timed_out = true;
  };
  while (out_open || err_open) {
    const long left = ms_until(deadline);
    if (left <= 0 && !result.timed_out) kill();
    // A descendant that escaped the kill (another group) may hold the pipes: stop reading.
    if (result.timed_out && left < -limits.drain_after_kill.count()) break;
    const int wait_ms = result.timed_out ? 1000 : static_cast<int>(std::clamp(left, 1L, 1000L));
    if (!exchange(child, stdin_text, written, wait_ms, limits.max_output_bytes, result, out_open,
                  err_open)) {
      break;
    }
  }
  child.close_stdin();
  child.close_output();
  // Both outputs closed, but the process may still run (it closed them itself).
  if (!result.timed_out) {
    const long left = ms_until(deadline);
    if (auto s = child.wait_for(std::chrono::milliseconds(std::max(0L, left)))) {
      result.status = *s;
      return result;
    }
    kill();
  }
  result.status = child.wait();
  return result;
}

}  // namespace podium::process
