#include "tests/support/podium_process.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iostream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

namespace podium::it {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string text_after(const std::string& log, const std::string& marker) {
  const auto at = log.find(marker);
  if (at == std::string::npos) return "";
  const auto start = at + marker.size();
  const auto eol = log.find('\n', start);
  if (eol == std::string::npos) return "";  // the line is still being written
  return log.substr(start, eol - start);
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("bind/getsockname on 127.0.0.1:0 failed");
  }
  const int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

PodiumProcess::PodiumProcess(ProcessOptions options)
    : options_(std::move(options)),
      own_dir_(std::make_unique<TempDir>(options_.dir_prefix + options_.name)) {}

PodiumProcess::~PodiumProcess() {
  finish();
}

void PodiumProcess::finish() {
  if (finished_) return;
  finished_ = true;
  if (child_.pid() > 0) {
    const int status = terminate();
    if (status != 0 && status != -1 && !::testing::Test::HasFailure())
      ADD_FAILURE() << options_.name << " exited with status " << status << " on SIGTERM\n"
                    << log_tail(30);
  }
  if (!::testing::Test::HasFailure()) return;
  for (int g = 1; g <= generation_; ++g) {
    const fs::path p = dir() / (options_.name + "-" + std::to_string(g) + ".log");
    std::cerr << "---- last lines of " << options_.name << " (start " << g << ", " << p.string()
              << ") ----\n"
              << file_tail(p, 30) << "---- end of " << options_.name << " log ----\n";
  }
}

fs::path PodiumProcess::executable() const {
  const fs::path bin = binary(options_.binary);
  if (!fs::exists(bin))
    throw std::runtime_error(bin.string() + " does not exist (set PODIUM_BIN_DIR to <build>/bin)");
  return bin;
}

void PodiumProcess::spawn(const std::vector<std::string>& args,
                          const std::map<std::string, std::string>& env) {
  if (child_.pid() > 0) throw std::runtime_error(options_.name + " is already running");
  ++generation_;
  finished_ = false;
  child_.start(args, env, dir() / (options_.name + "-" + std::to_string(generation_) + ".log"));
  ready_deadline_ = Clock::now() + options_.ready_timeout;
}

std::chrono::milliseconds PodiumProcess::ready_time_left() const {
  return std::max(
      0ms, std::chrono::duration_cast<std::chrono::milliseconds>(ready_deadline_ - Clock::now()));
}

std::string PodiumProcess::wait_for(const std::function<std::string(const std::string& log)>& found,
                                    const std::string& what) {
  if (child_.pid() <= 0) throw std::runtime_error(options_.name + " was not spawned");
  for (;;) {
    if (std::string answer = found(child_.log()); !answer.empty()) return answer;
    if (!child_.running()) {
      throw std::runtime_error(options_.name + " exited with status " +
                               std::to_string(child_.exit_status()) + " and did not " + what +
                               "; log:\n" + log_tail(40));
    }
    if (Clock::now() > ready_deadline_) {
      kill();
      throw std::runtime_error(options_.name + " did not " + what + " within " +
                               std::to_string(options_.ready_timeout.count()) + " ms; log:\n" +
                               log_tail(40));
    }
    std::this_thread::sleep_for(20ms);
  }
}

int PodiumProcess::terminate() {
  return child_.terminate(options_.stop_timeout, options_.name);
}

int PodiumProcess::kill() {
  return child_.kill();
}

bool PodiumProcess::running() {
  return child_.running();
}

std::string PodiumProcess::log() const {
  return child_.log();
}

std::string PodiumProcess::log_tail(int lines) const {
  return child_.log_tail(lines);
}

}  // namespace podium::it
