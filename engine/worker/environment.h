#pragma once
// The environment a rank's process gets, and where its program is.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace podium::worker {

// The agent's own environment (`base`, KEY=VALUE entries as in environ) with `overrides` added;
// an override wins over a base entry of the same name. Entries without '=' and overrides with an
// empty or '='-containing name are dropped. The result is sorted by name, one entry per name.
std::vector<std::string> merge_environment(const std::vector<std::string>& base,
                                           const std::map<std::string, std::string>& overrides);

// The process's environment as a list (environ).
std::vector<std::string> current_environment();

// argv[0] as execve needs it: unchanged when it contains '/', else the first executable regular
// file of that name in the PATH found in `env` (default "/usr/local/bin:/usr/bin:/bin"); when
// none exists, the name unchanged (execve then fails with ENOENT, reported as exit 127).
std::string resolve_executable(const std::string& name, const std::vector<std::string>& env);

}  // namespace podium::worker
