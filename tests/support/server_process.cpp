#include "tests/integration/support/server_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "tests/integration/support/spawn.h"

namespace podium::it {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kListeningLine = "podium-server listening on ";

// The port in "podium-server listening on http://HOST:PORT", 0 when the line is not there yet.
int find_port(const std::string& log) {
  auto at = log.find(kListeningLine);
  if (at == std::string::npos) return 0;
  auto eol = log.find('\n', at);
  if (eol == std::string::npos) return 0;  // the line is still being written
  std::string line = log.substr(at, eol - at);
  auto colon = line.rfind(':');
  if (colon == std::string::npos) return 0;
  try {
    return std::stoi(line.substr(colon + 1));
  } catch (const std::exception&) {
    return 0;
  }
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

ServerProcess::ServerProcess(ServerOptions options) : options_(std::move(options)) {
  own_dir_ = std::make_unique<TempDir>("podium-it-" + options_.name);
}

ServerProcess::~ServerProcess() {
  if (child_.pid() > 0) {
    const int status = terminate();
    if (status != 0 && status != -1 && !::testing::Test::HasFailure())
      ADD_FAILURE() << options_.name << " exited with status " << status << " on SIGTERM\n"
                    << log_tail(30);
  }
  if (::testing::Test::HasFailure()) {
    for (int g = 1; g <= generation_; ++g) {
      auto p = own_dir_->path() / (options_.name + "-" + std::to_string(g) + ".log");
      std::cerr << "---- last lines of " << options_.name << " (start " << g << ", " << p.string()
                << ") ----\n"
                << file_tail(p, 30) << "---- end of " << options_.name << " log ----\n";
    }
  }
  if (!options_.data_dir.empty() || options_.database_url.empty()) {
    // An embedded PostgreSQL that a failed test left running under our data dir.
    const fs::path cluster = data_dir() / "postgres";
    std::error_code ec;
    if (fs::exists(cluster / "postmaster.pid", ec)) {
      run_shell("runuser -u postgres -- " + (postgres_bin_dir() / "pg_ctl").string() +
                " stop -D '" + cluster.string() + "' -m immediate -w >/dev/null 2>&1 || " +
                (postgres_bin_dir() / "pg_ctl").string() + " stop -D '" + cluster.string() +
                "' -m immediate -w >/dev/null 2>&1");
    }
  }
}

fs::path ServerProcess::data_dir() const {
  return options_.data_dir.empty() ? own_dir_->path() / "data" : options_.data_dir;
}

std::string ServerProcess::url() const {
  // Over HTTPS the certificate names "localhost" (tests/e2e/tls_test.cpp makes it so).
  return tls_ ? "https://localhost:" + std::to_string(port_)
              : "http://127.0.0.1:" + std::to_string(port_);
}

void ServerProcess::start() {
  spawn();
  wait_ready();
}

void ServerProcess::start_together(const std::vector<ServerProcess*>& servers) {
  for (auto* s : servers) s->spawn();
  for (auto* s : servers) s->wait_ready();
}

void ServerProcess::spawn() {
  if (child_.pid() > 0) throw std::runtime_error(options_.name + " is already running");
  const fs::path bin = binary(options_.binary);
  if (!fs::exists(bin))
    throw std::runtime_error(bin.string() + " does not exist (set PODIUM_BIN_DIR to <build>/bin)");
  ++generation_;
  const fs::path log_path =
      own_dir_->path() / (options_.name + "-" + std::to_string(generation_) + ".log");
  port_ = 0;

  std::vector<std::string> args = {bin.string(), "--listen", "127.0.0.1:0"};
  if (!options_.database_url.empty()) {
    args.insert(args.end(), {"--database-url", options_.database_url});
  }
  args.insert(args.end(), {"--data-dir", data_dir().string()});
  if (!options_.admin_token.empty())
    args.insert(args.end(), {"--admin-token", options_.admin_token});
  for (const auto& s : options_.settings) args.insert(args.end(), {"--set", s});
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());

  child_.start(args, options_.env, log_path);
}

void ServerProcess::wait_ready() {
  if (child_.pid() <= 0) throw std::runtime_error(options_.name + " was not spawned");
  const auto deadline = Clock::now() + options_.ready_timeout;
  for (;;) {
    if (int port = find_port(child_.log()); port > 0) {
      port_ = port;
      tls_ = child_.log().find(std::string(kListeningLine) + "https://") != std::string::npos;
      return;
    }
    if (!child_.running()) {
      throw std::runtime_error(options_.name + " exited with status " +
                               std::to_string(child_.exit_status()) +
                               " before it was ready; log:\n" + log_tail(40));
    }
    if (Clock::now() > deadline) {
      kill();
      throw std::runtime_error(options_.name + " was not ready within " +
                               std::to_string(options_.ready_timeout.count()) + " ms; log:\n" +
                               log_tail(40));
    }
    std::this_thread::sleep_for(20ms);
  }
}

int ServerProcess::terminate() {
  return child_.terminate(options_.stop_timeout, options_.name);
}

int ServerProcess::kill() {
  return child_.kill();
}

bool ServerProcess::running() {
  return child_.running();
}

std::string ServerProcess::log() const {
  return child_.log();
}

std::string ServerProcess::log_tail(int lines) const {
  return child_.log_tail(lines);
}

int ServerProcess::count_log_lines(const std::string& text) const {
  std::istringstream in(log());
  std::string line;
  int n = 0;
  while (std::getline(in, line))
    if (line.find(text) != std::string::npos) ++n;
  return n;
}

std::vector<pid_t> processes_matching(const std::string& needle) {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (auto* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid == ::getpid()) continue;
    std::string cmdline = read_file(fs::path("/proc") / e->d_name / "cmdline");
    for (auto& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.find(needle) != std::string::npos) out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(d);
  return out;
}

}  // namespace podium::it
