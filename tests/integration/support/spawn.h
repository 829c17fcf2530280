#pragma once
// Starting a Podium binary for a test: its own process group, stdin /dev/null, stdout and stderr
// appended to a log file, killed with SIGKILL when the test binary dies (PR_SET_PDEATHSIG), and an
// environment without the developer's PODIUM_* variables (only those the test sets), so that a
// shell cannot change what a test runs.

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace podium::it {

// args[0] is the executable's path. Throws std::runtime_error when the log cannot be created or
// fork fails; an exec failure shows as exit status 127.
pid_t spawn_logged(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env,
                   const std::filesystem::path& log_path);

}  // namespace podium::it
