#include "engine/worker/environment.h"

#include <sys/stat.h>
#include <unistd.h>

extern char** environ;

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
  if (name.empty() || name.find('/') != std::string::npos) return name;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& entry : env) {
    if (entry.rfind("PATH=", 0) == 0) {
      path = entry.substr(5);
      break;
    }
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";  // an empty PATH element means the current directory
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return name;
}

}  // namespace podium::worker
