#include "tests/support/proc_table.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace podium::it {

namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path proc_file(pid_t pid, const char* name) {
  return fs::path("/proc") / std::to_string(pid) / name;
}

// Fields of /proc/<pid>/stat after the command name: state, ppid, pgrp. false when unreadable.
bool read_stat(pid_t pid, char* state, pid_t* ppid, pid_t* pgrp, std::string* comm = nullptr) {
  const std::string stat = read_all(proc_file(pid, "stat"));
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

// /proc/<pid>/cmdline with its NULs as spaces.
std::string command_line(pid_t pid) {
  std::string cmdline = read_all(proc_file(pid, "cmdline"));
  for (auto& c : cmdline)
    if (c == '\0') c = ' ';
  return cmdline;
}

}  // namespace

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
    const std::string env = read_all(proc_file(pid, "environ"));
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

std::vector<pid_t> processes_matching(const std::string& needle) {
  std::vector<pid_t> out;
  for (pid_t pid : all_pids())
    if (pid != ::getpid() && command_line(pid).find(needle) != std::string::npos)
      out.push_back(pid);
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
  std::string cmdline = command_line(pid);
  if (cmdline.size() > 200) cmdline = cmdline.substr(0, 200) + "...";
  os << " (" << comm << ") ppid " << ppid << " pgid " << pgrp << " state " << state << ": "
     << cmdline;
  return os.str();
}

}  // namespace podium::it
