#include "tests/integration/support/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "tests/integration/support/env.h"

extern char** environ;

namespace podium::it {

pid_t spawn_logged(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env,
                   const std::filesystem::path& log_path) {
  if (args.empty()) throw std::runtime_error("spawn_logged: no program");
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    if (kv.rfind("PODIUM_", 0) == 0) continue;
    const auto eq = kv.find('=');
    if (eq != std::string::npos && env.count(kv.substr(0, eq))) continue;
    envs.push_back(std::move(kv));
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);

  std::vector<std::string> argv_storage = args;
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);

  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0)
    throw std::runtime_error("cannot create " + log_path.string() + ": " + std::strerror(errno));
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  return pid;
}

int decode_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

LoggedChild::~LoggedChild() {
  if (pid_ > 0) kill();
}

void LoggedChild::start(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env,
                        const std::filesystem::path& log_path) {
  if (pid_ > 0) throw std::runtime_error(args.at(0) + " is already running");
  log_path_ = log_path;
  exit_status_ = -1;
  pid_ = spawn_logged(args, env, log_path);
}

bool LoggedChild::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    pid_ = -1;
    exit_status_ = decode_wait_status(status);
    return false;
  }
  return true;
}

int LoggedChild::reap(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      exit_status_ = r == pid_ ? decode_wait_status(status) : -1;
      pid_ = -1;
      return exit_status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return -2;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void LoggedChild::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

int LoggedChild::kill() {
  if (pid_ <= 0) return exit_status_;
  ::kill(pid_, SIGKILL);
  return reap(std::chrono::seconds(60));
}

int LoggedChild::terminate(std::chrono::milliseconds timeout, const std::string& name) {
  if (pid_ <= 0) return -1;
  signal(SIGTERM);
  const int status = reap(timeout);
  if (status != -2) return status;
  ADD_FAILURE() << name << " did not exit within " << timeout.count()
                << " ms of SIGTERM; killing it\n"
                << log_tail(20);
  return kill();
}

std::string LoggedChild::log() const {
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string LoggedChild::log_tail(int lines) const {
  return file_tail(log_path_, lines);
}

}  // namespace podium::it
