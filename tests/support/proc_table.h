#pragma once
// What the tests read about live processes from /proc: for "nothing left behind" checks after a
// server, an agent or a rank has been stopped, and for messages that say which process it was.

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace podium::it {

// True when `pid` exists and is not a zombie.
bool process_alive(pid_t pid);
// Live (non-zombie) processes whose process group is `pgid`.
std::vector<pid_t> process_group_members(pid_t pgid);
// Live processes (not this one) whose environment contains the exact entry `key=value`.
std::vector<pid_t> processes_with_env(const std::string& key, const std::string& value);
// Live processes (not this one) with `key` in their environment, and its value.
std::vector<std::pair<pid_t, std::string>> processes_with_env_key(const std::string& key);
// Processes (not this one) whose command line contains `needle` (e.g. a data directory).
std::vector<pid_t> processes_matching(const std::string& needle);
// "pid 123 (python3) ppid 1 pgid 123 state S: /usr/bin/python3 train.py ..." for messages.
std::string describe_process(pid_t pid);

}  // namespace podium::it
