#include "tests/integration/support/spawn.h"

#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "engine/process/spawn.h"
#include "tests/integration/support/env.h"

extern char** environ;

namespace podium::it {

namespace {

process::Child start_logged(const std::vector<std::string>& args,
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
  process::Spec spec;
  spec.argv = args;
  spec.env = std::move(envs);
  spec.group = process::Group::own_group;
  spec.in = process::Stdio::null;
  spec.out = spec.err = process::Stdio::file;
  spec.output_file = log_path;
  spec.die_with_parent = true;
  auto spawned = process::spawn(spec);
  if (!spawned.child) throw std::runtime_error(spawned.error);
  return std::move(*spawned.child);
}

}  // namespace

pid_t spawn_logged(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env,
                   const std::filesystem::path& log_path) {
  return start_logged(args, env, log_path).release();
}

int decode_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

LoggedChild::~LoggedChild() { kill(); }

void LoggedChild::start(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env,
                        const std::filesystem::path& log_path) {
  if (child_) throw std::runtime_error(args.at(0) + " is already running");
  log_path_ = log_path;
  exit_status_ = -1;
  child_.emplace(start_logged(args, env, log_path));
}

pid_t LoggedChild::pid() const {
  return child_ ? child_->pid() : -1;
}

bool LoggedChild::running() {
  return reap(std::chrono::milliseconds(0)) == -2;
}

int LoggedChild::reap(std::chrono::milliseconds timeout) {
  if (!child_) return -1;
  const auto status = child_->wait_for(timeout);
  if (!status) return -2;
  exit_status_ = status->shell_code();
  child_.reset();
  return exit_status_;
}

void LoggedChild::signal(int sig) const {
  if (child_) child_->signal(sig);
}

int LoggedChild::kill() {
  if (!child_) return exit_status_;
  signal(SIGKILL);
  return reap(std::chrono::seconds(60));
}

int LoggedChild::terminate(std::chrono::milliseconds timeout, const std::string& name) {
  if (!child_) return -1;
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
