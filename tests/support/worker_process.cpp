#include "tests/e2e/support/worker_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
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

namespace podium::e2e {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kRegisteredLine = "podium-worker registered as ";

std::string current_account() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw != nullptr ? std::string(pw->pw_name) : std::to_string(::geteuid());
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Fields of /proc/<pid>/stat after the command name: state, ppid, pgrp. false when unreadable.
bool read_stat(pid_t pid, char* state, pid_t* ppid, pid_t* pgrp, std::string* comm = nullptr) {
  const std::string stat = read_all(fs::path("/proc") / std::to_string(pid) / "stat");
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= stat.size())
    return false;
  if (comm != nullptr) *comm = stat.substr(open + 1, close - open - 1);
  std::istringstream rest(stat.substr(close + 2));
  long pp = 0;
  long pg = 0;
  if (!(rest >> *state >> pp >> pg)) return false;
  *ppid = static_cast<pid_t>(pp);
  *pgrp = static_cast<pid_t>(pg);
  return true;
}

std::vector<pid_t> all_pids() {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (auto* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(d);
  return out;
}

}  // namespace

std::string find_registered_id(const std::string& log) {
  const auto at = log.find(kRegisteredLine);
  if (at == std::string::npos) return "";
  const auto start = at + std::strlen(kRegisteredLine);
  const auto eol = log.find('\n', start);
  if (eol == std::string::npos) return "";  // still being written
  std::string rest = log.substr(start, eol - start);
  const auto space = rest.find(' ');
  return space == std::string::npos ? rest : rest.substr(0, space);
}

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  char state = '?';
  pid_t ppid = 0;
  pid_t pgrp = 0;
  if (!read_stat(pid, &state, &ppid, &pgrp)) return ::kill(pid, 0) == 0;
  return state != 'Z' && state != 'X';
}

std::vector<pid_t> process_group_members(pid_t pgid) {
  std::vector<pid_t> out;
  if (pgid <= 0) return out;
  for (pid_t pid : all_pids()) {
    char state = '?';
    pid_t ppid = 0;
    pid_t pgrp = 0;
    if (!read_stat(pid, &state, &ppid, &pgrp)) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') out.push_back(pid);
  }
  return out;
}

std::vector<std::pair<pid_t, std::string>> processes_with_env_key(const std::string& key) {
  std::vector<std::pair<pid_t, std::string>> out;
  const std::string prefix = key + "=";
  for (pid_t pid : all_pids()) {
    if (pid == ::getpid()) continue;
    const std::string env = read_all(fs::path("/proc") / std::to_string(pid) / "environ");
    size_t start = 0;
    while (start < env.size()) {
      auto end = env.find('\0', start);
      if (end == std::string::npos) end = env.size();
      if (env.compare(start, prefix.size(), prefix) == 0) {
        if (process_alive(pid))
          out.emplace_back(pid, env.substr(start + prefix.size(), end - start - prefix.size()));
        break;
      }
      start = end + 1;
    }
  }
  return out;
}

std::vector<pid_t> processes_with_env(const std::string& key, const std::string& value) {
  std::vector<pid_t> out;
  for (const auto& [pid, v] : processes_with_env_key(key))
    if (v == value) out.push_back(pid);
  return out;
}

std::string describe_process(pid_t pid) {
  char state = '?';
  pid_t ppid = 0;
  pid_t pgrp = 0;
  std::string comm;
  std::ostringstream os;
  os << "pid " << pid;
  if (!read_stat(pid, &state, &ppid, &pgrp, &comm)) {
    os << " (gone)";
    return os.str();
  }
  std::string cmdline = read_all(fs::path("/proc") / std::to_string(pid) / "cmdline");
  for (auto& c : cmdline)
    if (c == '\0') c = ' ';
  if (cmdline.size() > 200) cmdline = cmdline.substr(0, 200) + "...";
  os << " (" << comm << ") ppid " << ppid << " pgid " << pgrp << " state " << state << ": "
     << cmdline;
  return os.str();
}

