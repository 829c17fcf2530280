#include "engine/worker/environment.h"

#include <unistd.h>  // environ (glibc declares it with _GNU_SOURCE, which g++ defines)

#include "engine/process/program_path.h"

namespace podium::worker {

std::vector<std::string> merge_environment(const std::vector<std::string>& base,
                                           const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> merged;
  for (const auto& entry : base) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    // The first occurrence wins, as getenv() sees it.
    merged.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  for (const auto& [name, value] : overrides) {
    if (name.empty() || name.find('=') != std::string::npos) continue;
    merged[name] = value;
  }
  std::vector<std::string> out;
  out.reserve(merged.size());
  for (const auto& [name, value] : merged) out.push_back(name + "=" + value);
  return out;
}

std::vector<std::string> current_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

std::string resolve_executable(const std::string& name, const std::vector<std::string>& env) {
  // The search spawn() itself does for a rank: the same answer for a log line as for exec.
  return process::find_program(name, process::path_of(env, "/usr/local/bin:/usr/bin:/bin"));
}

}  // namespace podium::worker