WorkerProcess::WorkerProcess(WorkerOptions options) : options_(std::move(options)) {
  if (options_.name.empty())
    options_.name =
        "worker-s" + std::to_string(options_.slice) + "h" + std::to_string(options_.host);
  own_dir_ = std::make_unique<it::TempDir>("podium-e2e-" + options_.name);
  if (options_.workdir.empty()) options_.workdir = own_dir_->path() / "workdir";
}

WorkerProcess::~WorkerProcess() {
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
                << it::file_tail(p, 30) << "---- end of " << options_.name << " log ----\n";
    }
  }
}

void WorkerProcess::start() {
  spawn();
  wait_registered();
}

void WorkerProcess::spawn() {
  if (child_.pid() > 0) throw std::runtime_error(options_.name + " is already running");
  const fs::path bin = it::binary(options_.binary);
  if (!fs::exists(bin))
    throw std::runtime_error(bin.string() + " does not exist (set PODIUM_BIN_DIR to <build>/bin)");
  std::error_code ec;
  fs::create_directories(options_.workdir, ec);
  ++generation_;
  const fs::path log_path =
      own_dir_->path() / (options_.name + "-" + std::to_string(generation_) + ".log");
  worker_id_.clear();

  std::vector<std::string> args = {bin.string(),
                                   "--server",
                                   options_.server_url,
                                   "--token",
                                   options_.token,
                                   "--cluster",
                                   options_.cluster,
                                   "--slice",
                                   std::to_string(options_.slice),
                                   "--host",
                                   std::to_string(options_.host),
                                   "--workdir",
                                   options_.workdir.string(),
                                   "--address",
                                   options_.address,
                                   "--python",
                                   PODIUM_PYTHON};
  // The agent refuses to start as root without being told whom ranks run as: the tests say
  // "as the account running the tests" unless they ask for another one.
  args.push_back("--run-as");
  args.push_back(options_.run_as.empty() ? current_account() : options_.run_as);
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());

  child_.start(args, options_.env, log_path);
}

void WorkerProcess::wait_registered() {
  if (child_.pid() <= 0) throw std::runtime_error(options_.name + " was not spawned");
  const auto deadline = Clock::now() + options_.ready_timeout;
  for (;;) {
    if (auto id = find_registered_id(log()); !id.empty()) {
      worker_id_ = id;
      return;
    }
    if (!child_.running()) {
      throw std::runtime_error(options_.name + " exited with status " +
                               std::to_string(child_.exit_status()) +
                               " before it registered; log:\n" + log_tail(40));
    }
    if (Clock::now() > deadline) {
      kill();
      throw std::runtime_error(options_.name + " did not print \"" + kRegisteredLine +
                               "...\" within " + std::to_string(options_.ready_timeout.count()) +
                               " ms; log:\n" + log_tail(40));
    }
    std::this_thread::sleep_for(20ms);
  }
}

int WorkerProcess::terminate() {
  return child_.terminate(options_.stop_timeout, options_.name);
}

int WorkerProcess::kill() {
  return child_.kill();
}

bool WorkerProcess::running() {
  return child_.running();
}

std::string WorkerProcess::log() const {
  return child_.log();
}

std::string WorkerProcess::log_tail(int lines) const {
  return child_.log_tail(lines);
}

fs::path WorkerProcess::rank_log_path(const std::string& attempt_id, int rank) const {
  return options_.workdir / "logs" / attempt_id / ("rank-" + std::to_string(rank) + ".log");
}

std::vector<std::string> WorkerProcess::rank_lines(const std::string& attempt_id, int rank) const {
  std::vector<std::string> out;
  const std::string text = read_all(rank_log_path(attempt_id, rank));
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) {
      out.push_back(text.substr(start));  // a last line without its newline
      break;
    }
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace podium::e2e
